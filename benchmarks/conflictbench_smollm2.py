"""ConflictBench-style detection with the real offline model (SmolLM2-135M)
as labeller: Table 2 metrics, undetermined rate, label parse failures, and
calls / tokens per sample (``conflict_eval.report.accounting``).

    python benchmarks/conflictbench_smollm2.py [--limit 10] [--log EXISTING.eval]

Equivalent to::

    inspect eval conflict_eval/conflictbench --model conflict_eval/smollm2 \\
        -T subsets=kre_ecqa,kre_ecare -T paths='{kre_ecqa: ..., kre_ecare: ...}' \\
        -T grader_max_tokens=96 --limit 10

SmolLM2-135M is a tiny model: expect mostly unparseable labels; the point is
a real end-to-end measurement, not a quality claim. Writes
benchmarks/results/conflictbench_smollm2.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from conflict_eval.report.accounting import log_costs, summarise

RESULTS = Path(__file__).parent / "results"
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--log", help="summarise an existing log instead of running")
    args = parser.parse_args()
    if args.log:
        log = read_eval_log(args.log)
    else:
        from conflict_eval.tasks.conflictbench.task import conflictbench

        task = conflictbench(subsets="kre_ecqa,kre_ecare", grader_max_tokens=96,
                             paths={"kre_ecqa": str(DATA / "kre_ecqa" / "sample.jsonl"),
                                    "kre_ecare": str(DATA / "kre_ecare" / "sample.jsonl")})
        with tempfile.TemporaryDirectory() as log_dir:
            [log] = inspect_eval(task, model="conflict_eval/smollm2", limit=args.limit, log_dir=log_dir,
                                 display="none")
    assert log.status == "success", log.error
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    cells = [c for s in log.samples for c in s.metadata["detection"]["cells"]]
    failures = [c for c in cells if c["label"] is None]
    labels = {lab: sum(1 for c in cells if c["label"] == lab) for lab in ("SUPPORTS", "CONTRADICTS", "IRRELEVANT")}
    cost = summarise(log_costs(log))
    from datetime import datetime

    run_seconds = (datetime.fromisoformat(log.stats.completed_at)
                   - datetime.fromisoformat(log.stats.started_at)).total_seconds()
    undetermined = sum(1 for s in log.samples if s.output.completion == "undetermined")
    coverage = (len(cells) - len(failures)) / len(cells) if cells else float("nan")
    out = {"model": log.eval.model, "samples": len(log.samples), "metrics": metrics, "cells": len(cells),
           "label_counts": labels, "label_parse_failures": len(failures), "label_coverage": coverage,
           "undetermined_samples": undetermined,
           "failure_examples": [c["reply"][:200] for c in failures[:3]], "cost_per_sample": cost,
           "run_seconds": run_seconds}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "conflictbench_smollm2.json").write_text(json.dumps(out, indent=2))
    overall = ["precision", "recall", "f1", "accuracy", "acc_conf", "acc_noconf", "undetermined"]
    lines = ["# ConflictBench-style detection with SmolLM2-135M (KRE-derived split)", "",
             f"{len(log.samples)} items (seeded shuffle of kre_ecqa + kre_ecare derived items), labeller "
             f"`{log.eval.model}`, pairwise Table 8 prompt, 96 output tokens per label.", "",
             "| " + " | ".join(overall) + " |", "|" + "---|" * len(overall),
             "| " + " | ".join(f"{metrics[k]:.3f}" for k in overall) + " |", "",
             f"Label cells: {len(cells)}; parsed {labels}; unparseable {len(failures)} "
             f"(recorded, never mapped to a label); label coverage {coverage:.3f}; "
             f"{undetermined} of {len(log.samples)} items undetermined (counted wrong).", "",
             f"Per sample: {cost['calls']:.1f} LLM calls, {cost['input_tokens']:.0f} input and "
             f"{cost['output_tokens']:.0f} output tokens. Whole run: {run_seconds:.0f} s on a shared 2-core CPU "
             f"(per-sample time, {cost['seconds']:.0f} s, includes queueing: the local model serves one "
             "generation at a time).", "",
             "Typical unparseable reply: `" + (failures[0]["reply"][:80].replace("\n", " ") if failures else "-") + "...`"]
    (RESULTS / "conflictbench_smollm2.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
