"""Whether a call goes through a batch API: one home for the rule.

* :func:`batched` says whether calls of a model with a ``GenerateConfig.batch``
  setting go through a provider's batch API (Inspect 0.3.285 has a batcher for
  :data:`BATCH_PROVIDERS` only and ignores the setting elsewhere: those run live).
* :func:`batched_models` reads which models of a log ran batched (the page and
  the budget both use it).

What a batched call costs is :meth:`conflict_eval.pricing.PriceTable.usd`
(``batched=True``), from the provider discounts of the price file's ``batch:``.

    >>> batched("openai/gpt-4o-mini", True), batched("vllm/some-model", True), batched("openai/x", False)
    (True, False, False)
"""

from __future__ import annotations

from typing import Any

# the providers whose Inspect model API has a batcher (inspect_ai 0.3.285:
# GenerateConfig.batch is ignored by every other provider)
BATCH_PROVIDERS = ("openai", "anthropic", "google", "together", "grok")


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
