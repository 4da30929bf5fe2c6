"""Batch prices, and whether a call went through a batch API: one home for each rule.

* :func:`batch_price` is **the** price of calls sent with a ``GenerateConfig.batch``
  setting: their list price when they run live (batch off, or a provider Inspect
  has no batcher for), the list price times the provider's batch price when
  batched, and ``None`` (shown ``n/a``) when batched for a provider whose batch
  discount no public source gives. The estimate, the plan, the suite budget and
  the leaderboard's ``$`` all call it.
* :func:`batched_models` is **the** rule for which models of a log ran batched,
  read from the log (the page and the budget both use it).

The discounts live in the ``batch:`` section of the packaged price file
(``conflict_eval/prices.yaml``), one entry per provider: ``{discount: 0.5,
source: "..."}``. Inspect prices a call at the list price whether it went
through a batch or not:

    >>> batch_price("openai/gpt-4o-mini", 2.0, True)
    1.0
    >>> batch_price("openai/gpt-4o-mini", 2.0, False)
    2.0
    >>> batch_price("vllm/some-model", 2.0, True)  # no batch API: runs live
    2.0
    >>> batch_price("grok/grok-3", 2.0, True) is None  # a batch API, but no sourced discount
    True
"""

from __future__ import annotations

import functools
from importlib.resources import files
from pathlib import Path
from typing import Any

from conflict_eval.records.config_files import load_yaml

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
    data = (load_yaml(text, where) or {}).get("batch") or {}  # errors name the file and line
    if not isinstance(data, dict):
        raise ValueError(f"{where}: 'batch' must map provider -> {{discount: 0..1, source: text}}")
    out = {}
    for provider, entry in data.items():
        d = entry.get("discount") if isinstance(entry, dict) else None
        if isinstance(d, bool) or not isinstance(d, int | float) or not 0 <= d < 1:
            raise ValueError(f"{where}: batch.{provider}.discount must be a number in [0, 1), got {d!r}")
        if not isinstance(entry.get("source"), str) or not entry["source"].strip():
            raise ValueError(f"{where}: batch.{provider}.source must say where the discount is published")
        out[str(provider)] = {"discount": float(d), "source": entry["source"]}
    return out


def batch_on(batch: Any) -> bool:
    """Whether a ``GenerateConfig.batch`` value (as a log or suite records it) turns batching on."""
    if isinstance(batch, dict):
        return True
    if hasattr(batch, "model_dump"):  # a BatchConfig
        return True
    return bool(batch)


def batched(model: str, batch: Any) -> bool:
    """Whether calls of ``model`` with this batch setting go through a batch API."""
    return batch_on(batch) and model.split("/", 1)[0] in BATCH_PROVIDERS


def batch_discount(model: str) -> tuple[float | None, str]:
    """``(fraction of the list price, source)`` a batched call of ``model`` pays;
    the fraction is ``None`` where Inspect has no batch API for the provider or
    ``prices.yaml`` gives no sourced discount for it."""
    provider = model.split("/", 1)[0]
    if provider not in BATCH_PROVIDERS:
        return None, f"Inspect has no batch API for provider {provider}: runs live"
    entry = load_batch_discounts().get(provider)
    if entry is None:
        return None, f"no published batch discount for provider {provider} (prices.yaml `batch:`): n/a"
    return 1.0 - entry["discount"], entry["source"]


def batch_price(model: str, list_usd: float | None, batch: Any, *, upper_bound: bool = False) -> float | None:
    """What calls of ``model`` that cost ``list_usd`` at list price cost when sent with
    ``GenerateConfig.batch`` = ``batch`` (see the module docstring). ``upper_bound``:
    where the batch discount is unknown, the list price (what the budget counts, so
    it never counts less than was spent) instead of ``None``."""
    if list_usd is None or not batched(model, batch):
        return list_usd
    fraction, _ = batch_discount(model)
    if fraction is None:
        return list_usd if upper_bound else None
    return list_usd * fraction


def log_batch(log) -> Any:
    """The ``GenerateConfig.batch`` the log's model ran with. Inspect merges the eval's
    generate config (``plan.config``: ``inspect eval --batch``) over the model's own
    (``eval.model_generate_config``: a suite's ``batch:``), so the first wins when set."""
    plan = log.plan.config.batch if log.plan is not None and log.plan.config is not None else None
    if plan is not None:
        return plan
    own = log.eval.model_generate_config
    return own.batch if own is not None else None


def batched_models(log) -> list[str]:
    """The models whose calls in this log (a header suffices) went through a batch API:
    the evaluated model by :func:`log_batch`, and a role model (e.g. a grader) by its
    own config's ``batch`` (Inspect does not pass the eval's batch on to roles)."""
    out = {log.eval.model} if batched(log.eval.model, log_batch(log)) else set()
    for role in (log.eval.model_roles or {}).values():
        for mc in role if isinstance(role, list) else [role]:
            if mc.config is not None and batched(mc.model, mc.config.batch):
                out.add(mc.model)
    return sorted(out)
