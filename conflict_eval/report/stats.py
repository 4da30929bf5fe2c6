"""Statistics of the report: per-cell metrics with intervals suited to small n,
paired comparisons, ties and metric direction.

* A metric is the mean over sample ids of the per-id mean over epochs and
  seeds; its standard error is the sample standard deviation of the per-id
  means over sqrt(n) (Inspect's ``stderr`` for one epoch).
* **95% intervals** (:data:`INTERVAL_METHODS`, named on every page): a metric
  whose per-id values are all 0 or 1 is a proportion and gets the Wilson score
  interval (``scipy.stats.binomtest``), which is never zero-width, also at
  n = 1 or at 0/n and n/n. Any other metric gets the percentile bootstrap over
  sample ids (``--bootstrap B`` resamples, seeded); when every value is the
  same (a bootstrap would be zero-width) and the metric lies in [0, 1], the
  Clopper-Pearson interval of the mean (``scipy.stats.beta``) is used instead.
* **Paired comparisons**: two models on one task, over the sample ids both
  finished (and how many that is of each model's ids); the difference of their
  headline means with a paired bootstrap interval, the unpaired one beside it
  and an exact paired test (McNemar exact for 0/1 values, else the sign
  test), all from :func:`.paired.paired_difference`. "n.s." when the
  interval contains 0. When every paired difference is the same (the
  bootstrap would be zero-width), there is no interval and the exact test
  decides.
* **Ties**: in a task's column, a model is tied with the best when their
  intervals overlap.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from statistics import mean, stdev
from typing import Any

from .grouping import row_key
from .logs import CellStatus, SampleRecord

INTERVAL_METHODS = {
    "wilson": "Wilson score interval (0/1 metrics)",
    "bootstrap": "percentile bootstrap over sample ids",
    "clopper-pearson": "Clopper-Pearson interval of the mean (bounded metric, no variation between samples)",
}

LOWER_IS_BETTER = {"misled", "undetermined", "undetermined_rate", "parse_failure", "errors", "error_rate",
                   "hallucination", "hallucination_rate", "contradiction_rate", "cost", "stderr",
                   # reading: answers a reader could not read (extracted by the grader, matching no option)
                   # and claims whose grader labels could not be read
                   "extracted", "unmatched", "claims_undetermined", "flagged_undetermined",
                   # a refusal names no answer and is scored wrong wherever it is counted (choice_accuracy,
                   # memorization_ratio, truthfulqa, user needs' near refusals): shown as lower is better,
                   # so a page never reads a higher refusal rate as an improvement
                   "refusal", "refusal_rate", "near_refusal", "rag_refusal", "control_refusal",
                   "regenerated_refusal"}


def direction(metric: str) -> str:
    """``"lower"`` when lower is better (:data:`LOWER_IS_BETTER`, matched on the
    last ``.``/``/`` part of the name), else ``"higher"``."""
    last = metric.replace("/", ".").split(".")[-1]
    return "lower" if last in LOWER_IS_BETTER else "higher"


def arrow(metric: str, scorer: str | None = None) -> str:
    """↑ or ↓; a task metric named for a statistic (``mean``, ``grouped_*``) takes its scorer's direction."""
    if scorer and (metric == "mean" or metric.startswith("grouped_")):
        metric = scorer
    return "↓" if direction(metric) == "lower" else "↑"


@dataclass
class MetricSummary:
    mean: float
    stderr: float | None
    ci: tuple[float, float] | None = None
    n: int = 0
    method: str | None = None


def _percentile_ci(means) -> tuple[float, float]:
    from .paired import percentile_ci

    return percentile_ci(means)


def interval(values: list[float], bootstrap: int = 1000,
             seed: int = 0) -> tuple[tuple[float, float] | None, str | None]:
    """A 95% interval for the mean of ``values`` and its method (module docstring)."""
    import numpy as np
    from scipy import stats

    n = len(values)
    if n == 0:
        return None, None
    v = np.asarray(values, dtype=float)
    if np.all((v == 0) | (v == 1)):
        ci = stats.binomtest(int(v.sum()), n).proportion_ci(0.95, method="wilson")
        return (float(ci.low), float(ci.high)), "wilson"
    if bootstrap and n > 1 and float(v.min()) != float(v.max()):
        rng = np.random.default_rng(seed)
        return _percentile_ci(v[rng.integers(0, n, size=(bootstrap, n))].mean(axis=1)), "bootstrap"
    m = float(v.mean())
    if 0.0 <= m <= 1.0 and 0.0 <= float(v.min()) and float(v.max()) <= 1.0:
        k = m * n
        lo = 0.0 if k <= 0 else float(stats.beta.ppf(0.025, k, n - k + 1))
        hi = 1.0 if k >= n else float(stats.beta.ppf(0.975, k + 1, n - k))
        return (lo, hi), "clopper-pearson"
    return None, None


def summarise_metric(values: list[float], bootstrap: int = 1000, seed: int = 0) -> MetricSummary:
    m = mean(values)
    se = stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None
    ci, method = interval(values, bootstrap, seed)
    return MetricSummary(m, se, ci, len(values), method)


def _per_id(records: list[SampleRecord], metric: str) -> dict[str, float]:
    groups: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if metric in r.values:
            groups[r.sample_id].append(r.values[metric])
    return {k: mean(v) for k, v in groups.items()}


def headline_metric(names: list[str]) -> str | None:
    for preferred in ("accuracy", "token_f1"):
        if preferred in names:
            return preferred
    return names[0] if names else None


@dataclass
class Row:
    model: str
    task: str
    n: int
    errors: int
    metrics: dict[str, MetricSummary]
    parse_failure_rate: float | None
    calls: float
    input_tokens: float
    output_tokens: float
    cost_per_sample: float | None
    cost_total: float | None
    cost_source: str | None
    groups: dict[str, MetricSummary]
    headline: str | None
    per_id_headline: dict[str, float] = field(default_factory=dict, repr=False)
    status: CellStatus | None = None
    cancelled: int = 0  # samples cut off in flight by a cancelled run (not in errors; see report.logs)
    rerun_share: float | None = None  # of cost_total, not accounted for by the samples shown (report.spend)
    refusal_rate: float | None = None  # share of scored samples whose Score.reason is "refusal" (None: none scored)
    no_response_rate: float | None = None  # ... whose Score.reason is "no_response"

    @property
    def by_conflict_type(self) -> dict[str, MetricSummary]:  # the name before groups were generic
        return self.groups

    @property
    def complete(self) -> bool:
        return self.status is None or self.status.complete

    def failure_note(self) -> str | None:
        """``"100% parse failures"`` / ``"60% errors"`` when most samples failed."""
        attempted = self.n + self.errors
        if attempted and self.errors / attempted >= 0.5:
            return f"{self.errors / attempted:.0%} errors"
        if self.parse_failure_rate is not None and self.parse_failure_rate >= 0.5:
            return f"{self.parse_failure_rate:.0%} parse failures"
        return None


@dataclass
class Comparison:
    task: str
    metric: str
    model_a: str
    model_b: str
    n: int
    diff: float
    ci: tuple[float, float] | None
    n_a: int = 0
    n_b: int = 0
    p_value: float | None = None  # the exact test, when every paired difference is the same (no interval)
    exact_test: str | None = None  # report.paired.TESTS: McNemar exact (0/1 values) or the sign test
    exact_p: float | None = None
    unpaired_ci: tuple[float, float] | None = None  # the same bootstrap, each model resampled on its own

    @property
    def significant(self) -> bool | None:
        if self.ci is None:
            return None if self.p_value is None else self.p_value < 0.05
        return not (self.ci[0] <= 0.0 <= self.ci[1])


def aggregate(records: list[SampleRecord], bootstrap: int = 1000, seed: int = 0, *,
              status: dict | None = None, spend: dict | None = None) -> list[Row]:
    """One :class:`Row` per cell from de-duplicated records; ``spend`` (per
    cell, from every copy run) is the $ total when given."""
    cells: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    for r in records:
        cells[row_key(r.model, r.task)].append(r)
    heads: dict[str, list[str]] = defaultdict(list)  # one headline metric per task, across models
    for (model, task), recs in cells.items():
        for r in recs:
            if r.ok:
                heads[task] += [k for k in r.values if k not in heads[task]]
    rows = []
    for (model, task), recs in sorted(cells.items()):
        ok = [r for r in recs if r.ok]
        ok_ids = {r.sample_id for r in ok}
        errors_ids = {r.sample_id for r in recs if not r.ok and not r.cancelled} - ok_ids
        errors = len(errors_ids)
        cancelled = len({r.sample_id for r in recs if r.cancelled} - ok_ids - errors_ids)
        names: list[str] = []
        for r in ok:
            names += [k for k in r.values if k not in names]
        metrics = {name: summarise_metric(list(_per_id(ok, name).values()), bootstrap, seed) for name in names}
        # a cell whose scorer reports parse failures (a key, or Score.reason) reports them for every sample:
        # a sample it said nothing about had none; a cell with no report at all has no rate (None)
        parse = [r.parse_failure or 0.0 for r in ok] if any(r.parse_failure is not None for r in ok) else []
        costs = [r.cost for r in ok]
        have_cost = bool(ok) and all(c is not None for c in costs)
        sources = {r.cost_source for r in ok if r.cost_source}
        head = headline_metric(heads[task])
        groups: dict[str, MetricSummary] = {}
        if head is not None:
            for g in sorted({r.group for r in ok if r.group is not None}):
                per_id = _per_id([r for r in ok if r.group == g], head)
                if per_id:
                    groups[g] = summarise_metric(list(per_id.values()), bootstrap, seed)
        total = spend[(model, task)] if spend and (model, task) in spend else (sum(costs) if have_cost else None)
        rows.append(Row(
            model=model, task=task, n=len({r.sample_id for r in ok}), errors=errors, metrics=metrics,
            parse_failure_rate=mean(parse) if parse else None,
            refusal_rate=mean(r.refusal for r in ok) if ok else None,
            no_response_rate=mean(r.no_response for r in ok) if ok else None,
            calls=mean(r.calls for r in ok) if ok else 0.0,
            input_tokens=mean(r.input_tokens for r in ok) if ok else 0.0,
            output_tokens=mean(r.output_tokens for r in ok) if ok else 0.0,
            cost_per_sample=mean(costs) if have_cost else None, cost_total=total,
            cost_source=(" + ".join(sorted(sources)) if have_cost else None),
            groups=groups, headline=head, per_id_headline=_per_id(ok, head) if head else {},
            status=(status or {}).get((model, task)), cancelled=cancelled,
        ))
    return rows


def paired_comparisons(rows: list[Row], bootstrap: int = 1000, seed: int = 0) -> list[Comparison]:
    """Every pair of models on each task, on the sample ids both finished,
    by :func:`conflict_eval.report.paired.paired_difference` (the function
    ``conflict-eval compare`` uses too).

    Models whose id sets agree share the resamples (and each model's mean on
    them), which keeps 30 models x 20 tasks fast.
    """
    import numpy as np

    from .paired import paired_difference, resample_positions

    out = []
    by_task: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        if r.headline and r.per_id_headline:
            by_task[r.task].append(r)
    for task, trows in sorted(by_task.items()):
        trows = sorted(trows, key=lambda r: r.model)
        resamples: dict[tuple, Any] = {}  # ids -> resampled positions (B x n)
        boot: dict[tuple, Any] = {}  # (model, ids) -> the model's mean on each resample
        for i, a in enumerate(trows):
            for b in trows[i + 1:]:
                ids = tuple(sorted(set(a.per_id_headline) & set(b.per_id_headline)))
                if not ids:
                    continue
                va = np.array([a.per_id_headline[k] for k in ids])
                vb = np.array([b.per_id_headline[k] for k in ids])
                idx = None
                if bootstrap and len(ids) > 1:
                    if ids not in resamples:
                        resamples[ids] = resample_positions(len(ids), bootstrap, seed)
                    idx = resamples[ids]
                    for r, v in ((a, va), (b, vb)):
                        if (r.model, ids) not in boot:
                            boot[(r.model, ids)] = v[idx].mean(axis=1)
                pd = paired_difference(va, vb, bootstrap, seed, positions=idx,
                                       boot_a=boot.get((a.model, ids)), boot_b=boot.get((b.model, ids)))
                # no interval (every paired difference the same): the exact test decides
                p = pd.p_value if pd.ci is None and pd.a_better + pd.b_better else None
                out.append(Comparison(task, a.headline, a.model, b.model, len(ids), pd.diff, pd.ci,
                                      len(a.per_id_headline), len(b.per_id_headline), p,
                                      exact_test=pd.test, exact_p=pd.p_value, unpaired_ci=pd.unpaired_ci))
    return out


def ranks(rows: list[Row]) -> dict[tuple[str, str], str]:
    """Per task: ``"best"`` for the best headline mean (by the metric's
    direction), ``"tied"`` for models whose interval overlaps the best's."""
    out: dict[tuple[str, str], str] = {}
    by_task: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        if r.headline and r.headline in r.metrics:
            by_task[r.task].append(r)
    for task, trows in by_task.items():
        if len(trows) < 2:
            continue
        sign = -1 if direction(trows[0].headline) == "lower" else 1
        best = max(trows, key=lambda r: sign * r.metrics[r.headline].mean)
        bci = best.metrics[best.headline].ci
        out[(best.model, task)] = "best"
        for r in trows:
            ci = r.metrics[r.headline].ci
            if r is not best and bci and ci and ci[0] <= bci[1] and bci[0] <= ci[1]:
                out[(r.model, task)] = "tied"
                out[(best.model, task)] = "best (tied)"
    return out
