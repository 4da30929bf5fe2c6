"""Reading price files, once, at the edge: Inspect's ``--model-cost-config``,
the fallback price file (packaged ``prices.yaml`` or ``--prices``) and its
``batch:`` discounts. Everything here returns plain typed values
(``ModelCost`` by model, :class:`Discount` by provider); pricing a model is
:mod:`conflict_eval.pricing.table`'s job.

Every error is a ``ValueError`` naming the file, the model (or provider) and
the field. A price must be a finite number >= 0: ``.inf`` and ``.nan`` (both
valid YAML) are refused here, so no later sum is infinite or NaN.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from conflict_eval.records.config_files import load_yaml, read_config

COST_FIELDS = ("input", "output", "input_cache_write", "input_cache_read")
"""The fields of Inspect's ``ModelCost`` (USD per 1M tokens); all four are required in Inspect's format."""

PACKAGED = "prices.yaml (packaged)"
_GLOB = ("*", "?", "[")


@dataclass(frozen=True)
class Discount:
    """A provider's batch discount: ``discount`` is the fraction taken off every token price."""

    discount: float
    source: str


def _price_value(value: Any, where: str, model: str, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{where}: model {model!r}: field {field!r} must be a finite number >= 0 "
                         f"(USD per 1M tokens), got {value!r}")
    return float(value)


def model_cost(price: Any, where: str, model: str, *, cache_default: bool = False):
    """One price entry as Inspect's ``ModelCost``; a bad entry is a ``ValueError``
    naming ``where`` (the file), the model and the field.

    ``cache_default`` (the fallback price file only): a missing cache price is
    the input price. In Inspect's ``--model-cost-config`` format all four
    fields are required, as ``ModelCost`` requires them.

    >>> model_cost({"input": 1, "output": 2}, "f.yaml", "m", cache_default=True).input_cache_read
    1.0
    >>> model_cost({"input": float("inf"), "output": 2}, "f.yaml", "m", cache_default=True)
    Traceback (most recent call last):
    ...
    ValueError: f.yaml: model 'm': field 'input' must be a finite number >= 0 (USD per 1M tokens), got inf
    """
    from inspect_ai.model import ModelCost

    if isinstance(price, ModelCost):
        return ModelCost(**{f: _price_value(getattr(price, f), where, model, f) for f in COST_FIELDS})
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
    return ModelCost(**{f: _price_value(price[f], where, model, f) for f in COST_FIELDS})


def load_model_cost_config(source: str | Path | dict | None) -> dict[str, Any]:
    """Inspect's ``--model-cost-config`` (a YAML or JSON file, or a mapping):
    model -> ``ModelCost``. The one reader of that format.

    Inspect's rules (``inspect_ai`` reads the file and calls
    ``set_model_cost(model, ModelCost(**entry))`` for each entry): a mapping
    of exact model names to ``{input, output, input_cache_write,
    input_cache_read}``, every field required; JSON when the text starts with
    ``{``, else YAML. No glob patterns (Inspect prices a model by its exact
    name; the fallback price file, ``--prices``, takes patterns). Stricter
    than Inspect where Inspect would take a mistake silently: an unknown
    field, a negative, infinite, NaN, boolean or quoted price is an error.
    Every error names the file, the model and the field.

    >>> load_model_cost_config({"openai/gpt-4o": {"input": 2.5, "output": 10, "input_cache_write": 2.5,
    ...                                           "input_cache_read": 1.25}})["openai/gpt-4o"].input_cache_read
    1.25
    """
    if source is None:
        return {}
    where = "model cost config" + ("" if isinstance(source, dict) else f" {source}")
    data = source if isinstance(source, dict) else read_config(source, where)
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


def price_file_models(data: Any, where: str) -> dict[str, Any]:
    """A price file's ``models:`` mapping -> ``ModelCost`` by model (glob patterns
    allowed; a missing cache price is the input price)."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a mapping 'models: {{model: {{input: $, output: $}}}}' (USD per 1M tokens)")
    return {str(m): model_cost(p, where, str(m), cache_default=True) for m, p in data.items()}


def batch_discounts(data: Any, where: str) -> dict[str, Discount]:
    """A price file's ``batch:`` section -> :class:`Discount` by provider."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{where}: 'batch' must map provider -> {{discount: 0..1, source: text}}")
    out = {}
    for provider, entry in data.items():
        d = entry.get("discount") if isinstance(entry, dict) else None
        if isinstance(d, bool) or not isinstance(d, int | float) or not 0 <= d < 1:
            raise ValueError(f"{where}: batch.{provider}.discount must be a number in [0, 1), got {d!r}")
        if not isinstance(entry.get("source"), str) or not entry["source"].strip():
            raise ValueError(f"{where}: batch.{provider}.source must say where the discount is published")
        out[str(provider)] = Discount(float(d), entry["source"])
    return out


def read_price_file(source: str | Path | dict | None = None) -> tuple[dict[str, Any], dict[str, Discount], str]:
    """``(models, batch discounts, where)`` of a price file: ``None`` is the packaged
    ``prices.yaml``; a mapping is a ``models:`` table given in code (no ``batch:``:
    the packaged discounts apply)."""
    if isinstance(source, dict):
        packaged = read_price_file(None)
        return price_file_models(source, "price table"), packaged[1], "price table"
    if source is None:
        where = PACKAGED
        data = load_yaml((files("conflict_eval.pricing") / "prices.yaml").read_text(encoding="utf-8"), where) or {}
    else:
        where = f"price table {source}"
        data = read_config(source, where) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected 'models:' (and optionally 'batch:') at the top")
    unknown = sorted(set(map(str, data)) - {"models", "batch"})
    if unknown:
        raise ValueError(f"{where}: unknown section {unknown[0]!r} (the sections are models, batch)")
    models = price_file_models(data.get("models"), where)
    if "batch" in data:
        discounts = batch_discounts(data.get("batch"), where)
    else:  # a --prices file without a batch: section keeps the packaged discounts
        discounts = {} if source is None else read_price_file(None)[1]
    return models, discounts, where


def price_for(model: str, prices: dict[str, Any]):
    """The exact entry for ``model``, else the first matching glob pattern.

    >>> price_for("hf/x", {"hf/*": 1, "hf/x": 2}), price_for("hf/y", {"hf/*": 1}), price_for("a/b", {})
    (2, 1, None)
    """
    if model in prices:
        return prices[model]
    for pattern, price in prices.items():
        if fnmatch.fnmatchcase(model, pattern):
            return price
    return None


def is_zero_price(cost) -> bool:
    """Every field of a ``ModelCost`` is 0 (the fallback file's local and test models)."""
    return all(not getattr(cost, f, 0) for f in COST_FIELDS)
