"""Start-up time and memory of one ``suite worker`` on a plan of many cells over several datasets.

A suite of 5 real datasets (``../shared/data``: RAMDocs, KRE ECQA, KRE e-CARE,
ConflictQA StrategyQA, BlendQA; ``end_to_end``, 2 samples each) x 2 scripted
models = 10 cells is planned over 10 workers (one cell each). Then worker 1 is
run as a whole process (``python -m conflict_eval.cli suite worker ...``) a
few times, each on a fresh log folder, and we record:

* wall seconds of the whole process (imports, plan, Inspect, the cell, logs);
* its peak resident memory (``ru_maxrss`` of the child, MiB);
* which dataset files it loaded (the child wraps the toolkit's one record
  reader, ``records.files.read_jsonl`` / ``read_json_or_jsonl``, before any
  loader imports it): a worker that builds only its own cell loads one.

    python benchmarks/worker_startup.py [--runs 3] [--label after]

Appends to benchmarks/results/worker_startup.json and rewrites
worker_startup.md. The machine is shared (load average recorded per run):
compare the medians, not single runs.
"""

from __future__ import annotations

import _common  # noqa: F401 -- offline settings first

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import DATA, RESULTS

DATASETS = [("ramdocs", "ramdocs"), ("kre_ecqa", "kre_ecqa"), ("kre_ecare", "kre_ecare"),
            ("conflictqa", "conflictqa_strategyqa"), ("atomr_blendqa", "blendqa")]

# the child: record the dataset files read as records (the toolkit's one reader, wrapped before
# any loader imports it; a file hashed for a label is opened but not loaded), then run the CLI
CHILD = """
import json, os, sys
import conflict_eval.records as records
import conflict_eval.records.files as files
opened = set()
def wrap(fn):
    def read(path, *a, **k):
        opened.add(os.path.realpath(str(path)))
        return fn(path, *a, **k)
    return read
for name in ("read_jsonl", "read_json_or_jsonl"):
    wrapped = wrap(getattr(files, name))
    setattr(files, name, wrapped)
    setattr(records, name, wrapped)
from conflict_eval.cli import main
code = main(sys.argv[1:])
with open(os.environ["BENCH_OPENED"], "w") as f:
    json.dump(sorted(opened), f)
sys.exit(code)
"""


def suite_text() -> str:
    tasks = "\n".join(f"  - task: conflict_eval/run\n    args: {{method: end_to_end, dataset: {name}, "
                      f"path: {DATA / folder / 'sample.jsonl'}}}" for name, folder in DATASETS)
    return ("name: startup\nmodels:\n  - model: scripted/a\n    args: {reply: \"A\"}\n"
            "  - model: scripted/b\n    args: {reply: \"B\"}\ndefaults: {limit: 2}\ntasks:\n" + tasks + "\n")


def one_run(work: Path, selection: Path, i: int) -> dict:
    log_dir = json.loads((work / "plan" / "plan.json").read_text())["log_dir"]
    shutil.rmtree(log_dir, ignore_errors=True)
    opened = work / f"opened-{i}.json"
    env = {**os.environ, "BENCH_DATA": str(DATA.resolve()), "BENCH_OPENED": str(opened), "OMP_NUM_THREADS": "1"}
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, "suite", "worker", str(selection), "--display", "none"],
                          cwd=work, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"worker failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    files = json.loads(opened.read_text())
    return {"wall_s": round(wall, 2), "cpu_s": round((after.ru_utime - before.ru_utime)
                                                     + (after.ru_stime - before.ru_stime), 2),
            "max_rss_mib": round(after.ru_maxrss / 1024, 1),  # peak of the largest child so far (Linux: KiB)
            "dataset_files_opened": len({f for f in files if f.startswith(str(DATA.resolve()))}),
            "load_1m": round(load, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--label", default="current")
    ap.add_argument("--render", action="store_true", help="only rewrite the .md from the .json")
    args = ap.parse_args()
    if args.render:
        return render(json.loads((RESULTS / "worker_startup.json").read_text()))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "startup.yaml").write_text(suite_text())
        from conflict_eval.runs.plan import make_plan

        t0 = time.perf_counter()
        plan = make_plan(str(work / "startup.yaml"), work / "plan", workers=10)
        plan_s = time.perf_counter() - t0
        selection = work / "plan" / plan["workers"][0]["selection"]
        # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: one fresh interpreter per run
        runs = []
        for i in range(args.runs):
            out = subprocess.run([sys.executable, "-c",
                                  "import sys, json; sys.path.insert(0, sys.argv[1]); import worker_startup as w; "
                                  "from pathlib import Path; print(json.dumps(w.one_run(Path(sys.argv[2]), "
                                  "Path(sys.argv[3]), int(sys.argv[4]))))",
                                  str(Path(__file__).parent), str(work), str(selection), str(i)],
                                 capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(runs[-1], flush=True)
        version = json.loads(selection.read_text())["version"]
    entry = {"label": args.label, "cells": len(plan["cells"]), "datasets": len(DATASETS),
             "plan_s": round(plan_s, 2),
             "selection_version": version,
             "runs": runs, "median_wall_s": statistics.median(r["wall_s"] for r in runs),
             "median_max_rss_mib": statistics.median(r["max_rss_mib"] for r in runs),
             "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
             "dataset_files_opened": sorted({r["dataset_files_opened"] for r in runs}),
             "time": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    path = RESULTS / "worker_startup.json"
    data = json.loads(path.read_text()) if path.exists() else []
    data = [d for d in data if d["label"] != args.label] + [entry]
    path.write_text(json.dumps(data, indent=2) + "\n")
    render(data)


def render(data: list[dict]) -> None:
    lines = ["# One worker's start-up on a 10-cell, 5-dataset plan", "",
             "`python benchmarks/worker_startup.py --label LABEL`: whole-process wall and CPU time, peak RSS and the "
             "dataset files loaded by `suite worker` on worker 1 of a 10-worker plan (one cell each; scripted models, "
             "2 samples per cell). The machine was shared with other engineers' jobs while measuring "
             "(1-minute load average per run in the JSON): compare medians.", "",
             "| label | runs | median wall s | median CPU s | median peak RSS MiB | dataset files loaded "
             "| load (1 min) |",
             "|---|---|---|---|---|---|---|"]
    for d in data:
        loads = [r["load_1m"] for r in d["runs"]]
        cpu = d.get("median_cpu_s", statistics.median(r["cpu_s"] for r in d["runs"]))
        lines.append(f"| {d['label']} | {len(d['runs'])} | {d['median_wall_s']} | {cpu} | "
                     f"{d['median_max_rss_mib']} | "
                     f"{', '.join(map(str, d['dataset_files_opened']))} of {d['datasets']} | "
                     f"{min(loads)}-{max(loads)} |")
    (RESULTS / "worker_startup.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
