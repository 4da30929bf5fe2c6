"""Cost of the user-need grid as the number of retrieved contexts grows.

For every grid cell (user need x context setting x context count) this
reports LLM calls, prompt (input) tokens, output tokens and wall time per
sample, from the Inspect logs via ``conflict_eval.report.accounting``. The method
makes one call per cell, so cost is driven by the prompt, which grows with
the context count.

Two runs:

* ``smollm2``: the real offline model (``conflict_eval/smollm2``, real
  tokenizer counts) on KRE ECQA (``../shared/data/kre_ecqa/sample.jsonl``),
  few questions, small ``max_tokens``; wall time is real CPU generation time
  on this (shared) machine;
* ``scripted``: the zero-latency ``scripted/x`` model on HotpotQA, a longer
  sweep; tokens are whitespace words (the scripted model has no tokenizer)
  and time is harness overhead only. It always answers "I don't know", so
  its "correct" column is 1 exactly for Context-Exclusive x Information
  Irrelevant (a check of the expected-answer table, not a model result).

    python benchmarks/user_needs_cost.py [--questions 1] [--counts 1,4,16] \\
        [--scripted-counts 1,2,4,8,16,32] [--max-tokens 8]

Writes benchmarks/results/user_needs_cost.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from statistics import mean

from inspect_ai import eval as inspect_eval

from conflict_eval.report.accounting import sample_cost

RESULTS = Path(__file__).parent / "results"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def run(model: str, dataset: str, path: Path, questions: int, counts: str, max_tokens: int,
        model_args: dict | None = None) -> dict:
    cells: dict[tuple, list] = defaultdict(list)
    with tempfile.TemporaryDirectory() as logs:  # samples are read from the log: stay inside
        start = time.perf_counter()
        [log] = inspect_eval("conflict_eval/user_needs",
                             task_args={"dataset": dataset, "path": str(path), "limit": questions,
                                        "n_contexts": counts, "max_context_tokens": None},
                             model=model, model_args=model_args or {}, max_tokens=max_tokens,
                             max_samples=1, log_dir=logs, display="none")
        elapsed = time.perf_counter() - start
        assert log.status == "success", log.error
        n_samples = len(log.samples)
        for s in log.samples:
            extra = s.metadata["extra"]
            cells[(extra["user_need"], s.metadata["setting"], extra["n_contexts"])].append(
                (sample_cost(s), s.scores["user_need_accuracy"].value))
    rows = []
    for (u, st, n), got in sorted(cells.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
        rows.append({"user_need": u, "setting": st, "n_contexts": n, "samples": len(got),
                     "calls": mean(c.calls for c, _ in got),
                     "input_tokens": mean(c.input_tokens for c, _ in got),
                     "output_tokens": mean(c.output_tokens for c, _ in got),
                     "seconds": mean(c.seconds for c, _ in got if c.seconds is not None),
                     "correct": mean(v["correct"] for _, v in got),
                     "parse_failure": mean(v["parse_failure"] for _, v in got)})
    return {"model": model, "dataset": dataset, "path": str(path), "questions": questions, "counts": counts,
            "max_tokens": max_tokens, "samples": n_samples, "total_seconds": round(elapsed, 2),
            "cells": rows}


def markdown(results: list[dict]) -> str:
    out = ["# User-need grid: cost per cell as the context count grows", "",
           f"Machine: {platform.platform()}, {platform.processor() or 'cpu'}; shared by other jobs, so "
           "wall times are indicative. One LLM call per cell (Appendix C prompt). Samples run one at a time "
           "(max_samples=1), so `seconds` is one sample's own wall time. SmolLM2-135M seldom writes the "
           "<output> tag, and max_tokens is small, so its replies are mostly parse failures: the run "
           "measures cost, not accuracy.", ""]
    for r in results:
        out += [f"## {r['model']} on {r['dataset']} ({r['questions']} question(s), counts {r['counts']}, "
                f"max_tokens {r['max_tokens']})", "",
                f"{r['samples']} samples in {r['total_seconds']} s.", "",
                "| n_contexts | user_need | setting | calls | input tokens | output tokens | seconds | correct | parse failures |",
                "|---|---|---|---|---|---|---|---|---|"]
        for c in r["cells"]:
            out.append(f"| {c['n_contexts']} | {c['user_need']} | {c['setting']} | {c['calls']:.0f} | "
                       f"{c['input_tokens']:.0f} | {c['output_tokens']:.1f} | {c['seconds']:.2f} | "
                       f"{c['correct']:.2f} | {c['parse_failure']:.2f} |")
        by_n = defaultdict(list)
        for c in r["cells"]:
            by_n[c["n_contexts"]].append(c)
        out += ["", "Mean over the 9 cells per count:", "", "| n_contexts | input tokens | seconds |", "|---|---|---|"]
        out += [f"| {n} | {mean(c['input_tokens'] for c in cs):.0f} | {mean(c['seconds'] for c in cs):.2f} |"
                for n, cs in sorted(by_n.items())]
        out.append("")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=1)
    parser.add_argument("--counts", default="1,4,16")
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--scripted-questions", type=int, default=5)
    parser.add_argument("--scripted-counts", default="1,2,4,8,16,32")
    parser.add_argument("--skip-local", action="store_true")
    args = parser.parse_args()
    results = [run("scripted/x", "user_needs_hotpotqa", SHARED / "hotpotqa_ircot" / "sample.jsonl",
                   args.scripted_questions, args.scripted_counts, args.max_tokens,
                   model_args={"reply": "<output>I don't know</output>"})]
    if not args.skip_local:
        results.insert(0, run("conflict_eval/smollm2", "user_needs_kre_ecqa", SHARED / "kre_ecqa" / "sample.jsonl",
                              args.questions, args.counts, args.max_tokens))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "user_needs_cost.json").write_text(json.dumps(results, indent=1) + "\n")
    (RESULTS / "user_needs_cost.md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
