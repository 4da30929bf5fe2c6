"""``conflict-eval compare A B``: a paired comparison of two sets of Inspect
logs -- any Inspect task, ours or not.

Each side is a log file or a directory of logs (searched recursively, read
with ``inspect_ai.log.list_eval_logs`` / ``read_eval_log``). Samples are
paired by task, sample id and epoch:

* **tasks** pair by the log's task name; when each side holds exactly one task
  they pair whatever their names (comparing two variants of one task);
* the same (task, id, epoch) in several logs of one side counts once: a copy
  without error beats one with an error, then the most recently created log;
* a **metric** is a score value as the leaderboard reads it
  (:func:`conflict_eval.report.logs.score_values`: numbers, ``C``/``I``/``P``/``N``,
  booleans and yes/no; one metric per key of a dict value, named
  ``scorer.key`` when a sample has several scorers); a sample with an
  error, or a NaN (unscored) value, has no value for it;
* the **unit** of the statistics is the sample id: with several epochs, each
  id's value is its mean over the epochs present on both sides;
* the statistics are :func:`conflict_eval.report.paired.paired_difference`,
  the function of the leaderboard's paired table: difference A - B, paired
  bootstrap interval, the unpaired interval beside it, and the exact paired
  test (McNemar exact for 0/1 values, else the sign test).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .logs import score_values
from .paired import TESTS, Paired, paired_difference


@dataclass
class Side:
    """One side's samples: task -> (id, epoch) -> metric values; models and logs seen."""

    values: dict[str, dict[tuple[str, int], dict[str, float]]] = field(default_factory=dict)
    models: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    logs: list[str] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))


@dataclass
class MetricComparison:
    task_a: str
    task_b: str
    metric: str
    model_a: str
    model_b: str
    n_paired: int
    """Sample ids with a value on both sides (the unit of the statistics)."""
    pairs: int
    """(id, epoch) pairs behind them."""
    missing_in_a: list[str]
    """Ids with a value in B but none in A (or ``"id@epoch"`` for a missing epoch)."""
    missing_in_b: list[str]
    result: Paired | None

    def as_dict(self) -> dict:
        d = asdict(self)
        d["result"] = None if self.result is None else {**asdict(self.result), "significant": self.result.significant}
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
        side.models[task].add(log.eval.model)
        for s in log.samples or []:
            key = (task, str(s.id), int(s.epoch))
            ok = s.error is None and bool(s.scores)
            prev = chosen.get(key)
            if prev is not None and (prev[0], prev[1]) > (ok, created):
                continue
            chosen[key] = (ok, created)
            bucket = side.values.setdefault(task, {})
            if ok:
                bucket[(key[1], key[2])] = score_values(s.scores)[0]
            else:
                bucket.pop((key[1], key[2]), None)
    for (task, _, _), (ok, _) in chosen.items():
        if not ok:
            side.errors[task] += 1
    return side


def task_pairs(a: Side, b: Side) -> list[tuple[str, str]]:
    shared = sorted(set(a.values) & set(b.values))
    if shared:
        return [(t, t) for t in shared]
    if len(a.values) == 1 and len(b.values) == 1:
        return [(next(iter(a.values)), next(iter(b.values)))]
    raise ValueError(f"compare: the two sides share no task (A: {', '.join(sorted(a.values)) or 'none'}; "
                     f"B: {', '.join(sorted(b.values)) or 'none'})")


def _matches(name: str, wanted: str | None) -> bool:
    return wanted is None or name == wanted or name.split(".")[-1] == wanted or name.split(".")[0] == wanted


def compare(spec_a: str | Path, spec_b: str | Path, metric: str | None = None, bootstrap: int = 1000,
            seed: int = 0) -> dict:
    """Every (task, metric) comparison of the two sides (module docstring)."""
    a, b = read_side(spec_a), read_side(spec_b)
    out: list[MetricComparison] = []
    for ta, tb in task_pairs(a, b):
        va, vb = a.values.get(ta, {}), b.values.get(tb, {})
        names: list[str] = []
        for vals in list(va.values()) + list(vb.values()):
            names += [k for k in vals if k not in names and _matches(k, metric)]
        for name in names:
            in_a = {k: v[name] for k, v in va.items() if name in v and not math.isnan(v[name])}
            in_b = {k: v[name] for k, v in vb.items() if name in v and not math.isnan(v[name])}
            both = sorted(set(in_a) & set(in_b))
            per_id: dict[str, list[tuple[float, float]]] = defaultdict(list)
            for k in both:
                per_id[k[0]].append((in_a[k], in_b[k]))
            ids = sorted(per_id)

            def missing(have: dict, other: dict) -> list[str]:
                ids_have = {k[0] for k in have}
                return sorted({k[0] if k[0] not in ids_have else f"{k[0]}@{k[1]}" for k in set(other) - set(have)})

            result = None
            if ids:
                xa = [sum(p[0] for p in per_id[i]) / len(per_id[i]) for i in ids]
                xb = [sum(p[1] for p in per_id[i]) / len(per_id[i]) for i in ids]
                result = paired_difference(xa, xb, bootstrap, seed)
            out.append(MetricComparison(ta, tb, name, ", ".join(sorted(a.models[ta])), ", ".join(sorted(b.models[tb])),
                                        len(ids), len(both), missing(in_a, in_b), missing(in_b, in_a), result))
    if metric is not None and not out:
        raise ValueError(f"compare: no metric named {metric!r} in the shared tasks")
    return {"a": {"spec": str(spec_a), "logs": a.logs, "errors": dict(a.errors)},
            "b": {"spec": str(spec_b), "logs": b.logs, "errors": dict(b.errors)},
            "bootstrap": bootstrap, "seed": seed, "comparisons": out}


def _ci(ci) -> str:
    return f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "n/a"


def _list(ids: list[str], limit: int = 8) -> str:
    if not ids:
        return "none"
    return ", ".join(ids[:limit]) + (f" (+{len(ids) - limit} more)" if len(ids) > limit else "")


def to_markdown(report: dict) -> str:
    lines = [f"# Paired comparison: A = {report['a']['spec']}, B = {report['b']['spec']}", "",
             f"Difference = mean(A) - mean(B) over the sample ids scored on both sides (per id: mean over the "
             f"epochs both have). 95% percentile bootstrap intervals ({report['bootstrap']} resamples, seed "
             f"{report['seed']}): paired (ids resampled together) and unpaired (each side resampled on its own). "
             "Exact test, two-sided: " + "; ".join(f"{k} = {v}" for k, v in TESTS.items()) + ".", ""]
    head = ["task", "metric", "n paired", "missing in A", "missing in B", "mean A", "mean B", "A - B",
            "paired 95% CI", "unpaired 95% CI", "exact test", "p", ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in report["comparisons"]:
        r = c.result
        task = c.task_a if c.task_a == c.task_b else f"{c.task_a} vs {c.task_b}"
        if r is None:
            cells = [task, c.metric, "0", str(len(c.missing_in_a)), str(len(c.missing_in_b))] + ["n/a"] * 7 + [""]
        else:
            test = "McNemar exact" if r.test == "mcnemar_exact" else "sign"
            cells = [task, c.metric, str(c.n_paired), str(len(c.missing_in_a)), str(len(c.missing_in_b)),
                     f"{r.mean_a:.3f}", f"{r.mean_b:.3f}", f"{r.diff:+.3f}", _ci(r.ci), _ci(r.unpaired_ci),
                     f"{test} ({r.a_better} A-better / {r.b_better} B-better)", f"{r.p_value:.4g}",
                     "significant" if r.significant else "n.s."]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for c in report["comparisons"]:
        if c.missing_in_a or c.missing_in_b:
            lines.append(f"- {c.task_a} / {c.metric}: missing in A: {_list(c.missing_in_a)}; "
                         f"missing in B: {_list(c.missing_in_b)}")
    for side in ("a", "b"):
        if report[side]["errors"]:
            lines.append(f"- {side.upper()}: samples with an error (no value): "
                         + ", ".join(f"{t}: {n}" for t, n in sorted(report[side]["errors"].items())))
    models = {(c.model_a, c.model_b) for c in report["comparisons"]}
    lines += [f"- models: A = {ma}; B = {mb}" for ma, mb in sorted(models)]
    return "\n".join(lines).rstrip() + "\n"


def to_json(report: dict) -> str:
    return json.dumps({**report, "comparisons": [c.as_dict() for c in report["comparisons"]]}, indent=2)
