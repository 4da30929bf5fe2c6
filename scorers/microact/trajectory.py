"""``microact_trajectory``: per-sample trajectory and cost of Micro-Act runs.

Reads :class:`~.stores.MicroActStore` (so it only makes sense on samples the
``microact`` solver ran; other samples are an error naming the sample). Per
sample the score value holds: ``turns`` (model-chosen turns, the count
Tables 3-4 report), ``worked_turns`` (Figure 17's executed warm-start turns),
``total_turns`` (both), the count of each action
(``knowledge_gen``, ``reason``, ``decompose``, ``assert``, ``terminate``),
``forced_decompose``, ``invalid_actions``, ``helper_parse_failures``,
``calls``, ``input_tokens``, ``output_tokens``, ``cost`` (USD, see
:func:`microact_trajectory` for the prices) and ``latency`` (seconds).

The metric :func:`trajectory_summary` gives the mean of each key over all
samples (the shape of the cost Tables 3-4: turns, input/output tokens, cost,
time) and, per conflict type, the mean decompose count (Table 5) and the
decompose rate (share of samples with at least one decompose, Figure 5).
"""

from __future__ import annotations

from collections import defaultdict

from inspect_ai.scorer import SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from .stores import MicroActStore

ACTION_KEYS = ("knowledge_gen", "reason", "decompose", "assert", "terminate")
MEAN_KEYS = ("turns", "worked_turns", "total_turns", *ACTION_KEYS, "forced_decompose", "invalid_actions", "helper_parse_failures",
             "calls", "input_tokens", "output_tokens", "cost", "latency")

def cost_usd(input_tokens: float, output_tokens: float, input_price: float, output_price: float) -> float:
    """Cost in USD with prices per million tokens."""
    return (input_tokens * input_price + output_tokens * output_price) / 1_000_000


@metric
def trajectory_summary():
    """Means of every trajectory key, plus Table 5 / Figure 5 by conflict type.

    Empty input gives an empty dict. Keys: ``<key>`` (mean over samples),
    ``decompose[<type>]`` (mean decompose count) and
    ``decompose_rate[<type>]`` (share of samples with >= 1 decompose).
    """

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        values = [s.score.value for s in scores if isinstance(s.score.value, dict)]
        if not values:
            return {}
        out = {k: sum(float(v[k]) for v in values) / len(values) for k in MEAN_KEYS}
        by_type: dict[str, list[float]] = defaultdict(list)
        for s in scores:
            ctype = (s.sample_metadata or {}).get("conflict_type") or "none"
            by_type[ctype].append(float(s.score.value["decompose"]))
        for ctype, counts in sorted(by_type.items()):
            out[f"decompose[{ctype}]"] = sum(counts) / len(counts)
            out[f"decompose_rate[{ctype}]"] = sum(1 for c in counts if c > 0) / len(counts)
        return out

    return compute


def _model_cost(model: str, input_tokens: float, output_tokens: float) -> float:
    """USD for the tokens at ``model``'s list price, priced by
    :meth:`conflict_eval.pricing.PriceTable.usd` (Inspect's model database, which
    holds a run's ``--model-cost-config``, then the packaged price file, then
    genai-prices); NaN when no price is known, a zero price-file entry (a local or
    test model) included: unknown, never 0, as on the leaderboard."""
    from inspect_ai.model import ModelUsage

    from conflict_eval.pricing import packaged

    priced = packaged().usd(model, ModelUsage(input_tokens=round(input_tokens), output_tokens=round(output_tokens)))
    return float("nan") if priced.usd is None else priced.usd


@scorer(metrics=[trajectory_summary()])
def microact_trajectory(
    input_price: float | None = None,
    output_price: float | None = None,
) -> Scorer:
    """Turns, actions, tokens, cost and latency of each Micro-Act sample.

    ``cost`` prices the sample's Micro-Act tokens at the evaluated model's
    rates (the price ladder of conflict_eval.pricing; NaN if
    none knows the model), unless both prices are given here.

    Args:
        input_price: USD per million input tokens (with ``output_price``: overrides the model's price).
        output_price: USD per million output tokens.
    """
    if (input_price is None) != (output_price is None):
        raise ValueError("microact_trajectory: give both input_price and output_price, or neither "
                         "(then the model's own price is used)")
    for name, value in (("input_price", input_price), ("output_price", output_price)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            raise ValueError(f"microact_trajectory: {name} must be a non-negative number, got {value!r}")

    async def score(state: TaskState, target: Target) -> Score:
        store = state.store_as(MicroActStore)
        if store.max_turns == 0:
            raise ValueError(
                f"microact_trajectory: sample {state.sample_id!r} has no Micro-Act state; "
                "use this scorer with the microact method"
            )
        counts = {a: store.action_counts.get(a, 0) for a in ACTION_KEYS}
        value = {
            "turns": store.model_turns,
            "worked_turns": store.worked_turns,
            "total_turns": store.turns_used,
            **counts,
            "forced_decompose": store.forced_decompose_count,
            "invalid_actions": store.invalid_actions,
            "helper_parse_failures": store.helper_parse_failures,
            "calls": store.calls,
            "input_tokens": store.input_tokens,
            "output_tokens": store.output_tokens,
            "cost": cost_usd(store.input_tokens, store.output_tokens, input_price, output_price)
            if input_price is not None else _model_cost(str(state.model), store.input_tokens, store.output_tokens),
            "latency": store.latency_seconds,
        }
        return Score(
            value=value,
            explanation=(f"{store.model_turns} model-chosen turn(s) + {store.worked_turns} worked, "
                         f"stop: {store.stop_reason}; "
                         f"actions {counts}; {store.calls} call(s)"),
            metadata={"ablation": store.ablation, "stop_reason": store.stop_reason,
                      "turns": store.turns},
        )

    return score


__all__ = ["cost_usd", "microact_trajectory", "trajectory_summary"]
