"""``triplet_parsing``: how well Conflict Exposure's extraction and detection replies were read.

Per sample (from :class:`~.store.ConflictExposureStore`, written by the
``conflict_exposure`` method) the value is a dict:

* ``items``: bracketed items in the extraction replies (read + rejected);
* ``rejected``: items not read as a triplet (wrong element count, empty element);
* ``recovered``: items of more than three elements read as (subject, relation,
  the rest) -- "(X, born on, January 22, 1965)";
* ``detection_failure``: 1 if the detection reply could not be read (neither
  triplets nor a "no conflicts" answer);
* ``no_conflicts``: 1 if the detection reply said there are none.

Task metrics: ``rejected_item_rate`` and ``recovered_item_rate`` pooled over
all items of the run (NaN when no item was seen: undefined, not 0), and the
means of ``detection_failure`` and ``no_conflicts``.
"""

from __future__ import annotations

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, mean, metric, scorer
from inspect_ai.solver import TaskState

from .store import ConflictExposureStore


def _pooled(scores: list[SampleScore], key: str) -> float:
    """sum(key) / sum(items) over the samples; NaN when no item was seen.

    >>> from inspect_ai.scorer import SampleScore, Score
    >>> s = [SampleScore(score=Score(value={"items": 4, "rejected": 1})),
    ...      SampleScore(score=Score(value={"items": 6, "rejected": 2}))]
    >>> _pooled(s, "rejected")
    0.3
    """
    values = [s.score.value for s in scores if isinstance(s.score.value, dict)]
    items = sum(v.get("items", 0) for v in values)
    return sum(v.get(key, 0) for v in values) / items if items else float("nan")


@metric
def rejected_item_rate() -> Metric:
    """Share of extracted items that were not read as a triplet (pooled)."""

    def compute(scores: list[SampleScore]) -> float:
        return _pooled(scores, "rejected")

    return compute


@metric
def recovered_item_rate() -> Metric:
    """Share of extracted items read by joining a >3-element object (pooled)."""

    def compute(scores: list[SampleScore]) -> float:
        return _pooled(scores, "recovered")

    return compute


@scorer(metrics=[rejected_item_rate(), recovered_item_rate(),
                 {"detection_failure": [mean()], "no_conflicts": [mean()]}])
def triplet_parsing() -> Scorer:
    """Counts of read, recovered and rejected triplet items per sample."""

    async def score(state: TaskState, target: Target) -> Score:
        store = state.store_as(ConflictExposureStore)
        if not store.expansion:
            raise ValueError(f"sample {state.sample_id}: triplet_parsing needs the conflict_exposure method")
        read = sum(len(t) for t in store.triplets.values())
        rejected = sum(len(r) for r in store.rejected_items.values())
        recovered = sum(len(r) for r in store.recovered_items.values())
        detection_failure = int(store.conflict_reply is not None and store.conflict_parse_failure is not None)
        return Score(
            value={"items": read + rejected, "rejected": rejected, "recovered": recovered,
                   "detection_failure": detection_failure, "no_conflicts": int(store.no_conflicts)},
            explanation=f"{read} triplets read ({recovered} recovered), {rejected} items rejected",
            metadata={"rejected_items": dict(store.rejected_items)},
        )

    return score
