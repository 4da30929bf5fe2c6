"""Prices: Inspect's recorded cost, ``--model-cost-config`` (Inspect's format),
then the fallback price file (packaged ``prices.yaml`` or ``--prices``).

A zero entry of the fallback price file (local and test models: ``scripted/*``,
``hf/*``, ...) says there is no per-token bill, not what a run cost: the
leaderboard shows such a model's cost as unknown (``n/a``, JSON ``null``),
never ``$0.0000``. A price of 0 given in ``--model-cost-config`` is the
caller's statement and is shown as $0."""

from __future__ import annotations

import fnmatch
import math
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from conflict_eval.records.config_files import load_json, load_yaml

COST_FIELDS = ("input", "output", "input_cache_write", "input_cache_read")
"""The fields of Inspect's ``ModelCost`` (USD per 1M tokens); all four are required in Inspect's format."""

_GLOB = ("*", "?", "[")


def model_cost(price: Any, where: str, model: str, *, cache_default: bool = False):
    """One price entry as Inspect's ``ModelCost``; a bad entry is a ``ValueError``
    naming ``where`` (the file), the model and the field.

    ``cache_default`` (the fallback price file only): a missing cache price is
    the input price. In Inspect's ``--model-cost-config`` format all four
    fields are required, as ``ModelCost`` requires them.
    """
    from inspect_ai.model import ModelCost

    if isinstance(price, ModelCost):
        return price
    shape = "{" + ", ".join(f"{f}: $" for f in COST_FIELDS) + "} (USD per 1M tokens)"
    if not isinstance(price, dict):
        raise ValueError(f"{where}: model {model!r}: expected a mapping {shape}, got {price!r}")
    unknown = sorted(str(k) for k in price if k not in COST_FIELDS)
    if unknown:
        raise ValueError(f"{where}: model {model!r}: unknown field {unknown[0]!r} (the fields are {', '.join(COST_FIELDS)})")
    if cache_default and "input" in price:
        price = {"input_cache_write": price["input"], "input_cache_read": price["input"], **price}
    for field in COST_FIELDS:
        if field not in price:
            need = ("input and output are required; the cache prices default to input" if cache_default
                    else f"Inspect's ModelCost needs all of {', '.join(COST_FIELDS)}")
            raise ValueError(f"{where}: model {model!r}: field {field!r} is missing ({need})")
        value = price[field]
        if not is_price(value):
            raise ValueError(f"{where}: model {model!r}: field {field!r} must be a finite number >= 0 "
                             f"(USD per 1M tokens), got {value!r}")
    return ModelCost(**{f: float(price[f]) for f in COST_FIELDS})


def is_price(value: Any) -> bool:
    """A price (USD per 1M tokens) is a finite number >= 0: no bool, string, NaN or
    infinity (an infinite price would stop any budget at the first call, a NaN
    one never). The one check of a price, for the cost config and the price file."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _read_config(path: Path, where: str) -> Any:
    """A config file's object, read as Inspect reads ``--model-cost-config``:
    JSON when the text starts with ``{``, else YAML (whatever the file's suffix)."""
    if not path.is_file():
        raise ValueError(f"{where}: no such file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    # errors name the file and line; YAML duplicate keys and alias bombs are refused
    return load_json(text, where) if text.strip().startswith("{") else load_yaml(text, where)


def load_model_cost_config(source: str | Path | dict | None) -> dict[str, Any]:
    """Inspect's ``--model-cost-config`` (a YAML or JSON file, or a mapping):
    model -> ``ModelCost``. The one reader of that format, for the estimate,
    the budget, ``suite run`` and the leaderboard.

    Inspect's rules (``inspect_ai`` reads the file and calls
    ``set_model_cost(model, ModelCost(**entry))`` for each entry): a mapping
    of exact model names to ``{input, output, input_cache_write,
    input_cache_read}``, every field required; JSON when the text starts with
    ``{``, else YAML. No glob patterns (Inspect prices a model by its exact
    name; the fallback price file, ``--prices``, takes patterns). Stricter
    than Inspect where Inspect would take a mistake silently: an unknown
    field, a negative, boolean or quoted price is an error. Every error names
    the file, the model and the field.

    >>> load_model_cost_config({"openai/gpt-4o": {"input": 2.5, "output": 10, "input_cache_write": 2.5,
    ...                                           "input_cache_read": 1.25}})["openai/gpt-4o"].input_cache_read
    1.25
    """
    if source is None:
        return {}
    where = "model cost config" + ("" if isinstance(source, dict) else f" {source}")
    data = source if isinstance(source, dict) else _read_config(Path(source), where)
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a mapping 'model: {{input: $, output: $, input_cache_write: $, "
                         f"input_cache_read: $}}' (USD per 1M tokens), got {type(data).__name__}")
    out = {}
    for model, price in data.items():
        if any(c in str(model) for c in _GLOB):
            raise ValueError(f"{where}: model {model!r}: glob patterns are not Inspect's format (it prices a model "
                             "by its exact name); give each model, or put patterns in a --prices file")
        out[str(model)] = model_cost(price, where, str(model))
    return out


def _price_table(data: Any, where: str) -> dict[str, Any]:
    """The fallback price table's ``models:`` mapping -> ``ModelCost`` by model
    (glob patterns allowed; a missing cache price is the input price)."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a mapping 'models: {{model: {{input: $, output: $}}}}' (USD per 1M tokens)")
    return {str(m): model_cost(p, where, str(m), cache_default=True) for m, p in data.items()}


def load_prices(path: str | Path | None = None) -> dict[str, Any]:
    """The fallback price file: model (glob patterns allowed) -> ``ModelCost``."""
    if path is None:
        text, where = (files("conflict_eval") / "prices.yaml").read_text(encoding="utf-8"), "prices.yaml (packaged)"
        data = yaml.safe_load(text) or {}
    else:
        where = f"price table {path}"
        data = _read_config(Path(path), where) or {}
    return _price_table(data.get("models") if isinstance(data, dict) else None, where)


def as_prices(table: dict[str, Any] | None) -> dict[str, Any]:
    """A price table given as a mapping (``ModelCost`` values or plain ``{input, output}``)."""
    return _price_table(table or {}, "price table")


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
