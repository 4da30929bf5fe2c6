"""Each judge's accuracy, with a Wilson interval, on the hand-labelled
ConflictScore slice (``tests/data/judge_gold/``, labelling rules in its README).

    python benchmarks/judge_gold.py [--judge conflict_eval/smollm2 --judge openai/gpt-4o ...]
                                    [--data ../shared/data] [--grader-max-tokens 160] [--limit N]
    python benchmarks/judge_gold.py --from-json   # recompute the tables from the saved labels
    python benchmarks/judge_gold.py --from-log LOG.eval --judge NAME   # a judge's labels from its log (also
                                                                      # one still running: the cells so far)

Every cell is one Inspect sample whose input is the Table 8 prompt
(``pipeline.label_prompt``) of its claim and document. Each judge runs the
task once (temperature 0). Two scorers: ``judge_label`` (the judge's label as
``parse_label``, the ConflictScore reader, reads it; ``UNREADABLE`` when it
cannot) and ``human_label``, the hand labels applied by sample id with
Inspect's ``precomputed_scores()`` (``gold.write_human_scores``), so each
sample of the log holds both. The statistics (``gold.judge_stats``): accuracy
(an unreadable reply is wrong) and accuracy on the readable cells, each with a
95% Wilson interval; coverage; Cohen's kappa; the acceptance rate of the
known-wrong controls by style (share of control cells the document does not
support that the judge labels SUPPORTS). With several judges, the panel's
strict-majority label, pairwise kappa, raw agreement, Krippendorff's alpha,
the judges' error correlation and the effective number of judges
(``panel.effective_judges``). Writes ``benchmarks/results/judge_gold.{json,md}``.
"""

from __future__ import annotations

import _common  # noqa: F401  (offline settings first)

import argparse
import json
import os
import tempfile
from datetime import datetime

from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, precomputed_scores, scorer
from inspect_ai.solver import TaskState, generate

from conflict_eval.scorers.conflictscore.gold import load_gold, slice_report, write_human_scores
from conflict_eval.scorers.conflictscore.parse import parse_label
from conflict_eval.scorers.conflictscore.pipeline import label_prompt

CELLS = _common.REPO / "tests" / "data" / "judge_gold" / "cells.jsonl"
UNREADABLE = "UNREADABLE"
OUT = _common.RESULTS / "judge_gold.json"
WHAT = {"conflict_eval/smollm2": "SmolLM2-135M-Instruct (Q4_1 GGUF on llama.cpp), the toolkit's offline model"}


@scorer(metrics=[])
def judge_label():
    """The judge's label as ``parse_label`` reads it (``UNREADABLE`` when it cannot)."""

    async def score(state: TaskState, target: Target) -> Score:
        p = parse_label(state.output.completion)
        return Score(value=p.label or UNREADABLE, answer=state.output.completion[:300], metadata={"error": p.error})

    return score


@scorer(metrics=[])
def human_label(scores: str):
    """The hand label of the cell, from the slice's human scores (``precomputed_scores``)."""
    return precomputed_scores(scores, on_missing="error")


def judge_task(cells, human_scores: str) -> Task:
    return Task(dataset=[Sample(id=c.id, input=label_prompt(c.claim, c.document), metadata={"source": c.source})
                         for c in cells],
                solver=generate(), scorer=[judge_label(), human_label(human_scores)], name="judge_gold")


def run_judge(judge: str, cells, max_tokens: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        human = os.path.join(tmp, "human_scores.jsonl")
        write_human_scores(cells, human)
        [log] = inspect_eval(judge_task(cells, human), model=judge, log_dir=tmp, display="none",
                             temperature=0.0, max_tokens=max_tokens)
        if log.status != "success":
            raise SystemExit(f"{judge}: the run failed: {log.error}")
        by_id = {s.id: s for s in log.samples}
    per_cell = []
    for c in cells:
        s = by_id[c.id]
        if s.scores["human_label"].value != c.label:  # the precomputed human score is the slice's label
            raise SystemExit(f"{c.id}: human_label {s.scores['human_label'].value!r} != {c.label!r}")
        label = s.scores["judge_label"].value
        per_cell.append({"id": c.id, "label": None if label == UNREADABLE else label,
                         "reply": s.scores["judge_label"].answer})
    seconds = (datetime.fromisoformat(log.stats.completed_at)
               - datetime.fromisoformat(log.stats.started_at)).total_seconds()
    return {"per_cell": per_cell, "seconds": seconds, "what": WHAT.get(judge, judge), "partial": None}


def labels_from_log(path: str, cells, name: str) -> dict:
    """The per-cell labels of a ``judge_gold`` log from its sample summaries (a log still being
    written holds the samples finished so far); ``partial`` says how many of the slice's cells."""
    from inspect_ai.log import read_eval_log_sample_summaries

    by_id = {str(s.id): s for s in read_eval_log_sample_summaries(path)}
    per_cell = []
    for c in cells:
        s = by_id.get(c.id)
        if s is None or not s.scores or "judge_label" not in s.scores:
            continue
        if s.scores["human_label"].value != c.label:
            raise SystemExit(f"{path}: {c.id}: human_label {s.scores['human_label'].value!r} != {c.label!r}")
        label = s.scores["judge_label"].value
        per_cell.append({"id": c.id, "label": None if label == UNREADABLE else label,
                         "reply": s.scores["judge_label"].answer})
    return {"per_cell": per_cell, "seconds": None, "what": WHAT.get(name, name),
            "partial": f"{len(per_cell)} of {len(cells)} cells" if len(per_cell) < len(cells) else None}


def shared_replies_on_slice(cells) -> dict:
    """How many of the real replies in ``../shared/replies*`` answer a Table 8 prompt, and how many
    of those prompts are a slice cell's (claim and document both in it): judges they could measure."""
    import glob

    root = _common.REPO.parent / "shared"
    prompts = 0
    hits = set()
    for f in glob.glob(str(root / "replies*" / "**" / "done" / "*.json"), recursive=True):
        try:
            msgs = json.loads(open(f, encoding="utf-8").read()).get("messages") or []
        except (OSError, ValueError):
            continue
        text = msgs[-1].get("content") if msgs else ""
        text = text if isinstance(text, str) else " ".join(x.get("text", "") for x in text if isinstance(x, dict))
        if "Document-Claim Conflict Detection" in text:
            prompts += 1
            hits |= {c.id for c in cells if c.claim in text and c.document[:80] in text}
    return {"label_prompts": prompts, "slice_cells_answered": len(hits)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--judge", action="append", help="a judge model (repeatable; default conflict_eval/smollm2)")
    parser.add_argument("--data", default=str(_common.DATA), help="the shared data folder")
    parser.add_argument("--grader-max-tokens", type=int, default=160)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--from-json", action="store_true", help="recompute the tables from the saved labels")
    parser.add_argument("--from-log", help="read the judge's labels from this judge_gold log (the sample summaries "
                                           "written so far, so a run still going counts its finished cells)")
    args = parser.parse_args()
    cells = load_gold(CELLS, args.data)[: args.limit]
    if args.from_log:
        name = (args.judge or ["conflict_eval/smollm2"])[0]
        runs = {name: labels_from_log(args.from_log, cells, name)}
        max_tokens, load = args.grader_max_tokens, os.getloadavg()
        done = {r["id"] for r in runs[name]["per_cell"]}
        cells = [c for c in cells if c.id in done]
    elif args.from_json:
        saved = json.loads(OUT.read_text())
        runs = {name: {"per_cell": j["per_cell"], "seconds": j.get("seconds"), "what": WHAT.get(name, j.get("what", name)),
                       "partial": j.get("partial")} for name, j in saved["judges"].items()}
        max_tokens, load = saved["grader_max_tokens"], saved.get("load_average_1_5_15")
    else:
        max_tokens = args.grader_max_tokens
        runs = {judge: run_judge(judge, cells, max_tokens) for judge in args.judge or ["conflict_eval/smollm2"]}
        load = os.getloadavg()
        _common.RESULTS.mkdir(exist_ok=True)  # the labels first: the tables can be recomputed with --from-json
        OUT.write_text(json.dumps({"judges": runs, "grader_max_tokens": max_tokens, "load_average_1_5_15": load},
                                  indent=2, default=str) + "\n")
    results = slice_report(cells, {name: {r["id"]: r["label"] for r in run["per_cell"]} for name, run in runs.items()})
    for name, run in runs.items():
        results["judges"][name].update(run)
    results.update({"grader_max_tokens": max_tokens, "temperature": 0.0, "load_average_1_5_15": load,
                    "shared_replies": shared_replies_on_slice(cells)})
    _common.RESULTS.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2, default=str) + "\n")
    (_common.RESULTS / "judge_gold.md").write_text(markdown(results))
    print(markdown(results))


def _f(x) -> str:
    return "n/a" if x is None or x != x else f"{x:.3f}"


def _ci(est: dict | None) -> str:
    if not est or est.get("n", 0) == 0:
        return "n/a"
    return f"{est['k']}/{est['n']} = {_f(est['rate'])} [{_f(est['low'])}, {_f(est['high'])}]"


def markdown(r: dict) -> str:
    gold = r["gold_labels"]
    lines = ["# Judges on the hand-labelled ConflictScore slice", "",
             f"{r['cells']} cells, {r['claims']} distinct claims, of `tests/data/judge_gold/` (gold: "
             + ", ".join(f"{k} {v}" for k, v in gold.items())
             + f"; {r['controls']['specific_wrong']} specific and {r['controls']['vague_wrong']} vague known-wrong "
             "control cells). Table 8 prompt, temperature 0, "
             f"{r['grader_max_tokens']} output tokens; replies read by `parse_label`; the hand labels enter the log as "
             "Inspect `precomputed_scores()`. Accuracy counts an unreadable reply as wrong; intervals are 95% Wilson "
             "(`scipy.stats.binomtest(...).proportion_ci(method=\"wilson\")`). Kappa is Cohen's (unreadable = its own "
             "category). Control acceptance = share of the control cells that their document does not support that "
             "the judge labelled SUPPORTS (a known-wrong claim accepted). Majority-class baseline accuracy: "
             f"{max(gold.values()) / r['cells']:.3f}.", "",
             "| judge | what it is | coverage | accuracy [95% CI] | accuracy on readable [95% CI] | κ | "
             "accepts specific wrong | accepts vague wrong | labels given | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in r["judges"].items():
        given = ", ".join(f"{k} {v}" for k, v in s["predicted"].items())
        secs = s.get("seconds")
        what = s.get("what", name) + (f" (**partial run: {s['partial']}**)" if s.get("partial") else "")
        lines.append(f"| {name} | {what} | {_f(s['coverage'])} | {_ci(s['accuracy'])} | "
                     f"{_ci(s['accuracy_readable'])} | {_f(s['kappa'])} | {_ci(s['accepts']['specific_wrong'])} | "
                     f"{_ci(s['accepts']['vague_wrong'])} | {given} | {'n/a' if secs is None else f'{secs:.0f}'} |")
        for src, b in s["by_source"].items():
            lines.append(f"| ↳ {src} ({b['cells']} cells) | | {_f(b['coverage'])} | {_ci(b['accuracy'])} | "
                         f"{_ci(b['accuracy_readable'])} | {_f(b['kappa'])} | | | | |")
    if "panel" in r:
        p = r["panel"]
        lines += ["", f"Panel (strict majority of {len(r['judges'])}): accuracy {_ci(p['accuracy'])}, κ {_f(p['kappa'])}, "
                      f"Krippendorff's α {_f(p['alpha'])}, effective number of judges {_f(p['effective_judges'])}; "
                      "pairwise: " + "; ".join(f"{k}: κ {_f(v['kappa'])}, raw agreement {_f(v['agreement'])}, "
                                               f"error correlation {_f(v['error_correlation'])}"
                                               for k, v in p["pairs"].items())]
    if r.get("shared_replies"):
        sr = r["shared_replies"]
        lines += ["", f"Judges available: only the offline model above. The strong-model replies in `../shared/replies*` "
                      f"answer {sr['label_prompts']} Table 8 prompts, {sr['slice_cells_answered']} of them on a cell of this "
                      "slice (their claims come from the models' own reports), so they measure no judge here; a hosted "
                      "judge is measured with `--judge provider/model`."]
    load = r.get("load_average_1_5_15")
    if load:
        lines += ["", f"Load average (1/5/15 min) when written: {', '.join(f'{x:.2f}' for x in load)} "
                      "(2 shared cores; times are not speed claims)."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
