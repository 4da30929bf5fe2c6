"""Cost accounting: model calls and tokens per sample, from Inspect logs.

Every method is measured the same way, without instrumenting its code: the
number of ``ModelEvent``s in a sample's transcript is its number of LLM
calls (grader calls of model-graded scorers included, reported apart by
role), and ``sample.model_usage`` gives its tokens.  ``cached_input_tokens``
are the input tokens a provider served from a prompt cache
(``input_tokens_cache_read``; the offline provider's prefix cache reports
them): they are part of ``input_tokens``, not in addition to them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from statistics import mean
from typing import Any


@dataclass(frozen=True)
class SampleCost:
    sample_id: str
    calls: int
    input_tokens: int
    output_tokens: int
    total_tokens: int
    calls_by_role: dict[str, int]
    seconds: float | None
    cached_input_tokens: int = 0


def sample_cost(sample) -> SampleCost:
    """Calls and tokens of one ``EvalSample`` (read with ``read_eval_log``)."""
    from inspect_ai.event import ModelEvent

    calls: dict[str, int] = {}
    for event in sample.events or []:
        if isinstance(event, ModelEvent):
            role = event.role or "model"
            calls[role] = calls.get(role, 0) + 1
    usage = list((sample.model_usage or {}).values())
    return SampleCost(
        sample_id=str(sample.id),
        calls=sum(calls.values()),
        input_tokens=sum(u.input_tokens for u in usage),
        output_tokens=sum(u.output_tokens for u in usage),
        total_tokens=sum(u.total_tokens for u in usage),
        calls_by_role=calls,
        seconds=sample.total_time,
        cached_input_tokens=sum(u.input_tokens_cache_read or 0 for u in usage),
    )


def log_costs(log) -> list[SampleCost]:
    """Per-sample costs of an ``EvalLog`` (with samples)."""
    return [sample_cost(s) for s in log.samples or []]


def summarise(costs: list[SampleCost]) -> dict[str, Any]:
    """Mean calls and tokens per sample (empty input -> zeros and n=0)."""
    if not costs:
        return {"n": 0, "calls": 0.0, "input_tokens": 0.0, "output_tokens": 0.0,
                "total_tokens": 0.0, "cached_input_tokens": 0.0}
    return {
        "n": len(costs),
        "calls": mean(c.calls for c in costs),
        "input_tokens": mean(c.input_tokens for c in costs),
        "output_tokens": mean(c.output_tokens for c in costs),
        "total_tokens": mean(c.total_tokens for c in costs),
        "cached_input_tokens": mean(c.cached_input_tokens for c in costs),
        "seconds": mean(c.seconds for c in costs if c.seconds is not None)
        if any(c.seconds is not None for c in costs) else None,
    }


def to_rows(costs: list[SampleCost]) -> list[dict[str, Any]]:
    return [asdict(c) for c in costs]
