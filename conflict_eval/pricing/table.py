"""The one place a model gets a price: :class:`PriceTable`.

A table is built once, at the edge (the command line, ``run_suite``, a plan,
the leaderboard's entry point), from the cost config and the price file, and
handed down. :meth:`PriceTable.usd` is the one function that prices a
model's usage; the estimate, the suite budget and the leaderboard all call
it, so they cannot price one model differently. The ladder, first match wins:

1. **recorded**: Inspect's own ``total_cost`` of the usage (a log's sample or
   header; Inspect priced it at run time from the cost config or its model
   database). An estimate has no recorded cost and starts at 2.
2. **model-cost-config**: ``--model-cost-config`` / a suite's ``eval:
   model_cost_config`` (Inspect's format, exact model names).
3. **inspect database**: Inspect's model database (``get_model_info(model).cost``),
   which holds what ``set_model_info`` registered. Not asked for a local model
   (:data:`LOCAL_PROVIDERS`): the database lists none, and for a name it lacks
   Inspect builds the provider to canonicalise it, which for a local provider
   loads the model (the leaderboard of an ``hf/`` model would load its weights
   to learn it has no price). A local model's price is given by rung 2. For
   other names the lookup's output (Inspect prints its hooks banner when it
   first builds a provider) goes to stderr, so a command's stdout stays its own.
4. **price file**: ``--prices FILE`` or the packaged ``prices.yaml`` (glob
   patterns; the local and test models at 0).
5. **genai-prices**: the maintained price table of the ``genai-prices``
   package (offline snapshot; list prices, a tiered price at its first tier,
   the toolkit's prompts being far below any tier threshold).

A zero price from the price file is no per-token bill, not a known cost: a
budget accepts the model, but its dollars are unknown (``None``, shown
``n/a``). A zero price given in the cost config is the caller's statement: $0.

Batch: ``batched=True`` prices a call sent through a provider's batch API at
the list price times ``1 - discount`` (the price file's ``batch:`` section,
one sourced discount per provider). A provider with a batch API but no
sourced discount gives ``None`` (``upper_bound=True``: the list price, what a
budget counts so it never counts less than was spent). Inspect records
batched calls at the list price, so the discount applies to rung 1 too.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .batch import BATCH_PROVIDERS, batched as goes_batched
from .config import Discount, is_zero_price, load_model_cost_config, price_for, read_price_file

# Providers whose model runs on this machine (no per-token bill; building one loads the model)
LOCAL_PROVIDERS = ("conflict_eval", "hf", "llama-cpp-python", "vllm", "sglang", "ollama", "transformer_lens")

# Inspect provider -> genai-prices provider id, where the two names differ
_GENAI_PROVIDERS = {"grok": "x-ai", "bedrock": "aws"}


@dataclass(frozen=True)
class Price:
    """A model's per-token price (``ModelCost``, USD per 1M tokens) and the rung it came from."""

    cost: Any = None
    source: str | None = None

    @property
    def no_bill(self) -> bool:
        """A zero entry of the price file: no per-token bill, so no known cost."""
        return self.source == "price file" and self.cost is not None and is_zero_price(self.cost)


@dataclass(frozen=True)
class Priced:
    """Dollars of some usage (``None``: unknown) and where the price came from."""

    usd: float | None
    source: str | None


@dataclass(frozen=True)
class PriceTable:
    """The cost config and the price file, parsed (see the module docstring)."""

    config: dict[str, Any] = field(default_factory=dict)  # model -> ModelCost (exact names)
    file: dict[str, Any] = field(default_factory=dict)  # pattern -> ModelCost
    discounts: dict[str, Discount] = field(default_factory=dict)  # provider -> batch discount
    file_name: str = "prices.yaml (packaged)"

    @classmethod
    def load(cls, cost_config: str | Path | dict | None = None,
             prices: str | Path | dict | None = None) -> PriceTable:
        """Parse the cost config (Inspect's format: a file or a mapping) and the price
        file (``None``: the packaged ``prices.yaml``; a mapping: a ``models:`` table)."""
        if cost_config is None and prices is None:
            return packaged()
        models, discounts, where = read_price_file(prices)
        return cls(load_model_cost_config(cost_config), models, discounts, where)

    @classmethod
    def of(cls, value: PriceTable | str | Path | dict | None) -> PriceTable:
        """``value`` when it is a table already, else :meth:`load` of it as a cost config."""
        return value if isinstance(value, PriceTable) else cls.load(value)

    def price(self, model: str) -> Price:
        """Rungs 2-5 of the ladder: ``Price(None, None)`` when none knows ``model``."""
        from inspect_ai.model import get_model_info

        if model in self.config:
            return Price(self.config[model], "model-cost-config")
        info = None
        if model.split("/", 1)[0] not in LOCAL_PROVIDERS:
            with contextlib.redirect_stdout(sys.stderr):  # Inspect's banner, if it builds the provider
                info = get_model_info(model)
        if info is not None and info.cost is not None:
            return Price(info.cost, "inspect database")
        found = price_for(model, self.file)
        if found is not None:
            return Price(found, "price file")
        found = genai_price(model)
        return Price(found, "genai-prices") if found is not None else Price()

    def batch_fraction(self, model: str) -> tuple[float | None, str]:
        """``(fraction of the list price, source)`` a batched call of ``model`` pays;
        ``None`` where Inspect has no batch API for the provider or no discount is sourced."""
        provider = model.split("/", 1)[0]
        if provider not in BATCH_PROVIDERS:
            return None, f"Inspect has no batch API for provider {provider}: runs live"
        entry = self.discounts.get(provider)
        if entry is None:
            return None, f"no published batch discount for provider {provider} ({self.file_name} `batch:`): n/a"
        return 1.0 - entry.discount, entry.source

    def batch_usd(self, model: str, list_usd: float | None, batch: Any, *, upper_bound: bool = False) -> float | None:
        """What calls that cost ``list_usd`` at list price cost when sent with
        ``GenerateConfig.batch`` = ``batch`` (list price when they run live)."""
        if list_usd is None or not goes_batched(model, batch):
            return list_usd
        fraction, _ = self.batch_fraction(model)
        if fraction is None:
            return list_usd if upper_bound else None
        return list_usd * fraction

    def usd(self, model: str, usage, *, batched: bool = False, upper_bound: bool = False) -> Priced:
        """The dollars of one model's ``ModelUsage``: the ladder, then the batch discount
        when ``batched`` (sent with batch on; a provider without a batch API runs live)."""
        from inspect_ai.model import compute_model_cost

        if usage.total_cost is not None:
            list_usd, source = float(usage.total_cost), "inspect"
        else:
            price = self.price(model)
            if price.cost is None or price.no_bill:
                return Priced(None, None)
            list_usd, source = compute_model_cost(price.cost, usage), price.source
        if not goes_batched(model, batched):  # batch off, or a provider with no batch API: live
            return Priced(list_usd, source)
        fraction, _ = self.batch_fraction(model)
        if fraction is None:
            return Priced(list_usd if upper_bound else None, f"{source}, batch n/a")
        return Priced(list_usd * fraction, f"{source}, batch x{fraction:g}")

    def usage_usd(self, usage: dict[str, Any], batched: set[str] | list[str] = ()) -> Priced:
        """The dollars of a ``{model: ModelUsage}`` (a sample's or a header's): the sum of
        :meth:`usd` per model, ``None`` when one model is unpriced."""
        if not usage:
            return Priced(None, None)
        parts = [self.usd(m, u, batched=m in batched) for m, u in usage.items()]
        if any(p.usd is None for p in parts):
            return Priced(None, None)
        return Priced(sum(p.usd for p in parts), " + ".join(dict.fromkeys(p.source for p in parts)))

    def register_with_inspect(self) -> dict[str, Any]:
        """The cost config as Inspect's ``model_cost_config`` (``{model: ModelCost}``), with
        every model Inspect's database does not know registered first (``set_model_info``),
        so that Inspect accepts its price and records ``total_cost`` for it."""
        from inspect_ai.model import ModelInfo, get_model_info, set_model_info

        for model, cost in self.config.items():
            if get_model_info(model) is None:
                set_model_info(model, ModelInfo(cost=cost))
        return dict(self.config)


@functools.lru_cache(maxsize=1)
def packaged() -> PriceTable:
    """The table of no cost config and the packaged ``prices.yaml`` (read once per process)."""
    models, discounts, where = read_price_file(None)
    return PriceTable({}, models, discounts, where)


@functools.lru_cache(maxsize=256)
def genai_price(model: str):
    """Rung 5: ``model``'s list price in genai-prices' offline snapshot as a ``ModelCost``
    (a missing cache price is the input price), or ``None`` when it does not know the
    provider or the model."""
    import genai_prices
    from inspect_ai.model import ModelCost

    provider, _, name = model.partition("/")
    if not name:
        return None
    try:
        calc = genai_prices.calc_price(genai_prices.Usage(input_tokens=1, output_tokens=1), name,
                                       provider_id=_GENAI_PROVIDERS.get(provider, provider))
    except LookupError:
        return None
    per = vars(calc.model_price)

    def mtok(key: str) -> float | None:
        value = per.get(key)
        value = getattr(value, "base", value)  # a tiered price: its first tier
        return None if value is None else float(value)

    if mtok("input_mtok") is None or mtok("output_mtok") is None:
        return None
    inp = mtok("input_mtok")
    return ModelCost(input=inp, output=mtok("output_mtok"),
                     input_cache_write=mtok("cache_write_mtok") if mtok("cache_write_mtok") is not None else inp,
                     input_cache_read=mtok("cache_read_mtok") if mtok("cache_read_mtok") is not None else inp)
