"""The NaN-aware metrics every scorer shares: an undefined value stays undefined.

A sample's score value (or one key of it) is *defined* when it is a number
that is not NaN (``True``/``False`` count as 1/0, as in Inspect's own
metrics); NaN is Inspect's "unscored" marker, used by the scorers here for a
value that does not exist (ConflictScore with no claim, an over-rationalization
verdict that could not be read). Over the defined values only:

* :func:`defined_mean` -- their mean;
* :func:`total` -- their sum (a count of 0/1 flags: parse failures, undefined
  samples, truncated decompositions; or a sum such as documents);
* :func:`by_group` -- :func:`defined_mean` per value of a sample metadata key.

Each is **NaN, never 0, when no value is defined**: a mean of nothing, and a
count where nothing was counted, are undefined. The plain functions
(:func:`is_defined`, :func:`mean_of`, :func:`total_of`, :func:`ratio`) serve a
paper's own metric (Micro-Act's over-rationalization ratio, RAMDocs' means,
ConflictBench's Table 2 ratios).

One name per metric: ``total`` is the sum (Micro-Act's ``count`` was the same
metric under another name and is gone; the registered name in a log is
``total``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from inspect_ai.scorer import Metric, SampleScore, metric

NAN = float("nan")

__all__ = ["NAN", "by_group", "defined_mean", "grouped", "is_defined", "mean_of", "ratio", "total", "total_of"]


def is_defined(value) -> bool:
    """A number that is not NaN (a bool is one: 1/0).

    >>> [is_defined(v) for v in (0, 1.5, True, float("nan"), None, "C")]
    [True, True, True, False, False, False]
    """
    return isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value))


def mean_of(values: Iterable) -> float:
    """The mean of the defined values; NaN when there is none (never 0).

    >>> mean_of([1, 0, float("nan"), 1])  # 2 of 3 defined values
    0.6666666666666666
    >>> mean_of([float("nan")])
    nan
    """
    defined = [float(v) for v in values if is_defined(v)]
    return sum(defined) / len(defined) if defined else NAN


def total_of(values: Iterable) -> float:
    """The sum of the defined values; NaN when there is none (nothing was counted).

    >>> total_of([1, 0, float("nan"), 1]), total_of([0, 0])
    (2.0, 0.0)
    >>> total_of([float("nan")])
    nan
    """
    defined = [float(v) for v in values if is_defined(v)]
    return float(sum(defined)) if defined else NAN


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``; NaN (undefined, never 0) when the denominator is 0.

    >>> ratio(1, 4), ratio(0, 0)
    (0.25, nan)
    """
    return numerator / denominator if denominator else NAN


def grouped(scores: list[SampleScore], key: str, missing: str = "none") -> dict[str, list]:
    """Score values by sample metadata ``key`` (``missing`` where a sample has none), groups sorted."""
    groups: dict[str, list] = {}
    for s in scores:
        value = (s.sample_metadata or {}).get(key)
        groups.setdefault(missing if value is None else str(value), []).append(s.score.value)
    return dict(sorted(groups.items()))


@metric
def defined_mean() -> Metric:
    """Mean over samples whose value is defined (NaN if there are none)."""

    def compute(scores: list[SampleScore]) -> float:
        return mean_of(s.score.value for s in scores)

    return compute


@metric
def total() -> Metric:
    """Sum over samples whose value is defined (NaN if there are none), e.g. the
    number of samples with an undefined score or a parse failure."""

    def compute(scores: list[SampleScore]) -> float:
        return total_of(s.score.value for s in scores)

    return compute


@metric
def by_group(key: str) -> Metric:
    """:func:`defined_mean` per value of sample metadata ``key``; a group with no
    defined value is NaN (kept, not dropped)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return {g: mean_of(v) for g, v in grouped(scores, key).items()}

    return compute
