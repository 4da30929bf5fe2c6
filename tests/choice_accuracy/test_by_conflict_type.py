"""choice_accuracy broken down by conflict type; golden values by hand."""

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.plugins.demo.dataset import demo
from conflict_eval.testing import scripted_model


def test_metrics_by_conflict_type(log_dir):
    # demo: 5 items each of misinformation, temporal, semantic, none (conflict-free).
    # Replies chosen per type:
    #   misinformation: the conflict option for all 5  -> acc 0/5, misled 5/5, pf 0/5
    #   temporal: gold for the first 3, unparseable 2  -> acc 3/5 = 0.6, misled 0, pf 2/5 = 0.4
    #   semantic: gold for the first 1, conflict 4      -> acc 1/5 = 0.2, misled 4/5 = 0.8, pf 0
    #   none: gold for all 5                            -> acc 5/5 = 1.0, misled 0 (no conflict option), pf 0
    # overall: acc (0+3+1+5)/20 = 0.45, misled (5+0+4+0)/20 = 0.45, pf 2/20 = 0.1
    samples = list(demo())
    replies, seen = {}, {}
    for s in samples:
        kind = s.metadata["conflict_type"]
        i = seen[kind] = seen.get(kind, 0) + 1
        gold, conflict = s.target, s.metadata["conflict_option"]
        if kind == "misinformation":
            replies[s.input] = f"{conflict}</a>"
        elif kind == "temporal":
            replies[s.input] = f"{gold}</a>" if i <= 3 else "no idea"
        elif kind == "semantic":
            replies[s.input] = f"{gold}</a>" if i <= 1 else f"{conflict}</a>"
        else:
            replies[s.input] = f"{gold}</a>"

    def reply(prompt):
        return next(r for q, r in replies.items() if f"Question: {q}\n" in prompt)

    [log] = inspect_eval("conflict_eval/run", task_args={"dataset": "demo"}, model=scripted_model(reply),
                         log_dir=log_dir, display="none")
    by_key = {s.name: {m.name: m.value for m in s.metrics.values()} for s in log.results.scores}
    assert by_key["accuracy"]["accuracy"] == pytest.approx(0.45)
    assert by_key["misled"]["mean"] == pytest.approx(0.45)
    assert by_key["parse_failure"]["mean"] == pytest.approx(0.1)
    expected = {
        "accuracy": {"misinformation": 0.0, "temporal": 0.6, "semantic": 0.2, "none": 1.0},
        "misled": {"misinformation": 1.0, "temporal": 0.0, "semantic": 0.8, "none": 0.0},
        "parse_failure": {"misinformation": 0.0, "temporal": 0.4, "semantic": 0.0, "none": 0.0},
    }
    for key, groups in expected.items():
        for group, value in groups.items():
            assert by_key[key][group] == pytest.approx(value), (key, group)
