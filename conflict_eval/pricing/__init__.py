"""Prices: one room below ``runs/`` and ``report/``.

* :mod:`.config` reads the files once, at the edge: Inspect's
  ``--model-cost-config``, the fallback price file (``prices.yaml`` here, or
  ``--prices``) and its ``batch:`` discounts;
* :mod:`.table` holds :class:`PriceTable`, whose :meth:`PriceTable.usd` is the
  one function that prices a model (the ladder is in its module docstring);
* :mod:`.batch` says which calls go through a batch API.

Imports nothing of the core above it (only Inspect, ``yaml`` and ``genai-prices``).
"""

from .batch import BATCH_PROVIDERS, batch_on, batched, batched_models, log_batch
from .config import COST_FIELDS, Discount, load_model_cost_config, model_cost, price_for
from .table import LOCAL_PROVIDERS, Price, Priced, PriceTable, genai_price, packaged

__all__ = ["BATCH_PROVIDERS", "COST_FIELDS", "LOCAL_PROVIDERS", "Discount", "Price", "PriceTable", "Priced", "batch_on", "batched",
           "batched_models", "genai_price", "load_model_cost_config", "log_batch", "model_cost", "packaged",
           "price_for"]
