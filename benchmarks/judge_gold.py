"""Each judge's accuracy and Cohen's kappa on the hand-labelled ConflictScore
slice (``tests/data/judge_gold/``, labelling rule in its README).

    python benchmarks/judge_gold.py [--judge conflict_eval/smollm2 --judge openai/gpt-4o ...]
                                    [--data ../shared/data] [--grader-max-tokens 160] [--limit N]

Every cell is one Inspect sample whose input is the Table 8 prompt
(``pipeline.label_prompt``) of its claim and document; each judge runs the
task once (temperature 0) and its reply is read by ``parse_label``, the
ConflictScore reader. Per judge: **accuracy** (correct / all cells; an
unreadable reply is wrong), **coverage** (readable replies / cells),
accuracy on the readable cells, and **Cohen's kappa**
(``sklearn.metrics.cohen_kappa_score``) against the hand labels, on all
cells (an unreadable reply is its own category) and on the readable ones.
With several judges: the strict-majority label's accuracy and kappa,
Krippendorff's alpha of the panel (Inspect's metric) and the pairwise
correlation of the judges' errors (``panel.error_correlation``).
Writes ``benchmarks/results/judge_gold.{json,md}``.
"""

from __future__ import annotations

import _common  # noqa: F401  (offline settings first)

import argparse
import json
import tempfile
from datetime import datetime

from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import TaskState, generate

from conflict_eval.scorers.conflictscore.gold import LABELS, load_gold
from conflict_eval.scorers.conflictscore.panel import alpha, error_correlation, strict_majority
from conflict_eval.scorers.conflictscore.parse import parse_label
from conflict_eval.scorers.conflictscore.pipeline import label_prompt

CELLS = _common.REPO / "tests" / "data" / "judge_gold" / "cells.jsonl"
UNREADABLE = "UNREADABLE"


@scorer(metrics=[accuracy()])
def gold_label():
    """1 when the judge's label (``parse_label``) equals the hand label; an unreadable reply is 0."""

    async def score(state: TaskState, target: Target) -> Score:
        p = parse_label(state.output.completion)
        return Score(value=int(p.label == target.text), answer=p.label or UNREADABLE,
                     metadata={"label": p.label, "error": p.error})

    return score


def judge_task(cells) -> Task:
    return Task(dataset=[Sample(id=c.id, input=label_prompt(c.claim, c.document), target=c.label,
                                metadata={"source": c.source}) for c in cells],
                solver=generate(), scorer=gold_label(), name="judge_gold")


def kappa(gold: list[str], labels: list[str | None], readable_only: bool) -> float | None:
    from sklearn.metrics import cohen_kappa_score

    pairs = [(g, x if x is not None else UNREADABLE) for g, x in zip(gold, labels)
             if not (readable_only and x is None)]
    if len(pairs) < 2:
        return None
    value = cohen_kappa_score([g for g, _ in pairs], [x for _, x in pairs], labels=[*LABELS, UNREADABLE])
    return None if value != value else float(value)  # NaN (one category only) -> undefined


def judge_stats(gold: list[str], labels: list[str | None]) -> dict:
    n = len(gold)
    readable = [(g, x) for g, x in zip(gold, labels) if x is not None]
    return {
        "cells": n, "readable": len(readable), "coverage": len(readable) / n if n else None,
        "accuracy": sum(g == x for g, x in zip(gold, labels)) / n if n else None,
        "accuracy_readable": sum(g == x for g, x in readable) / len(readable) if readable else None,
        "kappa": kappa(gold, labels, readable_only=False), "kappa_readable": kappa(gold, labels, readable_only=True),
        "predicted": {lab: sum(1 for x in labels if x == lab) for lab in [*LABELS, None]},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--judge", action="append", help="a judge model (repeatable; default conflict_eval/smollm2)")
    parser.add_argument("--data", default=str(_common.DATA), help="the shared data folder")
    parser.add_argument("--grader-max-tokens", type=int, default=160)
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    judges = args.judge or ["conflict_eval/smollm2"]
    cells = load_gold(CELLS, args.data)[: args.limit]
    gold = [c.label for c in cells]
    results: dict = {"cells": len(cells), "gold_labels": {lab: gold.count(lab) for lab in LABELS}, "judges": {},
                     "grader_max_tokens": args.grader_max_tokens, "temperature": 0.0}
    per_judge: dict[str, list[str | None]] = {}
    for judge in judges:
        with tempfile.TemporaryDirectory() as log_dir:
            [log] = inspect_eval(judge_task(cells), model=judge, log_dir=log_dir, display="none",
                                 temperature=0.0, max_tokens=args.grader_max_tokens)
            assert log.status == "success", log.error
            by_id = {s.id: s.scores["gold_label"].metadata["label"] for s in log.samples}
            replies = {s.id: s.output.completion[:300] for s in log.samples}
        labels = [by_id[c.id] for c in cells]
        per_judge[judge] = labels
        seconds = (datetime.fromisoformat(log.stats.completed_at)
                   - datetime.fromisoformat(log.stats.started_at)).total_seconds()
        results["judges"][judge] = {**judge_stats(gold, labels), "seconds": seconds,
                                    "per_cell": [{"id": c.id, "gold": c.label, "label": by_id[c.id],
                                               "reply": replies[c.id]} for c in cells],
                                    "by_source": {src: judge_stats([g for g, c in zip(gold, cells) if c.source == src],
                                                                   [x for x, c in zip(labels, cells) if c.source == src])
                                                  for src in sorted({c.source for c in cells})}}
    if len(judges) > 1:
        votes = [[per_judge[j][i] for j in judges] for i in range(len(cells))]
        majority = [strict_majority(v) for v in votes]
        results["panel"] = {**judge_stats(gold, majority), "alpha": alpha(votes),
                            "error_correlation": {f"{a} ~ {b}": error_correlation(per_judge[a], per_judge[b], gold)
                                                  for i, a in enumerate(judges) for b in judges[i + 1:]}}
    import os

    load = os.getloadavg()
    results["load_average_1_5_15"] = load
    _common.RESULTS.mkdir(exist_ok=True)
    (_common.RESULTS / "judge_gold.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    (_common.RESULTS / "judge_gold.md").write_text(markdown(results))
    print(markdown(results))


def _f(x) -> str:
    return "n/a" if x is None or x != x else f"{x:.3f}"


def markdown(r: dict) -> str:
    lines = ["# Judges on the hand-labelled ConflictScore slice", "",
             f"{r['cells']} cells of `tests/data/judge_gold/` (gold: " +
             ", ".join(f"{k} {v}" for k, v in r["gold_labels"].items()) +
             f"); Table 8 prompt, temperature 0, {r['grader_max_tokens']} output tokens; replies read by "
             "`parse_label`. Accuracy counts an unreadable reply as wrong; kappa is Cohen's "
             "(`sklearn.metrics.cohen_kappa_score`) on all cells (unreadable = its own category) and on the "
             "readable ones. Majority-class baseline accuracy: "
             f"{max(r['gold_labels'].values()) / r['cells']:.3f}.", "",
             "| judge | coverage | accuracy | accuracy (readable) | kappa | kappa (readable) | labels given | seconds |",
             "|---|---|---|---|---|---|---|---|"]
    for name, s in r["judges"].items():
        given = ", ".join(f"{k or 'unreadable'} {v}" for k, v in s["predicted"].items())
        lines.append(f"| {name} | {_f(s['coverage'])} | {_f(s['accuracy'])} | {_f(s['accuracy_readable'])} | "
                     f"{_f(s['kappa'])} | {_f(s['kappa_readable'])} | {given} | {s['seconds']:.0f} |")
        for src, b in s["by_source"].items():
            lines.append(f"| ↳ {src} ({b['cells']} cells) | {_f(b['coverage'])} | {_f(b['accuracy'])} | "
                         f"{_f(b['accuracy_readable'])} | {_f(b['kappa'])} | {_f(b['kappa_readable'])} | | |")
    if "panel" in r:
        p = r["panel"]
        lines += ["", f"Panel (strict majority): accuracy {_f(p['accuracy'])}, kappa {_f(p['kappa'])}, "
                      f"Krippendorff's alpha {_f(p['alpha'])}; error correlation: "
                  + ", ".join(f"{k} {_f(v)}" for k, v in p["error_correlation"].items())]
    lines += ["", f"Load average (1/5/15 min) when written: {', '.join(f'{x:.2f}' for x in r['load_average_1_5_15'])} "
                  "(2 shared cores; times are not speed claims)."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
