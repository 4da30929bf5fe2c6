"""Batch prices: the discount a provider's batch API takes off its list prices.

The discounts live in the ``batch:`` section of the packaged price file
(``conflict_eval/prices.yaml``, or a ``--prices FILE`` of the same format),
one entry per provider: ``{discount: 0.5, source: "..."}``. Inspect prices a
call at the list price whether it went through a batch or not, so every
figure here is the list cost times ``1 - discount``:

    >>> round(batch_factor("openai/gpt-4o-mini")[0], 2)
    0.5
    >>> batch_factor("vllm/some-model")
    (1.0, 'Inspect has no batch API for provider vllm: runs live')
"""

from __future__ import annotations

import functools
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

# the providers whose Inspect model API has a batcher (inspect_ai 0.3.285:
# GenerateConfig.batch is ignored by every other provider)
BATCH_PROVIDERS = ("openai", "anthropic", "google", "together", "grok")


@functools.lru_cache(maxsize=4)
def load_batch_discounts(path: str | None = None) -> dict[str, dict[str, Any]]:
    """``{provider: {"discount": float, "source": str}}`` from the price file's ``batch:`` section."""
    if path is None:
        text, where = (files("conflict_eval") / "prices.yaml").read_text(encoding="utf-8"), "prices.yaml (packaged)"
    else:
        text, where = Path(path).read_text(encoding="utf-8"), f"price table {path}"
    data = (yaml.safe_load(text) or {}).get("batch") or {}
    if not isinstance(data, dict):
        raise ValueError(f"{where}: 'batch' must map provider -> {{discount: 0..1, source: text}}")
    out = {}
    for provider, entry in data.items():
        d = entry.get("discount") if isinstance(entry, dict) else None
        if isinstance(d, bool) or not isinstance(d, int | float) or not 0 <= d < 1:
            raise ValueError(f"{where}: batch.{provider}.discount must be a number in [0, 1), got {d!r}")
        out[str(provider)] = {"discount": float(d), "source": str(entry.get("source") or where)}
    return out


def batch_on(batch: Any) -> bool:
    """Whether a ``GenerateConfig.batch`` value (as a log or suite records it) turns batching on."""
    if isinstance(batch, dict):
        return True
    if hasattr(batch, "model_dump"):  # a BatchConfig
        return True
    return bool(batch)


def batch_factor(model: str, prices_path: str | None = None) -> tuple[float, str]:
    """``(factor, source)``: what a batched call of ``model`` costs as a fraction of its list price."""
    provider = model.split("/", 1)[0]
    if provider not in BATCH_PROVIDERS:
        return 1.0, f"Inspect has no batch API for provider {provider}: runs live"
    entry = load_batch_discounts(prices_path).get(provider)
    if entry is None:
        return 1.0, f"no batch discount known for provider {provider}"
    return 1.0 - entry["discount"], entry["source"]


def batched(model: str, batch: Any) -> bool:
    """Whether calls of ``model`` with this batch setting go through a batch API."""
    return batch_on(batch) and model.split("/", 1)[0] in BATCH_PROVIDERS
