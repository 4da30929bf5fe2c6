"""The Markdown leaderboard (``leaderboard.md``; also printed by the CLI).

Every piece of text from a log is escaped (:func:`.format.md_escape`): a model
named ``<script>`` stays text.
"""

from __future__ import annotations

import re
from typing import Any

from .format import (PAIRED_HEAD, unread_note, share, cell_text, column_n, estimate_text, fmt, interval, md_escape,
                     methods_used, metric_names, money, paired_cells, tasks_models, verdict_rule)
from .grouping import GROUP_TITLE, groups_of
from .provenance import cell, made_texts
from .stats import arrow


def _table(head: list[str], body: list[list[Any]]) -> list[str]:
    rows = [[md_escape(c) for c in row] for row in [head, *body]]
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    return [lines[0], "|" + "---|" * len(head), *lines[1:]]


def task_detail(board: dict[str, Any], task: str) -> list[str]:
    rows = [r for r in board["rows"] if r.task == task]
    prov = board.get("provenance") or {}
    lines = [f"## {md_escape(task)}", ""]
    body = [[r.model, r.n, "complete" if r.complete else f"INCOMPLETE ({r.status.describe()})", r.errors,
             r.cancelled, fmt(r.parse_failure_rate), fmt(r.refusal_rate), fmt(r.no_response_rate),
             fmt(r.calls, 2), fmt(r.input_tokens, 1),
             fmt(r.output_tokens, 1),
             money(r.cost_per_sample), money(r.cost_total), share(r.rerun_share), r.cost_source or "no price",
             estimate_text(cell(prov, r.model, r.task).get("estimate"), r)] for r in rows]
    lines += _table(["model", "n", "status", "errors", "cancelled", "parse fail ↓", "refusal ↓", "no response ↓",
                     "calls/sample", "tokens in",
                     "tokens out", "$/sample", "$ total (every call)", "re-run share", "cost from", "estimate vs actual"],
                    body) + [""]
    names = metric_names(rows)
    if names:
        lines += ["Metrics (mean [95% interval]; ↑ higher is better, ↓ lower is better, no arrow: the metric "
                  "declares no direction):", ""]
        if rows[0].cluster_key:
            lines += [f"Intervals clustered on the sample metadata key `{md_escape(rows[0].cluster_key)}` "
                      "(samples sharing it are not independent).", ""]
        body = [[f"{n} {arrow(n)}", *[interval(r.metrics.get(n)) or "n/a" for r in rows]] for n in names]
        lines += _table(["metric", *[r.model for r in rows]], body) + [""]
    lines += judges_table(board, task)
    groups = groups_of(rows)
    if groups:
        lines += [f"By {GROUP_TITLE} ({rows[0].headline}):", ""]
        body = [[r.model, *[f"{interval(r.groups[g])} (n={r.groups[g].n})" if g in r.groups else "n/a"
                            for g in groups]] for r in rows]
        lines += _table(["model", *groups], body) + [""]
    tm = {r.model: cell(prov, r.model, r.task).get("task_metrics") for r in rows}
    keys = sorted({f"{s}/{m}" for v in tm.values() if v for s, ms in v.items() for m in ms})
    if keys:
        lines += ["The task's own metrics (as its Inspect scorers computed them over each log; n/a when a cell "
                  "spans several logs):", ""]
        body = [[k + " " + arrow(k.split("/", 1)[1], k.split("/", 1)[0]),
                 *[fmt((tm[r.model] or {}).get(k.split("/", 1)[0], {}).get(k.split("/", 1)[1])) for r in rows]]
                for k in keys]
        lines += _table(["metric", *[r.model for r in rows]], body) + [""]
    comps = [c for c in board.get("comparisons", []) if c.task == task]
    if comps:
        lines += [f"Paired comparisons ({comps[0].metric} {arrow(comps[0].metric)}, A - B on the sample ids both "
                  f"finished). {verdict_rule(board)}", ""]
        body = [[c.model_a, c.model_b, *paired_cells(c)] for c in comps]
        lines += _table(PAIRED_HEAD, body) + [""]
    return lines


def judges_table(board: dict[str, Any], task: str) -> list[str]:
    from .judges import HEAD, table_rows

    body = table_rows(board, task)
    return ["Judges of the model-graded scores (report/judges.py):", "", *_table(HEAD, body), ""] if body else []


def reproducibility(board: dict[str, Any]) -> list[str]:
    prov = board.get("provenance") or {}
    if not prov:
        return []
    lines = ["## Reproducibility", "",
             f"Built {prov['created']} with conflict-eval {prov['conflict_eval_version'] or 'not installed'} and "
             f"Inspect {prov['inspect_ai_version']}.", ""]
    for task, t in prov["tasks"].items():
        lines += [f"### {md_escape(task)}", ""]
        facts = [["dataset", ", ".join(t["datasets"])], ["file", ", ".join(t["files"])],
                 ["file sha256", ", ".join(t["dataset_sha256"])], ["upstream revision", "; ".join(t["revisions"])],
                 ["sample ids sha256", ", ".join(t["sample_ids_sha256"])],
                 ["conflict-eval (run)", ", ".join(t["conflict_eval"])], ["Inspect (run)", ", ".join(t["inspect_ai"])],
                 ["git commit (run)", ", ".join(t["git_commits"])], ["grader", ", ".join(t["grader"])],
                 *[[f"model {m}", f"endpoint: {v['endpoint']}; revision: {v['revision']}"]
                   for m, v in t["models"].items()]]
        lines += _table(["", "value"], facts) + [""]
        trows = [r for r in board["rows"] if r.task == task]
        lines += ["How each cell was made (the model's own generation config, as Inspect merged it for that "
                  "model):", ""]
        lines += _table(["model", "generation config", "batch", "judges", "code commit"],
                        [[r.model, *made_texts(cell(prov, r.model, task).get("made"))] for r in trows]) + [""]
        body = [[r.model, (cell(prov, r.model, task).get("results_sha256") or "n/a")[:16],
                 "below" if cell(prov, r.model, task).get("command")
                 else f"not one command: {cell(prov, r.model, task).get('why') or 'no log'}",
                 " ; ".join(f"conflict-eval reproduce {c} --model {r.model}"
                            for c in cell(prov, r.model, task).get("cards") or []) or "none"]
                for r in trows]
        lines += _table(["model", "results sha256 (16)", "reproduce", "paper card"], body) + [""]
        for r in trows:  # one block per cell, to copy
            c = cell(prov, r.model, task)
            cmds = [c["command"]] if c.get("command") else c.get("commands") or []
            if cmds:
                fence = "`" * max([3] + [len(run) + 1 for x in cmds for run in re.findall(r"`+", x)])
                lines += [f"{md_escape(r.model)}" + ("" if c.get("command") else " (one command per log)") + ":",
                          "", fence + "sh", *cmds, fence, ""]
    return lines


def to_markdown(board: dict[str, Any]) -> str:
    rows = board["rows"]
    tasks, models = tasks_models(rows)
    heads = board.get("heads") or {}
    ranks = board.get("ranks") or {}
    cells = {(r.model, r.task): r for r in rows}
    first = {t: next((r for r in rows if r.task == t and r.headline), None) for t in tasks}
    lines = ["# conflict-eval leaderboard", "",
             "Each cell: the task's headline metric (its `Task(headline_metric=...)`, as Inspect resolves it) "
             f"[95% interval] · notes · n samples · $ spent. Intervals: {methods_used(rows)}. "
             "\"best\": the best mean by the metric's declared direction; \"tied\": its paired test against the "
             "best is not significant (see each task's paired comparisons).", ""]
    head_cells = [f"{heads.get(t, t)} · {first[t].headline} {arrow(first[t].headline)}" if first[t]
                  else heads.get(t, t) for t in tasks]
    most = column_n(rows)
    from .judges import coverage_note

    body = [[m, *[cell_text(cells.get((m, t)), ranks.get((m, t)), most[t], coverage_note(board, m, t)) for t in tasks]]
            for m in models]
    lines += _table(["model", *head_cells], body) + [""]
    from .judges import overview as judge_overview

    judged = judge_overview(board)
    if judged:
        lines += ["Model-graded cells (who graded them; each task's Judges table has the rest):", "",
                  *[f"- {line}" for line in judged], ""]
    if any(heads.get(t, t) != t for t in tasks):
        lines += ["Columns:", ""] + _table(["column", "task"], [[heads.get(t, t), t] for t in tasks]) + [""]
    for t in tasks:
        lines += task_detail(board, t)
    lines += reproducibility(board)
    st = board.get("stats") or {}
    lines += [f"{st.get('logs', 0)} logs, {st.get('samples_read', 0)} samples read, "
              f"{st.get('duplicates_dropped', 0)} duplicate samples counted once, "
              f"{st.get('incomplete_cells', 0)} incomplete cell(s)" + unread_note(st) + ".", ""]
    return "\n".join(lines)
