"""Suite run and leaderboard: calls/tokens per sample per method, and the
leaderboard's own cost.

1. Runs a small suite on the bundled demo data with the real offline model
   (``conflict_eval/smollm2``): End-to-End, Few-Shot and CoT (the single-call
   methods this unit exports to lm-eval), 2 samples each, 32 new tokens. LLM
   calls and tokens per sample come from the Inspect logs through
   ``conflict_eval.report.accounting`` (via the leaderboard table).
2. Times building the leaderboard from many logs: a scripted run of the same
   tasks on all 20 demo items, copied K times (as if synced from K machines),
   so every sample is read K times and de-duplicated.
3. Times the statistics and the HTML page for 30 models x 20 tasks x 50
   samples (synthetic per-sample records, no logs): 1000 bootstrap resamples
   per cell and per conflict type, and for all 435 model pairs per task the
   paired test (McNemar exact), Holm over the 8,700 comparisons and the paired
   bootstrap beside it.

    python benchmarks/suite_leaderboard.py [--copies 5] [--skip-model]

Writes benchmarks/results/suite_leaderboard.{json,md}. The SmolLM2 numbers say
the pipeline works; its accuracy means nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from conflict_eval.report import build_leaderboard, to_html, to_markdown
from conflict_eval.runs import ModelSpec, load_suite, run_suite

RESULTS = Path(__file__).parent / "results"

SUITE = """name: bench
models:
  - model: conflict_eval/smollm2
    max_connections: 1
defaults: {{limit: {limit}, config: {{max_tokens: {max_tokens}}}}}
tasks:
  - task: conflict_eval/run
    name: end_to_end/demo
    args: {{method: end_to_end, dataset: demo}}
  - task: conflict_eval/run
    name: few_shot/demo
    args: {{method: few_shot, dataset: demo}}
  - task: conflict_eval/run
    name: cot/demo
    args: {{method: cot, dataset: demo}}
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--skip-model", action="store_true", help="keep the offline-model numbers from the last run")
    args = parser.parse_args()

    previous = RESULTS / "suite_leaderboard.json"
    out: dict = json.loads(previous.read_text()) if args.skip_model and previous.is_file() else {}
    out["machine"] = {"python": platform.python_version(), "cpu": platform.processor() or platform.machine(),
                      "load_average_at_start": list(os.getloadavg())}
    real_table = out.get("offline_model_table", "(not re-run: --skip-model)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = tmp / "bench.yaml"
        path.write_text(SUITE.format(limit=args.limit, max_tokens=args.max_tokens))
        suite = load_suite(path)

        if not args.skip_model:
            _offline_run(suite, tmp, args, out)
            real_table = out["offline_model_table"]
        _scripted_copies(path, tmp, args, out)
    _synthetic_grid(out)
    _write(out, args, real_table)


def _offline_run(suite, tmp, args, out) -> None:
    import torch

    torch.set_num_threads(1)  # shared 2-core machine: one thread is much faster under load
    start = time.perf_counter()
    ok, _ = run_suite(suite, tmp / "real", display="none")
    real_seconds = time.perf_counter() - start
    assert ok
    board = build_leaderboard([tmp / "real"])
    out["offline_model_run"] = {
        "model": "conflict_eval/smollm2", "samples_per_task": args.limit, "max_tokens": args.max_tokens,
        "wall_seconds": round(real_seconds, 2),
        "per_method": [{"task": r.task, "n": r.n, "calls_per_sample": r.calls,
                        "input_tokens_per_sample": r.input_tokens, "output_tokens_per_sample": r.output_tokens,
                        "accuracy": r.metrics["accuracy"].mean, "parse_failure_rate": r.parse_failure_rate,
                        "cost_per_sample_usd": r.cost_per_sample} for r in board["rows"]],
    }
    out["offline_model_table"] = to_markdown(board)


def _scripted_copies(path, tmp, args, out) -> None:
    full = load_suite(path)
    scripted = [ModelSpec("scripted/x", None, {"replies": ["A</a>", "<t>x</t> <a>B</a>", "C</a>"]})]
    full = type(full)(**{**full.__dict__, "tasks": [t.__class__(**{**t.__dict__, "limit": None})
                                                     for t in full.tasks]})
    ok, _ = run_suite(full, tmp / "scripted" / "copy-0", models=scripted, display="none")
    assert ok
    for k in range(1, args.copies):
        shutil.copytree(tmp / "scripted" / "copy-0", tmp / "scripted" / f"copy-{k}")
    start = time.perf_counter()
    board = build_leaderboard([tmp / "scripted"], bootstrap=1000)
    lb_seconds = time.perf_counter() - start
    out["leaderboard_build"] = {
        "logs": board["stats"]["logs"], "samples_read": board["stats"]["samples_read"],
        "duplicates_dropped": board["stats"]["duplicates_dropped"], "bootstrap": 1000,
        "seconds": round(lb_seconds, 3),
        "ms_per_sample_read": round(1000 * lb_seconds / board["stats"]["samples_read"], 3),
        "load_average": list(os.getloadavg()),
    }


def _synthetic_grid(out) -> None:
    import random

    from conflict_eval.report import SampleRecord, aggregate, paired_comparisons, provenance
    from conflict_eval.report.stats import ranks

    rng = random.Random(0)
    records = [SampleRecord(model=f"p/model-{m:02d}", task=f"task_{t:02d}", seed=None, sample_id=f"q{i}", epoch=1,
                            ok=True, completed="x", values={"accuracy": float(rng.random() < (m + 1) / 31)},
                            parse_failure=0.0, group=("temporal", "misinformation", "semantic")[i % 3],
                            calls=1, input_tokens=100, output_tokens=5, cost=1e-5, cost_source="price file")
               for m in range(30) for t in range(20) for i in range(50)]
    start = time.perf_counter()
    rows = aggregate(records, 1000, 0)
    t_rows = time.perf_counter() - start
    comps = paired_comparisons(rows, 1000, 0)
    t_pairs = time.perf_counter() - start - t_rows
    page = to_html({"rows": rows, "comparisons": comps, "ranks": ranks(rows, comps),
                    "provenance": provenance(rows, {}), "stats": {}})
    t_html = time.perf_counter() - start - t_rows - t_pairs
    out["synthetic_30x20"] = {"models": 30, "tasks": 20, "samples_per_cell": 50, "bootstrap": 1000,
                              "pairs": len(comps), "aggregate_seconds": round(t_rows, 2),
                              "paired_seconds": round(t_pairs, 2), "html_seconds": round(t_html, 2),
                              "html_kb": round(len(page.encode()) / 1024), "load_average": list(os.getloadavg())}


def _write(out, args, real_table) -> None:
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "suite_leaderboard.json").write_text(json.dumps(out, indent=2) + "\n")
    lb, grid = out["leaderboard_build"], out["synthetic_30x20"]
    run = out.get("offline_model_run") or {"per_method": [], "wall_seconds": None}
    md = [
        "# Suite run and leaderboard",
        "",
        f"Offline model run: {len(run['per_method'])} tasks x {run.get('samples_per_task')} demo samples, "
        f"SmolLM2-135M, max_tokens {run.get('max_tokens')}, wall time {run['wall_seconds']} s "
        f"(busy shared 2-core machine, load average at start {out['machine']['load_average_at_start']}).",
        "",
        "Calls and tokens per sample per method (from the Inspect logs via `conflict_eval.report.accounting`); "
        "the leaderboard's Markdown for this run:",
        "",
        real_table,
        f"Leaderboard build from logs: {lb['logs']} logs, {lb['samples_read']} samples read, "
        f"{lb['duplicates_dropped']} duplicates dropped, 1000 bootstrap resamples: {lb['seconds']} s "
        f"({lb['ms_per_sample_read']} ms per sample read; load average {lb.get('load_average')}).",
        "",
        f"30 models x 20 tasks x 50 samples (synthetic records), 1000 bootstrap resamples: statistics "
        f"{grid['aggregate_seconds']} s, {grid['pairs']} paired comparisons (McNemar exact, Holm over all, "
        f"paired bootstrap beside) {grid['paired_seconds']} s, "
        f"HTML {grid['html_seconds']} s ({grid['html_kb']} KB); load average {grid['load_average']}.",
        "",
    ]
    (RESULTS / "suite_leaderboard.md").write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
