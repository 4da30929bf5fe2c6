"""``conflict-eval compare A B``: a paired comparison of two sets of Inspect
logs -- any Inspect task, ours or not.

Each side is a log file or a directory of logs (searched recursively, read
with ``inspect_ai.log.list_eval_logs`` / ``read_eval_log``). Samples are
paired by task, sample id and epoch:

* **tasks** pair by the log's task name; when each side holds exactly one task
  they pair whatever their names (comparing two variants of one task). A task
  on one side only is listed with its sample count, never dropped in silence;
* **one model per side and task**: a side whose logs of one task hold two
  models is refused (the error names each model and its sample count);
* **same dataset and scorer**: the two logs of a pair must share the
  dataset name (when both name one), the sample content behind every shared
  id (a hash of its input and target; the sample-id hash of each side is
  printed) and the scorers (names and arguments). Otherwise compare refuses,
  unless ``pair_anyway`` (``--pair-anyway``);
* the same (task, id, epoch) in several logs of one side counts once: a copy
  without error beats one with an error, then the most recently created log;
* a **metric** is a score value as the leaderboard reads it
  (:func:`conflict_eval.report.logs.score_values`); a sample with an error,
  or a NaN (unscored) value, has no value for it. Ids missing on either side
  and ids NaN on both sides are listed with counts;
* the **unit** of the statistics is the sample id: with several epochs, each
  id's value is its mean over the epochs present on both sides;
* the statistics and the verdict are :mod:`conflict_eval.report.paired`, the
  module behind the leaderboard's paired table: difference A - B, the test
  that decides (McNemar exact for 0/1 values, else the paired permutation
  test on the mean difference), Holm over every (task, metric) row of the
  run, "better" by the metric's declared direction, the bootstrap intervals
  beside it;
* **flips** (0/1 metrics): the ids right on one side and wrong on the other,
  by direction (all in the JSON, at most :data:`FLIPS_SHOWN` each in the text);
  "right" follows the metric's declared direction (on a lower-is-better metric
  such as ``misled``, 0 is right), and an undeclared metric's flips are worded
  "1 in A only" / "1 in B only".
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .logs import nan_values, score_values
from .paired import ADJUSTMENTS, ALPHA, TESTS, Paired, adjust, paired_difference
from .stats import arrow, direction

FLIPS_SHOWN = 20


class CompareError(ValueError):
    """The two sides cannot be paired as given (the message says why and what to pass)."""


@dataclass
class Side:
    """One side's samples: task -> (id, epoch) -> metric values; models, logs, datasets seen."""

    values: dict[str, dict[tuple[str, int], dict[str, float]]] = field(default_factory=dict)
    nan: dict[str, dict[tuple[str, int], set[str]]] = field(default_factory=dict)
    models: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    logs: list[str] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    datasets: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    scorers: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    content: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    """task -> sample id -> hash of its input and target."""

    def ids_hash(self, task: str) -> str:
        ids = sorted(self.content[task])
        return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]


@dataclass
class MetricComparison:
    task_a: str
    task_b: str
    metric: str
    direction: str | None
    model_a: str
    model_b: str
    n_paired: int
    """Sample ids with a value on both sides (the unit of the statistics)."""
    pairs: int
    """(id, epoch) pairs behind them."""
    missing_in_a: list[str]
    """Ids with a value in B but none in A (or ``"id@epoch"`` for a missing epoch)."""
    missing_in_b: list[str]
    nan_in_both: list[str]
    """Ids (or ``"id@epoch"``) scored NaN on both sides: no value, not compared."""
    result: Paired | None
    flips_a: list[str] | None = None
    """0/1 metrics: ids right in A and wrong in B (by the declared direction: 0 is right on a
    lower-is-better metric; undeclared: ids scored 1 in A and 0 in B)."""
    flips_b: list[str] | None = None

    @property
    def better(self) -> str | None:
        side = self.result.better(self.direction) if self.result else None
        return {"A": self.model_a, "B": self.model_b}.get(side or "")

    def as_dict(self) -> dict:
        d = asdict(self)
        d["result"] = None if self.result is None else self.result.as_dict()
        d["better"] = self.better
        # the side too: two runs of one model (two variants of a task) have the same name on both sides
        d["better_side"] = self.result.better(self.direction) if self.result else None
        return d


def log_files(spec: str | Path) -> list[str]:
    """The Inspect logs of a file or directory (recursive); an error names a path without logs."""
    from conflict_eval.report.logs import listed_logs

    p = Path(spec)
    if not p.exists():
        raise FileNotFoundError(f"compare: no such log file or directory: {spec}")
    if p.is_file():
        return [str(p)]
    found = sorted(info.name for info in listed_logs(p))
    if not found:
        raise ValueError(f"compare: no Inspect log (.eval / .json) under {spec}")
    return found


def _content_hash(sample) -> str:
    text = json.dumps([sample.input if isinstance(sample.input, str) else [m.text for m in sample.input],
                       sample.target], default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read_side(spec: str | Path) -> Side:
    from inspect_ai.log import read_eval_log

    side = Side()
    chosen: dict[tuple[str, str, int], tuple[bool, str]] = {}  # (task, id, epoch) -> (ok, created) of the kept copy
    for path in log_files(spec):
        try:
            log = read_eval_log(path)
        except Exception as exc:  # noqa: BLE001 -- a file that is not a readable log is a user error
            raise ValueError(f"compare: cannot read Inspect log {path}: {exc}") from exc
        side.logs.append(path)
        task, created = log.eval.task, str(log.eval.created)
        if log.eval.dataset and log.eval.dataset.name:
            side.datasets[task].add(log.eval.dataset.name)
        side.scorers[task].add(json.dumps([s.model_dump(exclude_none=True) for s in log.eval.scorers or []],
                                          sort_keys=True, default=str))
        for s in log.samples or []:
            key = (task, str(s.id), int(s.epoch))
            side.models[task][log.eval.model].add(key[1])
            side.content[task][key[1]] = _content_hash(s)
            ok = s.error is None and bool(s.scores)
            prev = chosen.get(key)
            if prev is not None and (prev[0], prev[1]) > (ok, created):
                continue
            chosen[key] = (ok, created)
            bucket = side.values.setdefault(task, {})
            nan = side.nan.setdefault(task, {})
            if ok:
                bucket[(key[1], key[2])] = score_values(s.scores)[0]
                nan[(key[1], key[2])] = nan_values(s.scores)
            else:
                bucket.pop((key[1], key[2]), None)
                nan.pop((key[1], key[2]), None)
        side.values.setdefault(task, {})
    for (task, _, _), (ok, _) in chosen.items():
        if not ok:
            side.errors[task] += 1
    return side


def task_pairs(a: Side, b: Side) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """The paired tasks and the tasks on one side only (A's, B's)."""
    shared = sorted(set(a.values) & set(b.values))
    if shared:
        return [(t, t) for t in shared], sorted(set(a.values) - set(b.values)), sorted(set(b.values) - set(a.values))
    if len(a.values) == 1 and len(b.values) == 1:
        return [(next(iter(a.values)), next(iter(b.values)))], [], []
    raise CompareError(f"compare: the two sides share no task (A: {', '.join(sorted(a.values)) or 'none'}; "
                       f"B: {', '.join(sorted(b.values)) or 'none'})")


def _one_model(side: Side, name: str, task: str) -> str:
    models = side.models[task]
    if len(models) > 1:
        held = "; ".join(f"{m}: {len(ids)} samples" for m, ids in sorted(models.items()))
        raise CompareError(f"compare: side {name} mixes models for task {task} ({held}); give each side the logs "
                           "of one model (a file or a directory per model)")
    return next(iter(models), "none")


def _same_source(a: Side, b: Side, ta: str, tb: str) -> None:
    """Refuse two logs whose dataset or scorer differ (module docstring)."""
    why = []
    if a.datasets[ta] and b.datasets[tb] and a.datasets[ta] != b.datasets[tb]:
        why.append(f"dataset {', '.join(sorted(a.datasets[ta]))} against {', '.join(sorted(b.datasets[tb]))}")
    differ = sorted(i for i in set(a.content[ta]) & set(b.content[tb]) if a.content[ta][i] != b.content[tb][i])
    if differ:
        why.append(f"{len(differ)} shared sample id(s) hold different input or target (e.g. {', '.join(differ[:3])}; "
                   f"sample-id hash A {a.ids_hash(ta)}, B {b.ids_hash(tb)})")
    if a.scorers[ta] != b.scorers[tb]:
        why.append("the scorers (names or arguments) differ")
    if why:
        raise CompareError(f"compare: task {ta} (A) and {tb} (B) are not the same evaluation: " + "; ".join(why)
                           + ". Pass --pair-anyway to pair them by sample id regardless.")


def _matches(name: str, wanted: str | None) -> bool:
    return wanted is None or name == wanted or name.split(".")[-1] == wanted or name.split(".")[0] == wanted


def _missing(have: dict, other: dict) -> list[str]:
    ids_have = {k[0] for k in have}
    return sorted({k[0] if k[0] not in ids_have else f"{k[0]}@{k[1]}" for k in set(other) - set(have)})


def _compare_metric(name: str, va: dict, vb: dict, na: dict, nb: dict, bootstrap: int, seed: int,
                    alpha: float, better: str | None = "higher") -> tuple:
    in_a = {k: v[name] for k, v in va.items() if name in v}
    in_b = {k: v[name] for k, v in vb.items() if name in v}
    both_nan = {k for k, s in na.items() if name in s} & {k for k, s in nb.items() if name in s}
    per_id: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for k in sorted(set(in_a) & set(in_b)):
        per_id[k[0]].append((in_a[k], in_b[k]))
    ids = sorted(per_id)
    missing_a, missing_b = _missing(in_a, in_b), _missing(in_b, in_a)
    result = flips_a = flips_b = None
    if ids:
        xa = [sum(p[0] for p in per_id[i]) / len(per_id[i]) for i in ids]
        xb = [sum(p[1] for p in per_id[i]) / len(per_id[i]) for i in ids]
        result = paired_difference(xa, xb, bootstrap, seed, alpha=alpha)
        if result.test == "mcnemar_exact":
            right = 0 if better == "lower" else 1  # the value that is right on this metric
            flips_a = [i for i, x, y in zip(ids, xa, xb) if x == right and y == 1 - right]
            flips_b = [i for i, x, y in zip(ids, xa, xb) if x == 1 - right and y == right]
    both = sum(len(v) for v in per_id.values())
    nan_listed = sorted({k[0] if k[0] not in per_id else f"{k[0]}@{k[1]}" for k in both_nan})
    return ids, both, missing_a, missing_b, nan_listed, result, flips_a, flips_b


def compare(spec_a: str | Path, spec_b: str | Path, metric: str | None = None, bootstrap: int = 1000,
            seed: int = 0, *, alpha: float = ALPHA, adjustment: str = "holm", pair_anyway: bool = False) -> dict:
    """Every (task, metric) comparison of the two sides (module docstring)."""
    a, b = read_side(spec_a), read_side(spec_b)
    pairs, only_a, only_b = task_pairs(a, b)
    out: list[MetricComparison] = []
    for ta, tb in pairs:
        model_a, model_b = _one_model(a, "A", ta), _one_model(b, "B", tb)
        if not pair_anyway:
            _same_source(a, b, ta, tb)
        va, vb = a.values.get(ta, {}), b.values.get(tb, {})
        na, nb = a.nan.get(ta, {}), b.nan.get(tb, {})
        names: list[str] = []
        for vals in [*va.values(), *vb.values(), *na.values(), *nb.values()]:
            names += [k for k in vals if k not in names and _matches(k, metric)]
        for name in names:
            ids, both, miss_a, miss_b, nan_both, result, fa, fb = _compare_metric(name, va, vb, na, nb, bootstrap,
                                                                                   seed, alpha, direction(name))
            out.append(MetricComparison(ta, tb, name, direction(name), model_a, model_b, len(ids), both, miss_a,
                                        miss_b, nan_both, result, fa, fb))
    if metric is not None and not out:
        raise CompareError(f"compare: no metric named {metric!r} in the shared tasks")
    adjust([c.result for c in out], adjustment, alpha)

    def one_sided(side: Side, tasks: list[str]) -> dict[str, int]:
        return {t: len({k[0] for k in side.values[t]}) for t in tasks}

    return {"a": {"spec": str(spec_a), "logs": a.logs, "errors": dict(a.errors), "only_here": one_sided(a, only_a),
                  "sample_ids_sha256": {t: a.ids_hash(t) for t, _ in pairs}},
            "b": {"spec": str(spec_b), "logs": b.logs, "errors": dict(b.errors), "only_here": one_sided(b, only_b),
                  "sample_ids_sha256": {t: b.ids_hash(t) for _, t in pairs}},
            "bootstrap": bootstrap, "seed": seed, "alpha": alpha, "adjustment": adjustment,
            "pair_anyway": pair_anyway, "comparisons": out}


def _ci(ci) -> str:
    return f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "n/a"


def _list(ids: list[str], limit: int = 8) -> str:
    if not ids:
        return "none"
    return ", ".join(ids[:limit]) + (f" (+{len(ids) - limit} more)" if len(ids) > limit else "")


def _verdict(c: MetricComparison) -> str:
    r = c.result
    side = r.better(c.direction)
    text = ("significant" if r.significant else "n.s.") + (f", {side} better" if side else "")
    return text + (f" ({r.note})" if r.note else "")


def to_markdown(report: dict) -> str:
    lines = [f"# Paired comparison: A = {report['a']['spec']}, B = {report['b']['spec']}", "",
             f"Difference = mean(A) - mean(B) over the sample ids scored on both sides (per id: mean over the "
             "epochs both have). Tests, two-sided: " + "; ".join(f"{k} = {v}" for k, v in TESTS.items())
             + f". Significant: the p adjusted over the {len(report['comparisons'])} row(s) below "
             f"({ADJUSTMENTS[report['adjustment']]}) is below alpha = {report['alpha']:g}; it does not depend on "
             f"the seed. 95% percentile bootstrap intervals ({report['bootstrap']} resamples, seed "
             f"{report['seed']}), paired and unpaired, are shown beside it and never decide; a row says when they "
             "disagree. \"Better\" follows the metric's declared direction (↑ higher, ↓ lower; none declared: "
             "no arrow, no \"better\").", ""]
    if report["pair_anyway"]:
        lines += ["Paired with --pair-anyway: the dataset or scorer checks were skipped.", ""]
    head = ["task", "metric", "n paired", "missing in A", "missing in B", "NaN in both", "mean A", "mean B",
            "A - B", "paired 95% CI", "unpaired 95% CI", "test", "p", "p adjusted", "verdict"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in report["comparisons"]:
        r = c.result
        task = c.task_a if c.task_a == c.task_b else f"{c.task_a} vs {c.task_b}"
        metric = f"{c.metric} {arrow(c.metric)}".strip()
        counts = [str(len(c.missing_in_a)), str(len(c.missing_in_b)), str(len(c.nan_in_both))]
        if r is None:
            cells = [task, metric, "0", *counts] + ["n/a"] * 8
        else:
            test = "McNemar exact" if r.test == "mcnemar_exact" else "permutation"
            cells = [task, metric, str(c.n_paired), *counts, f"{r.mean_a:.3f}", f"{r.mean_b:.3f}", f"{r.diff:+.3f}",
                     _ci(r.ci), _ci(r.unpaired_ci), f"{test} ({r.counts_text(c.direction)})", f"{r.p_value:.4g}",
                     f"{r.p_decisive:.4g}", _verdict(c)]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for c in report["comparisons"]:
        if c.missing_in_a or c.missing_in_b or c.nan_in_both:
            lines.append(f"- {c.task_a} / {c.metric}: missing in A: {len(c.missing_in_a)} ({_list(c.missing_in_a)}); "
                         f"missing in B: {len(c.missing_in_b)} ({_list(c.missing_in_b)}); NaN on both sides: "
                         f"{len(c.nan_in_both)} ({_list(c.nan_in_both)})")
        if c.flips_a or c.flips_b:
            word = "right" if c.direction in ("higher", "lower") else "1"
            lines.append(f"- {c.task_a} / {c.metric} flips: {word} in A only: {len(c.flips_a)} "
                         f"({_list(c.flips_a, FLIPS_SHOWN)}); {word} in B only: {len(c.flips_b)} "
                         f"({_list(c.flips_b, FLIPS_SHOWN)})")
    for side in ("a", "b"):
        if report[side]["errors"]:
            lines.append(f"- {side.upper()}: samples with an error (no value): "
                         + ", ".join(f"{t}: {n}" for t, n in sorted(report[side]["errors"].items())))
        if report[side]["only_here"]:
            lines.append(f"- tasks in {side.upper()} only (not compared): "
                         + ", ".join(f"{t} ({n} samples)" for t, n in sorted(report[side]["only_here"].items())))
    models = {(c.model_a, c.model_b) for c in report["comparisons"]}
    lines += [f"- models: A = {ma}; B = {mb}" for ma, mb in sorted(models)]
    return "\n".join(lines).rstrip() + "\n"


def to_json(report: dict) -> str:
    return json.dumps({**report, "comparisons": [c.as_dict() for c in report["comparisons"]]}, indent=2,
                      default=lambda x: None if isinstance(x, float) and math.isnan(x) else str(x))
