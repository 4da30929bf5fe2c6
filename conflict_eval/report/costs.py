"""Prices: Inspect's recorded cost, ``--model-cost-config`` (Inspect's format),
then the fallback price file (packaged ``prices.yaml`` or ``--prices``).

A zero entry of the fallback price file (local and test models: ``scripted/*``,
``hf/*``, ...) says there is no per-token bill, not what a run cost: the
leaderboard shows such a model's cost as unknown (``n/a``, JSON ``null``),
never ``$0.0000``. A price of 0 given in ``--model-cost-config`` is the
caller's statement and is shown as $0."""

from __future__ import annotations

import fnmatch
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

COST_FIELDS = ("input", "output", "input_cache_write", "input_cache_read")


def _cost_table(data: Any, where: str, *, patterns: bool) -> dict[str, Any]:
    """``{model: {input, output[, input_cache_write, input_cache_read]}}`` -> ModelCost by model."""
    from inspect_ai.model import ModelCost

    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a mapping 'model: {{input: $, output: $}}' (USD per 1M tokens)")
    out = {}
    for model, price in data.items():
        ok = isinstance(price, dict) and {"input", "output"} <= set(price) <= set(COST_FIELDS) and all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in price.values())
        if not ok:
            raise ValueError(f"{where}: model {model!r}: expected {{input: $, output: $}} "
                             f"(optionally input_cache_write, input_cache_read; USD per 1M tokens, >= 0), "
                             f"got {price!r}")
        out[str(model)] = ModelCost(input=float(price["input"]), output=float(price["output"]),
                                    input_cache_write=float(price.get("input_cache_write", price["input"])),
                                    input_cache_read=float(price.get("input_cache_read", price["input"])))
    return out


def load_prices(path: str | Path | None = None) -> dict[str, Any]:
    """The fallback price file: model (glob patterns allowed) -> ``ModelCost``."""
    if path is None:
        text, where = (files("conflict_eval") / "prices.yaml").read_text(encoding="utf-8"), "prices.yaml (packaged)"
    else:
        text, where = Path(path).read_text(encoding="utf-8"), f"price table {path}"
    data = yaml.safe_load(text) or {}
    return _cost_table(data.get("models") if isinstance(data, dict) else None, where, patterns=True)


def load_model_cost_config(path: str | Path) -> dict[str, Any]:
    """Inspect's ``--model-cost-config`` file (YAML or JSON): model -> ``ModelCost``."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    return _cost_table(data, f"model cost config {path}", patterns=False)


def _as_costs(table: dict[str, Any], where: str) -> dict[str, Any]:
    """Accept plain ``{input, output, ...}`` mappings as well as ``ModelCost`` values."""
    if all(not isinstance(v, dict) for v in table.values()):
        return table
    return _cost_table({k: v if isinstance(v, dict) else v.model_dump() for k, v in table.items()}, where,
                       patterns=True)


def price_for(model: str, prices: dict[str, Any]):
    """The exact entry for ``model``, else the first matching glob pattern."""
    if model in prices:
        return prices[model]
    for pattern, price in prices.items():
        if fnmatch.fnmatchcase(model, pattern):
            return price
    return None


def is_zero_price(cost) -> bool:
    """Every field of a ``ModelCost`` is 0 (the fallback file's local and test models)."""
    return all(not getattr(cost, f, 0) for f in COST_FIELDS)


def sample_cost_usd(usage: dict, cost_config: dict, prices: dict) -> tuple[float | None, str | None]:
    """Cost of one sample's ``model_usage`` and where the prices came from;
    ``(None, None)`` when a model has no price (a zero fallback entry included)."""
    from inspect_ai.model import compute_model_cost

    if not usage:
        return None, None
    if all(u.total_cost is not None for u in usage.values()):
        return float(sum(u.total_cost for u in usage.values())), "inspect"
    total, sources = 0.0, set()
    for model, u in usage.items():
        if model in cost_config:
            cost, src = cost_config[model], "model-cost-config"
        else:
            cost, src = price_for(model, prices), "price file"
            if cost is not None and is_zero_price(cost):  # no per-token bill is not a known cost
                cost = None
        if cost is None:
            return None, None
        total += compute_model_cost(cost, u)
        sources.add(src)
    return total, "price file" if "price file" in sources else "model-cost-config"
