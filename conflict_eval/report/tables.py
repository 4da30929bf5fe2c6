"""CSV and JSON outputs: ``leaderboard.csv`` (model x task), ``conflict_types.csv``
(by sample group; the name is kept for users who read it), ``paired.csv``,
``leaderboard.json``. Values from logs are written as data (CSV quoting, JSON
strings, with ``<``, ``>`` and ``&`` as JSON ``\\u`` escapes), never as markup."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from .format import metric_names
from .grouping import GROUP_CSV_COLUMN
from .stats import Comparison, MetricSummary, Row, direction


def _csv(header: list[str], rows: list[list[Any]]) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(header)
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    return out.getvalue()


def to_csv(rows: list[Row]) -> str:
    """One row per model x task with every metric, its stderr and 95% interval."""
    names = metric_names(rows)
    header = ["model", "task", "headline", "n", "errors"]
    for name in names:
        header += [name, f"{name}_stderr", f"{name}_ci_low", f"{name}_ci_high"]
    header += ["parse_failure_rate", "refusal_rate", "no_response_rate", "calls_per_sample", "input_tokens_per_sample", "output_tokens_per_sample",
               "cost_per_sample_usd", "cost_total_usd", "cost_source", "complete", "samples_done", "samples_total",
               "cancelled", "rerun_share"]
    body = []
    for r in rows:
        row: list[Any] = [r.model, r.task, r.headline, r.n, r.errors]
        for name in names:
            m = r.metrics.get(name)
            row += [None] * 4 if m is None else [m.mean, m.stderr, m.ci[0] if m.ci else None,
                                                 m.ci[1] if m.ci else None]
        row += [r.parse_failure_rate, r.refusal_rate, r.no_response_rate, r.calls, r.input_tokens, r.output_tokens, r.cost_per_sample, r.cost_total,
                r.cost_source, r.complete, r.status.done if r.status else None, r.status.total if r.status else None,
                r.cancelled, r.rerun_share]
        body.append(row)
    return _csv(header, body)


def conflict_types_csv(rows: list[Row]) -> str:
    body = [[r.model, r.task, r.headline, g, m.n, m.mean, m.ci[0] if m.ci else None, m.ci[1] if m.ci else None]
            for r in rows for g, m in r.groups.items()]
    return _csv(["model", "task", "metric", GROUP_CSV_COLUMN, "n", "mean", "ci_low", "ci_high"], body)


def paired_csv(comps: list[Comparison]) -> str:
    """One row per paired comparison: the verdict of report.paired (test, raw and adjusted p, significant,
    the better model by the metric's direction) and the bootstrap intervals beside it."""
    body = [[c.task, c.metric, direction(c.metric), c.model_a, c.model_b, c.n, c.diff, c.ci[0] if c.ci else None,
             c.ci[1] if c.ci else None, c.result.test, c.result.p_value, c.result.p_adjusted, c.result.adjustment,
             c.result.alpha, c.significant, c.better, c.result.note, c.n_a, c.n_b,
             c.unpaired_ci[0] if c.unpaired_ci else None, c.unpaired_ci[1] if c.unpaired_ci else None]
            for c in comps]
    return _csv(["task", "metric", "direction", "model_a", "model_b", "n", "difference", "ci_low", "ci_high",
                 "test", "p", "p_adjusted", "adjustment", "alpha", "significant", "better", "note", "n_model_a",
                 "n_model_b", "unpaired_ci_low", "unpaired_ci_high"], body)


def to_json(board: dict[str, Any]) -> str:
    def metric(m: MetricSummary) -> dict:
        return {"mean": m.mean, "stderr": m.stderr, "ci": list(m.ci) if m.ci else None, "n": m.n,
                "interval_method": m.method, "clusters": m.clusters}

    def row_dict(r: Row) -> dict:
        d = {k: v for k, v in r.__dict__.items() if k not in ("metrics", "groups", "per_id_headline", "status")}
        d["metrics"] = {k: {**metric(m), "direction": direction(k)} for k, m in r.metrics.items()}
        d["groups"] = {k: metric(m) for k, m in r.groups.items()}
        d["status"] = None if r.status is None else {**r.status.__dict__, "complete": r.status.complete}
        return d

    text = json.dumps({"provenance": board.get("provenance"), "stats": board.get("stats"),
                       "heads": board.get("heads"), "rows": [row_dict(r) for r in board["rows"]],
                       "alpha": board.get("alpha"), "adjustment": board.get("adjustment"),
                       "comparisons": [{**{k: v for k, v in c.__dict__.items() if k != "result"},
                                        **c.result.as_dict(), "better": c.better}
                                       for c in board.get("comparisons", [])]}, indent=2, default=str)
    # the same JSON values, safe to embed in a page: no raw <, > or & from a log
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
