"""Declared headline metrics (Task(headline_metric=...), read by the page and by Inspect's evals_df)
and clustered intervals (Inspect's ci_wilson(cluster=...)) on the page.

Golden values by hand for the clustered interval (Franco et al. 2019, as Inspect documents it):
12 samples in 3 clusters of 4, values c1 = (1, 1, 1, 1), c2 = (1, 1, 0, 0), c3 = (0, 0, 0, 0):
p = 6/12 = 0.5; each cluster's sum of deviations from p: +2, 0, -2; clustered variance of the
mean = (4 + 0 + 4) / 12^2 * 3 / (3 - 1) = 1/12; effective n = p(1 - p) / v = 0.25 * 12 = 3;
critical value t(0.975, df = 3 - 1) = 4.302653; the Wilson interval at n = 3 with that critical
value. Unclustered, the same 12 values get the Wilson interval at n = 12, z = 1.96: narrower.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest
from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate

ROOT = Path(__file__).resolve().parents[2]


def _wilson(p: float, n: float, crit: float) -> tuple[float, float]:
    d = 1 + crit * crit / n
    centre = (p + crit * crit / (2 * n)) / d
    half = crit * math.sqrt(p * (1 - p) / n + crit * crit / (4 * n * n)) / d
    return centre - half, centre + half


@pytest.mark.parametrize("path", sorted((ROOT / "tasks").glob("*/task.py")), ids=lambda p: p.parent.name)
def test_every_built_in_task_declares_its_headline(path):
    """A task builds Task(..., headline_metric=...), or task_with(..., headline_metric=...), or
    returns compose_task(...), which declares the first scorer's first score."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    declared = [c for c in calls if c.func.id in ("Task", "task_with")
                and any(k.arg == "headline_metric" for k in c.keywords)]
    bare = [c for c in calls if c.func.id == "Task" and not any(k.arg == "headline_metric" for k in c.keywords)]
    composed = [c for c in calls if c.func.id == "compose_task"]
    assert not bare and (declared or composed), f"{path.parent.name}: Task without headline_metric"


@task
def clustered():
    values = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    return Task(dataset=[Sample(id=f"s{i}", input=f"Question {i}", target="yes" if v else "no",
                                metadata={"record": {"id": f"r{i // 4}"}}) for i, v in enumerate(values)],
                solver=generate(), scorer=match(), metadata={"cluster": "record.id"})


def test_clustered_wilson_interval_on_the_page(tmp_path):
    from conflict_eval.report import build_leaderboard
    from conflict_eval.report.markdown import to_markdown
    from conflict_eval.testing import scripted_model

    eval(clustered(), model=scripted_model(lambda p: "yes"), log_dir=str(tmp_path), display="none")
    board = build_leaderboard([tmp_path], bootstrap=0)
    (row,) = board["rows"]
    m = row.metrics["match"]
    assert m.mean == pytest.approx(0.5) and (m.method, m.clusters) == ("wilson-clustered", 3)
    assert m.ci == pytest.approx(_wilson(0.5, 3, 4.302653), abs=1e-5)
    plain = _wilson(0.5, 12, 1.959964)
    assert m.ci[1] - m.ci[0] > plain[1] - plain[0]
    assert row.cluster_key == "record.id"
    assert "Intervals clustered on the sample metadata key `record.id`" in to_markdown(board)
