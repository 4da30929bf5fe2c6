"""The shared NaN-aware metrics (scorers/nan_metrics.py): an undefined value
stays undefined (NaN), never 0; one metric per name across scorers/."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai.scorer import SampleScore, Score

from conflict_eval.scorers.nan_metrics import by_group, defined_mean, is_defined, mean_of, ratio, total, total_of

ROOT = Path(__file__).resolve().parents[2]
NAN = float("nan")


def _ss(value, group=None) -> SampleScore:
    return SampleScore(score=Score(value=value), sample_id=str(id(value)),
                       sample_metadata={} if group is None else {"strategy": group})


def test_by_hand():
    scores = [_ss(1.0, "rag"), _ss(0.0, "rag"), _ss(NAN, "rag"), _ss(True, "balanced"), _ss(NAN, "super")]
    # defined: 1, 0, 1 (True) -> mean 2/3, sum 2; rag 1/2, balanced 1/1, super nothing defined -> NaN (kept)
    assert defined_mean()(scores) == pytest.approx(2 / 3)
    assert total()(scores) == 2.0
    groups = by_group("strategy")(scores)
    assert groups["rag"] == 0.5 and groups["balanced"] == 1.0 and math.isnan(groups["super"])
    assert ratio(3, 4) == 0.75 and total_of([0, 0]) == 0.0  # a count of defined zeros is 0


@pytest.mark.parametrize("values", [[], [NAN], [NAN, NAN], ["C"]])
def test_undefined_stays_nan_never_zero(values):
    scores = [_ss(v) for v in values]
    assert math.isnan(defined_mean()(scores)) and math.isnan(total()(scores))
    assert math.isnan(mean_of(values)) and math.isnan(total_of(values))
    assert all(math.isnan(v) for v in by_group("strategy")(scores).values())
    assert math.isnan(ratio(0, 0)) and not any(is_defined(v) for v in values)


def test_one_definition_per_metric_name():
    """No two @metric functions in scorers/ share a name (Inspect would register one
    over the other), and no scorer keeps its own copy of the 'defined value' test."""
    names, copies = Counter(), []
    for path in (ROOT / "scorers").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        names.update(re.findall(r"^@metric\s*\ndef (\w+)\(", text, re.MULTILINE))
        if path.name != "nan_metrics.py" and re.search(r"def _defined\(", text):
            copies.append(str(path.relative_to(ROOT)))
    assert {"defined_mean", "total", "by_group", "ratio"} <= set(names)
    assert [n for n, c in names.items() if c > 1] == [] and copies == []
