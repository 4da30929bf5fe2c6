"""LLM calls and tokens per sample of the issue-4 tasks, by role, from the
Inspect logs (``conflict_eval.report.accounting``).

Runs each task on real shared data with zero-latency offline scripted models
(``conflict_eval.testing.scripted_model``): an answering model and a
``grader`` role. The scripted grader decomposes a response into one claim
per sentence and labels deterministically (hash of claim + document), so the
*call counts* are what the tasks really issue for those claim counts; token
counts are whitespace words (the scripted provider has no tokenizer) and only
indicate relative prompt sizes.

    python benchmarks/conflictscore_task_costs.py [--limit 6]

Writes benchmarks/results/conflictscore_task_costs.{json,md}.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import tempfile
from pathlib import Path

from inspect_ai import eval as inspect_eval

from conflict_eval.report.accounting import log_costs, summarise
from conflict_eval.testing import scripted_model

RESULTS = Path(__file__).parent / "results"
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
LABELS = ("SUPPORTS", "CONTRADICTS", "IRRELEVANT")


def grader(prompt: str) -> str:
    if prompt.startswith("Instruction: Break down"):
        report = prompt.split("Report: ", 1)[1].split("\n\nPlease identify", 1)[0]
        return "Claims:\n" + "\n".join(s for s in re.split(r"(?<=\.)\s+", report) if s)
    if "Documents to evaluate against" in prompt:
        n = int(re.search(r"numbered 1 to (\d+)", prompt).group(1))
        return json.dumps([{"document": j + 1, "answer": LABELS[j % 3]} for j in range(n)])
    h = hashlib.sha1(prompt.encode()).digest()[0]
    return json.dumps({"document_snippet": "", "reasoning": "", "answer": LABELS[h % 3]})


def writer(prompt: str) -> str:
    if prompt.startswith("Instruction"):  # report prompts (Tables 9-11)
        return "The team won six titles. Another source says five. The league has 32 teams."
    if prompt.startswith("You are being asked"):
        return "A – first option\nJustification: (Docs 1, 2)"
    return "(B)"


def run(name: str, task, limit: int, log_dir: str) -> dict:
    model, judge = scripted_model(writer), scripted_model(grader)
    [log] = inspect_eval(task, model=model, model_roles={"grader": judge}, limit=limit, log_dir=log_dir,
                         display="none")
    assert log.status == "success", log.error
    costs = log_costs(log)
    roles: dict[str, float] = {}
    for c in costs:
        for role, n in c.calls_by_role.items():
            roles[role] = roles.get(role, 0) + n / len(costs)
    out = {"task": name, **summarise(costs), "calls_by_role_per_sample": roles}
    print(json.dumps(out))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=6)
    args = parser.parse_args()
    from conflict_eval.tasks.conflictbench.task import conflictbench
    from conflict_eval.tasks.conflictscore_report.task import conflictscore_report
    from conflict_eval.tasks.truthfulqa_conflict.task import truthfulqa_conflict

    kre = str(DATA / "kre_ecqa" / "sample.jsonl")
    mac = str(DATA / "macnoise_fewshot" / "sample.jsonl")
    tqa = str(DATA / "truthfulqa_binary" / "sample.jsonl")
    bg = [str(DATA / "hotpotqa_ircot" / "sample.jsonl"), str(DATA / "crag_example" / "sample.jsonl")]
    rows = []
    with tempfile.TemporaryDirectory() as log_dir:
        rows.append(run("conflictbench (kre_ecqa, pairwise)", conflictbench(path=kre), args.limit, log_dir))
        rows.append(run("conflictbench (kre_ecqa, all_docs)", conflictbench(path=kre, labelling="all_docs"),
                        args.limit, log_dir))
        for strategy in ("rag", "balanced", "super_balanced"):
            rows.append(run(f"conflictscore_report ({strategy})",
                            conflictscore_report(path=mac, strategies=strategy), 3, log_dir))
        # one run with the three strategies: the scripted writer gives the same report to each, so the
        # decomposition and every label prompt repeat across a record's three samples (issue 27)
        for dedupe in (False, True):
            rows.append(run(f"conflictscore_report (rag,balanced,super_balanced in one run, "
                            f"grader_dedupe={dedupe})",
                            conflictscore_report(path=mac, grader_dedupe=dedupe), 9, log_dir))
        rows.append(run("conflictscore_report (rag, claims=whole)",
                        conflictscore_report(path=mac, strategies="rag", claims="whole"), 3, log_dir))
        rows.append(run("truthfulqa_conflict (RAG + Control-RAG + Regenerated-RAG, k=10)",
                        truthfulqa_conflict(path=tqa, background=bg), args.limit, log_dir))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "conflictscore_task_costs.json").write_text(json.dumps(rows, indent=2))
    lines = ["# Issue-4 tasks: LLM calls and tokens per sample", "",
             "Scripted zero-latency models on real shared data (see the script's docstring: call counts are "
             "real for the claim counts the scripted grader produces; tokens are whitespace words).",
             "With `grader_dedupe=True` (the default) a byte-identical grader prompt is sent once per run and "
             "its reply reused; the two three-strategy rows show the calls this saves when strategies "
             "share claims and documents (here all of them: the scripted writer's report is the same).", "",
             "| task | samples | calls / sample | by role | input tokens | output tokens |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        roles = ", ".join(f"{k}: {v:.1f}" for k, v in sorted(r["calls_by_role_per_sample"].items()))
        lines.append(f"| {r['task']} | {r['n']} | {r['calls']:.1f} | {roles} | {r['input_tokens']:.0f} | "
                     f"{r['output_tokens']:.0f} |")
    (RESULTS / "conflictscore_task_costs.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
