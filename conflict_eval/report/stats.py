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
* **Clustered intervals**: a task that declares a cluster key
  (``Task(metadata={"cluster": KEY})``, :data:`.logs.CLUSTER_KEY`; the samples carry
  ``KEY`` in their metadata) gets Inspect's clustered Wilson interval
  (``ci_wilson(cluster=...)``) for 0/1 metrics and a seeded cluster bootstrap
  otherwise, whenever its samples fall in at least two clusters.
* **Headline**: the per-sample value behind the headline metric Inspect
  resolves from the log (the task's ``Task(headline_metric=...)``;
  :func:`headline_key`), the one ``inspect view`` and ``evals_df`` show.
* **Paired comparisons**: two models on one task, over the sample ids both
  finished (and how many that is of each model's ids); the difference of their
  headline means, the verdict of :mod:`.paired` (McNemar exact for 0/1 values,
  else a paired permutation test on the mean difference; significant when
  the Holm-adjusted p over the page's comparisons is below alpha), and the
  paired and unpaired bootstrap intervals beside it, never deciding.
* **Ties**: in a task's column, the best model by the metric's declared
  direction; a model is tied with it when their paired test is not
  significant. An undeclared metric gets no best/tied mark.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from statistics import mean, stdev
from typing import Any

from .grouping import row_key
from .logs import CLUSTER_KEY, CellStatus, SampleRecord
from .paired import ALPHA

INTERVAL_METHODS = {
    "wilson": "Wilson score interval (0/1 metrics)",
    "bootstrap": "percentile bootstrap over sample ids",
    "clopper-pearson": "Clopper-Pearson interval of the mean (bounded metric, no variation between samples)",
    "wilson-clustered": "clustered Wilson interval (Inspect's ci_wilson(cluster=...); 0/1 metrics)",
    "bootstrap-clustered": "percentile bootstrap over clusters of samples",
}

#: Every metric's declared direction, by the last ``.``/``/`` part of its name. A metric in
#: neither set is undeclared: no arrow, no "better" word and no best/tied mark.
HIGHER_IS_BETTER = {
    # answers right: choice, span and text metrics, the papers' accuracies and F1s
    "accuracy", "correct", "token_f1", "exact_match", "cover_em", "strict_em", "strict_em_authors", "f1",
    "f1_authors", "em", "precision", "recall", "det_accuracy", "acc_conf", "acc_noconf", "knowledge_recall",
    "gold_recall", "yes_no_accuracy", "user_need_accuracy", "choice_accuracy", "improve_rate", "net_improve",
    "recovered", "recovered_item_rate", "label_coverage", "conflict_detection", "rag", "control_rag",
    "regenerated_rag",
    # Inspect's own scorers, whose values are CORRECT / INCORRECT
    "match", "includes", "pattern", "answer", "choice", "exact", "model_graded_qa", "model_graded_fact",
}
LOWER_IS_BETTER = {
    "misled", "undetermined", "undetermined_rate", "parse_failure", "parse_failures", "errors", "error_rate",
    "hallucination", "hallucinations", "hallucination_rate", "contradiction_rate", "cost", "harm_rate",
    "label_failures", "over_rationalization", "overrationalization", "wrong_included", "rejected",
    "rejected_item_rate", "detection_failure", "decomposition_failure", "decomposition_truncated", "no_trace",
    "target_failed", "degraded_nodes", "trees_with_degraded_nodes", "claims_dropped", "claims_lost",
    "rag_parse_failure", "control_parse_failure", "regenerated_parse_failure",
    # ConflictScore's counts and ratios of claims in conflict (Table 3: "the lower the better")
    "cs_c", "cs_r", "cs_c_best", "cs_r_best",
    # reading: answers a reader could not read (extracted by the grader, matching no option)
    # and claims whose grader labels could not be read
    "extracted", "unmatched", "claims_undetermined", "flagged_undetermined",
    # a refusal names no answer and is scored wrong wherever it is counted (choice_accuracy,
    # memorization_ratio, truthfulqa, user needs' near refusals): shown as lower is better,
    # so a page never reads a higher refusal rate as an improvement
    "refusal", "refusals", "refusal_rate", "near_refusal", "near_refusals", "rag_refusal", "control_refusal",
    "regenerated_refusal",
}
# not declared: "stderr" and other statistics of a metric (how precise a figure is, not how good a
# model is), so they get no arrow and no "better" word


def direction(metric: str | None, scorer: str | None = None) -> str | None:
    """``"higher"`` / ``"lower"`` as the metric declares (:data:`HIGHER_IS_BETTER`,
    :data:`LOWER_IS_BETTER`, matched on the last ``.``/``/`` part of the name),
    ``None`` when it declares nothing (ConflictQA's memorization ratio, a count).
    A task metric named for a statistic (``mean``, ``grouped_*``) takes its
    scorer's direction.

    >>> direction("misled"), direction("choice_accuracy.accuracy"), direction("memorization_ratio")
    ('lower', 'higher', None)
    """
    if metric is None:
        return None
    if scorer and (metric in ("mean", "accuracy") or metric.startswith("grouped_")):
        metric = scorer if direction(scorer) else metric
    last = metric.replace("/", ".").split(".")[-1]
    if last in LOWER_IS_BETTER:
        return "lower"
    return "higher" if last in HIGHER_IS_BETTER else None


def arrow(metric: str | None, scorer: str | None = None) -> str:
    """↑ or ↓ by the declared direction; ``""`` for an undeclared metric."""
    return {"higher": "↑", "lower": "↓"}.get(direction(metric, scorer) or "", "")


@dataclass
class MetricSummary:
    mean: float
    stderr: float | None
    ci: tuple[float, float] | None = None
    n: int = 0
    method: str | None = None
    clusters: int | None = None  # clusters behind a clustered interval (report.stats.interval)


def _percentile_ci(means) -> tuple[float, float]:
    from .paired import percentile_ci

    return percentile_ci(means)


def _clustered(v, clusters: list[str], bootstrap: int, seed: int) -> tuple[tuple[float, float] | None, str | None]:
    """Inspect's clustered Wilson interval for 0/1 values; else a seeded cluster bootstrap
    (Inspect's ``ci(method="bootstrap", cluster=...)`` draws without a seed, so a page would change
    from build to build)."""
    import numpy as np

    if np.all((v == 0) | (v == 1)):
        from inspect_ai.scorer import SampleScore, Score, ci_wilson

        scores = [SampleScore(score=Score(value=float(x)), sample_id=i, sample_metadata={"cluster": c})
                  for i, (x, c) in enumerate(zip(v, clusters))]
        ci = ci_wilson(cluster="cluster")(scores)
        return (float(ci["lower"]), float(ci["upper"])), "wilson-clustered"
    if not bootstrap or float(v.min()) == float(v.max()):
        return None, None
    names = sorted(set(clusters))
    members = [np.flatnonzero(np.asarray(clusters) == c) for c in names]
    sums = np.array([v[m].sum() for m in members])
    sizes = np.array([len(m) for m in members])
    pick = np.random.default_rng(seed).integers(0, len(names), size=(bootstrap, len(names)))
    return _percentile_ci(sums[pick].sum(axis=1) / sizes[pick].sum(axis=1)), "bootstrap-clustered"


@lru_cache(maxsize=4096)
def _wilson(k: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of k successes in n (``scipy.stats.binomtest``); a page
    of many models and tasks asks for the same few (k, n) again and again, so each is computed once."""
    from scipy import stats

    ci = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    return float(ci.low), float(ci.high)


def interval(values: list[float], bootstrap: int = 1000, seed: int = 0,
             clusters: list[str] | None = None) -> tuple[tuple[float, float] | None, str | None]:
    """A 95% interval for the mean of ``values`` and its method (module docstring);
    ``clusters`` (one key per value) makes it clustered when there are at least two."""
    import numpy as np
    from scipy import stats

    n = len(values)
    if n == 0:
        return None, None
    v = np.asarray(values, dtype=float)
    if clusters is not None and len(set(clusters)) >= 2:
        ci, method = _clustered(v, clusters, bootstrap, seed)
        if ci is not None:
            return ci, method
    if np.all((v == 0) | (v == 1)):
        return _wilson(int(v.sum()), n), "wilson"
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


def summarise_metric(values: list[float], bootstrap: int = 1000, seed: int = 0,
                     clusters: list[str] | None = None) -> MetricSummary:
    m = mean(values)
    se = stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None
    ci, method = interval(values, bootstrap, seed, clusters)
    return MetricSummary(m, se, ci, len(values), method,
                         len(set(clusters)) if clusters and method and method.endswith("clustered") else None)


def _per_id(records: list[SampleRecord], metric: str) -> dict[str, float]:
    groups: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if metric in r.values:
            groups[r.sample_id].append(r.values[metric])
    return {k: mean(v) for k, v in groups.items()}


def _summary(records: list[SampleRecord], metric: str, bootstrap: int, seed: int) -> MetricSummary | None:
    per_id = _per_id(records, metric)
    if not per_id:
        return None
    cluster_of = {r.sample_id: r.cluster for r in records if r.cluster is not None}
    ids = list(per_id)
    clusters = [str(cluster_of[i]) for i in ids] if all(i in cluster_of for i in ids) else None
    return summarise_metric([per_id[i] for i in ids], bootstrap, seed, clusters)


def headline_key(declared: dict | None, names: list[str]) -> str | None:
    """The per-sample value behind a task's headline, as Inspect resolved it
    (``inspect_ai.log.headline_metric``: the task's ``Task(headline_metric=...)``,
    else the first metric of the first score); ``names`` are the values the
    samples carry (:func:`.logs.score_values` names them ``key`` or ``scorer.key``).
    Without a resolution (records built by hand), Inspect's convention: the first score.

    >>> headline_key({"scorer": "choice_accuracy", "score": "accuracy"}, ["misled", "accuracy"])
    'accuracy'
    >>> headline_key({"scorer": "a", "score": "f1"}, ["a.f1", "b.f1"])
    'a.f1'
    """
    if not declared:
        return names[0] if names else None
    scorer, score, metric = declared.get("scorer"), declared.get("score"), declared.get("metric")
    # a dict-valued score has one value per key (the score's name, or the metric's when one metric
    # reads several keys, as AtomR's f1 / em); a scalar score is named for its scorer
    for name in (f"{scorer}.{score}", score, f"{scorer}.{metric}", metric, scorer):
        if name in names:
            return name
    return None


@dataclass
class Row:
    model: str
    task: str
    n: int
    errors: int
    metrics: dict[str, MetricSummary]
    parse_failure_rate: float | None
    calls: float | None  # per finished sample; None when none finished (undefined, never 0)
    input_tokens: float | None
    output_tokens: float | None
    cost_per_sample: float | None
    cost_total: float | None
    cost_source: str | None
    groups: dict[str, MetricSummary]
    headline: str | None
    per_id_headline: dict[str, float] = field(default_factory=dict, repr=False)
    status: CellStatus | None = None
    cancelled: int = 0  # samples cut off in flight by a cancelled run (not in errors; see report.logs)
    rerun_share: float | None = None  # of cost_total, not accounted for by the samples shown (report.spend)
    cluster_key: str | None = None  # the sample metadata key the task's intervals cluster on
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
    """Two models on one task's headline; the verdict is ``result``'s (:mod:`.paired`)."""

    task: str
    metric: str
    model_a: str
    model_b: str
    result: Any  # paired.Paired
    n_a: int = 0
    n_b: int = 0

    @property
    def n(self) -> int:
        return self.result.n

    @property
    def diff(self) -> float:
        return self.result.diff

    @property
    def ci(self) -> tuple[float, float] | None:
        return self.result.ci

    @property
    def unpaired_ci(self) -> tuple[float, float] | None:
        return self.result.unpaired_ci

    @property
    def significant(self) -> bool:
        return self.result.significant

    @property
    def better(self) -> str | None:
        """The better model's name (significant, and the metric declares a direction), else ``None``."""
        side = self.result.better(direction(self.metric))
        return {"A": self.model_a, "B": self.model_b}.get(side or "")


def aggregate(records: list[SampleRecord], bootstrap: int = 1000, seed: int = 0, *,
              status: dict | None = None, spend: dict | None = None,
              heads: dict[str, dict] | None = None) -> list[Row]:
    """One :class:`Row` per cell from de-duplicated records; ``spend`` (per
    cell, from every copy run) is the $ total when given; ``heads`` is each
    task's headline as Inspect resolved it from the logs (:func:`headline_key`)."""
    cells: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    for r in records:
        cells[row_key(r.model, r.task)].append(r)
    names_of: dict[str, list[str]] = defaultdict(list)  # every value name of a task, across models
    for (model, task), recs in cells.items():
        for r in recs:
            if r.ok:
                names_of[task] += [k for k in r.values if k not in names_of[task]]
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
        metrics = {name: m for name in names if (m := _summary(ok, name, bootstrap, seed)) is not None}
        # a cell whose scorer reports parse failures (a key, or Score.reason) reports them for every sample:
        # a sample it said nothing about had none; a cell with no report at all has no rate (None)
        parse = [r.parse_failure or 0.0 for r in ok] if any(r.parse_failure is not None for r in ok) else []
        costs = [r.cost for r in ok]
        have_cost = bool(ok) and all(c is not None for c in costs)
        sources = {r.cost_source for r in ok if r.cost_source}
        head = headline_key((heads or {}).get(task), names_of[task])
        groups: dict[str, MetricSummary] = {}
        if head is not None:
            for g in sorted({r.group for r in ok if r.group is not None}):
                if (m := _summary([r for r in ok if r.group == g], head, bootstrap, seed)) is not None:
                    groups[g] = m
        total = spend[(model, task)] if spend and (model, task) in spend else (sum(costs) if have_cost else None)
        rows.append(Row(
            model=model, task=task, n=len({r.sample_id for r in ok}), errors=errors, metrics=metrics,
            parse_failure_rate=mean(parse) if parse else None,
            refusal_rate=mean(r.refusal for r in ok) if ok else None,
            no_response_rate=mean(r.no_response for r in ok) if ok else None,
            calls=mean(r.calls for r in ok) if ok else None,
            input_tokens=mean(r.input_tokens for r in ok) if ok else None,
            output_tokens=mean(r.output_tokens for r in ok) if ok else None,
            cost_per_sample=mean(costs) if have_cost else None, cost_total=total,
            cost_source=(" + ".join(sorted(sources)) if have_cost else None),
            groups=groups, headline=head, per_id_headline=_per_id(ok, head) if head else {},
            status=(status or {}).get((model, task)), cancelled=cancelled,
            cluster_key=next((r.cluster_key for r in ok if r.cluster_key), None),
        ))
    return rows


def paired_comparisons(rows: list[Row], bootstrap: int = 1000, seed: int = 0, *,
                       alpha: float = ALPHA, adjustment: str = "holm") -> list[Comparison]:
    """Every pair of models on each task, on the sample ids both finished,
    by :func:`conflict_eval.report.paired.paired_difference` (the function
    ``conflict-eval compare`` uses too); the whole page is one family
    (:func:`.paired.adjust`, Holm by default).

    Models whose id sets agree share the resamples (and each model's mean on
    them), which keeps 30 models x 20 tasks fast.
    """
    import numpy as np

    from .paired import adjust, paired_difference, resample_positions

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
                out.append(Comparison(task, a.headline, a.model, b.model, pd,
                                      len(a.per_id_headline), len(b.per_id_headline)))
    adjust([c.result for c in out], adjustment, alpha)
    return out


def ranks(rows: list[Row], comparisons: list[Comparison]) -> dict[tuple[str, str], str]:
    """Per task whose headline declares a direction: ``"best"`` for the best
    headline mean, ``"tied"`` for each model whose paired test against the best
    is not significant (the same verdict as the paired table, so a pair is
    never both tied and significant); ``"best (tied)"`` when the best has a tie.
    A model with no paired comparison against the best gets no mark."""
    out: dict[tuple[str, str], str] = {}
    by_task: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        if r.headline and r.headline in r.metrics:
            by_task[r.task].append(r)
    verdict = {(c.task, frozenset((c.model_a, c.model_b))): c.significant for c in comparisons}
    for task, trows in by_task.items():
        d = direction(trows[0].headline)
        if len(trows) < 2 or d is None:
            continue
        sign = -1 if d == "lower" else 1
        best = max(trows, key=lambda r: sign * r.metrics[r.headline].mean)
        out[(best.model, task)] = "best"
        for r in trows:
            if r is not best and verdict.get((task, frozenset((r.model, best.model)))) is False:
                out[(r.model, task)] = "tied"
                out[(best.model, task)] = "best (tied)"
    return out
