"""Prefix reuse in the offline provider (llama.cpp): Micro-Act and AtomR, with and without.

Each item runs twice in one process -- offline model ``conflict_eval/smollm2``
with ``-M prefix_cache=false`` (every prompt evaluated from scratch) and with
the default (a request takes the llama.cpp context whose KV cache shares the
longest prefix with its prompt; llama.cpp evaluates only the rest; engine:
xllamacpp, llama.cpp's server in process, one sequence slot per server) -- back to
back, the order alternating item by item (A B, B A, ...).  Per item and run:
the sample's wall time (Inspect's ``total_time``), its input tokens, the
prompt tokens served from the KV cache (``input_tokens_cache_read``) and
whether every model reply is identical between the two runs (greedy
decoding).  The two settings have separate context pools with the same
defaults; each pool is kept for all items, so later items may reuse prompt
prefixes of earlier ones (the shared instructions), as in a real run.

    python benchmarks/prefix_reuse.py [--microact 3] [--atomr 2] [--max-tokens 128]

Micro-Act runs on KRE ECQA items (``../shared/data/kre_ecqa/sample.jsonl``),
AtomR on HotpotQA questions (``../shared/data/hotpotqa_ircot/sample.jsonl``).
Writes benchmarks/results/prefix_reuse.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from _common import DATA, RESULTS  # noqa: E402  (sets the offline environment)


def workloads(max_tokens: int) -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        "microact": ("conflict_eval/microact", {
            "dataset": "kre_ecqa", "path": str(DATA / "kre_ecqa" / "sample.jsonl")}),
        "atomr": ("conflict_eval/atomr", {
            "dataset": "hotpotqa", "path": str(DATA / "hotpotqa_ircot" / "sample.jsonl")}),
    }


def run_item(task: str, task_args: dict[str, Any], model: Any, index: int, max_tokens: int,
             log_dir: str) -> dict[str, Any]:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.event import ModelEvent

    load = os.getloadavg()[0]
    started = time.perf_counter()
    [log] = inspect_eval(task, task_args=task_args, model=model, limit=(index, index + 1),
                         max_tokens=max_tokens, log_dir=log_dir, display="none",
                         max_connections=4)
    wall = time.perf_counter() - started
    if log.status != "success":
        raise SystemExit(f"{task} item {index}: eval failed: {log.error}")
    [sample] = log.samples
    usage = list((sample.model_usage or {}).values())
    replies = [e.output.completion for e in sample.events if isinstance(e, ModelEvent)]
    return {
        "id": sample.id,
        "sample_seconds": round(sample.total_time or wall, 2),
        "eval_seconds": round(wall, 2),
        "calls": len(replies),
        "input_tokens": sum(u.input_tokens for u in usage),
        "cached_input_tokens": sum(u.input_tokens_cache_read or 0 for u in usage),
        "output_tokens": sum(u.output_tokens for u in usage),
        "replies": replies,
        "load1": round(load, 2),
    }


def write(args: argparse.Namespace, started_at: str, load_start: list[float],
          results: dict[str, Any]) -> None:
    result = {
        "benchmark": "prefix_reuse",
        "created_at": started_at,
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "model": f"conflict_eval/smollm2 (llama.cpp through xllamacpp {version('xllamacpp')}, default pool of "
        f"single-slot servers), max_connections 4, max_tokens {args.max_tokens} per call",
        "pairing": "each item runs without and with the prefix cache back to back in one process, "
        "order alternating item by item",
        "loadavg_start": load_start,
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "cpu_count": os.cpu_count(),
        "workloads": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# Prefix reuse in the offline provider (llama.cpp): Micro-Act and AtomR",
        "",
        f"Generated {started_at} by `python benchmarks/{result['command']}`. Model: {result['model']}.",
        f"Pairing: {result['pairing']}. Machine: {os.cpu_count()} CPUs shared with other jobs; load "
        f"average {load_start} at start, {result['loadavg_end']} at end (1-minute load beside every "
        "run in the JSON). Absolute seconds are only as good as the machine was quiet.",
        "",
        "| workload | items | s/sample without | s/sample with | ratio with/without (median [min-max]) "
        "| input tokens/sample | served from cache | prefilled with cache | identical replies |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['items']} | {r['seconds_per_sample_no_reuse']} | {r['seconds_per_sample_reuse']} "
            f"| **{r['median_ratio_reuse_over_no_reuse']}** [{r['ratio_range'][0]}-{r['ratio_range'][1]}] "
            f"| {r['input_tokens_per_sample']} | {r['cached_tokens_per_sample']} "
            f"| {r['prefilled_tokens_per_sample_reuse']} | {r['identical_replies']} |"
        )
    (args.out / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))




def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--microact", type=int, default=3, help="KRE ECQA items")
    parser.add_argument("--atomr", type=int, default=2, help="HotpotQA questions")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default="prefix_reuse", help="results file name (.json, .md)")
    args = parser.parse_args()

    from inspect_ai.model import get_model

    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_start = [round(x, 2) for x in os.getloadavg()]
    models = {
        "no_reuse": get_model("conflict_eval/smollm2", memoize=False, prefix_cache=False),
        "reuse": get_model("conflict_eval/smollm2", memoize=False, prefix_cache=True),
    }
    counts = {"microact": args.microact, "atomr": args.atomr}
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as log_dir:
        for name, (task, task_args) in workloads(args.max_tokens).items():
            items = []
            for i in range(counts[name]):
                order = ["no_reuse", "reuse"] if i % 2 == 0 else ["reuse", "no_reuse"]
                row: dict[str, Any] = {"index": i, "order": order}
                for label in order:
                    row[label] = run_item(task, task_args, models[label], i, args.max_tokens, log_dir)
                row["identical_replies"] = row["reuse"]["replies"] == row["no_reuse"]["replies"]
                row["ratio_seconds"] = round(
                    row["reuse"]["sample_seconds"] / row["no_reuse"]["sample_seconds"], 3)
                for label in order:
                    row[label].pop("replies")
                items.append(row)
                print(name, json.dumps(row), flush=True)
            if not items:
                continue

            def mean(label: str, key: str) -> float:
                return round(statistics.mean(r[label][key] for r in items), 2)

            results[name] = {
                "items": len(items),
                "seconds_per_sample_no_reuse": mean("no_reuse", "sample_seconds"),
                "seconds_per_sample_reuse": mean("reuse", "sample_seconds"),
                "median_ratio_reuse_over_no_reuse": round(
                    statistics.median(r["ratio_seconds"] for r in items), 3),
                "ratio_range": [min(r["ratio_seconds"] for r in items),
                                max(r["ratio_seconds"] for r in items)],
                "input_tokens_per_sample": mean("reuse", "input_tokens"),
                "cached_tokens_per_sample": mean("reuse", "cached_input_tokens"),
                "prefilled_tokens_per_sample_reuse": round(
                    mean("reuse", "input_tokens") - mean("reuse", "cached_input_tokens"), 2),
                "calls_per_sample": mean("reuse", "calls"),
                "identical_replies": f"{sum(r['identical_replies'] for r in items)}/{len(items)}",
                "rows": items,
            }
            write(args, started_at, load_start, results)  # after every workload

if __name__ == "__main__":
    main()
