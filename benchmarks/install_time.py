"""Wall time of the README's main-job command on a fresh machine (issue 46's "done when").

    python benchmarks/install_time.py [--runs 2] [--source GIT_URL_OR_PATH] [--ref main]

Each run: a fresh ``git clone`` of the source (default: this checkout's repository) at
``--ref``, a new ``python -m venv`` (no system site-packages, so no engine or model that
the machine already has), an empty pip cache (``PIP_CACHE_DIR`` a new empty folder) and
an empty model cache (``CONFLICT_EVAL_MODEL_DIR`` a new empty folder: the model is not yet
fetched), then the command exactly as the README gives it, in the clone, through ``bash -c``::

    pip install -e '.[local]' && conflict-eval run

It is timed in whole and in parts (the ``pip install`` and the ``conflict-eval run``; the
parts are read from the same run: a marker is printed between them). Afterwards ``pip
check`` runs in the venv, and pip's log is searched for a source build ("Building wheel
for"). The 1-minute load average is sampled every 5 s during the run. Prints one Markdown
row per run (paste into ``benchmarks/results/install_time.md``) and writes
``benchmarks/results/install_time_runs.json``. The temporary folders are removed.

Network: pip's configured package index only (the command needs it, as a user's does).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import REPO, RESULTS  # noqa: E402

MAIN_JOB = "pip install -e '.[local]' && conflict-eval run"


def readme_main_job() -> str:
    """The command the README gives (checked to be the one timed here)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Set up"):readme.index("## Run")]
    return re.findall(r"```bash\n(.*?)```", section, flags=re.S)[0].strip()


def sample_load(stop: threading.Event, out: list[float]) -> None:
    while not stop.is_set():
        out.append(os.getloadavg()[0])
        stop.wait(5)


def one_run(source: str, ref: str, python: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="install_time_") as tmp:
        work = Path(tmp)
        subprocess.run(["git", "clone", "-q", source, str(work / "repo")], check=True)
        subprocess.run(["git", "-C", str(work / "repo"), "checkout", "-q", ref], check=True)
        commit = subprocess.run(["git", "-C", str(work / "repo"), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        subprocess.run([python, "-m", "venv", str(work / "venv")], check=True)
        (work / "pip-cache").mkdir()
        (work / "models").mkdir()
        env = {k: v for k, v in os.environ.items()
               if k not in ("VIRTUAL_ENV", "PYTHONPATH", "CONFLICT_EVAL_GGUF", "PIP_NO_CACHE_DIR", "HF_HUB_OFFLINE",
                            "TRANSFORMERS_OFFLINE", "CONFLICT_EVAL_OFFLINE", "INSPECT_LOG_LEVEL")}
        env.update(PATH=f"{work / 'venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(work / "venv"),
                   PIP_CACHE_DIR=str(work / "pip-cache"), CONFLICT_EVAL_MODEL_DIR=str(work / "models"),
                   PIP_DISABLE_PIP_VERSION_CHECK="1")
        # the README's command, with a time stamp printed between its two parts
        timed = MAIN_JOB.replace(" && ", " && python -c 'import time; print(\"@@split\", time.time())' && ")
        loads: list[float] = []
        stop = threading.Event()
        sampler = threading.Thread(target=sample_load, args=(stop, loads), daemon=True)
        load_before = os.getloadavg()[0]
        started_utc = time.strftime("%H:%M:%S UTC", time.gmtime())
        sampler.start()
        start = time.time()
        done = subprocess.run(["bash", "-c", timed], cwd=work / "repo", env=env, capture_output=True, text=True)
        end = time.time()
        stop.set()
        sampler.join()
        split = [float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("@@split")]
        check = subprocess.run([str(work / "venv" / "bin" / "python"), "-m", "pip", "check"], env=env,
                               capture_output=True, text=True)
        built = sorted(set(re.findall(r"Building wheel for (\S+)", done.stdout + done.stderr)))
        return {
            "commit": commit, "started": started_utc, "exit_status": done.returncode,
            "total_s": round(end - start, 1),
            "pip_install_s": round(split[0] - start, 1) if split else None,
            "conflict_eval_run_s": round(end - split[0], 1) if split else None,
            "load1_before": round(load_before, 2), "load1_peak": round(max(loads, default=load_before), 2),
            "load1_after": round(os.getloadavg()[0], 2),
            "pip_check": (check.stdout + check.stderr).strip(), "pip_check_status": check.returncode,
            "built_from_source": built,
            "model_fetched": any((work / "models").glob("*.gguf")),
            "tail": (done.stdout + done.stderr)[-1500:] if done.returncode else "",
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--source", default=str(REPO), help="what to clone (default: this repository)")
    parser.add_argument("--ref", default="HEAD", help="commit or branch to check out (default: HEAD)")
    parser.add_argument("--python", default=sys.executable, help="the Python that makes the venv")
    args = parser.parse_args()
    if readme_main_job() != MAIN_JOB:
        raise SystemExit(f"the README's main-job command changed: {readme_main_job()!r}")
    rows = []
    for i in range(args.runs):
        row = one_run(args.source, args.ref, args.python)
        row["run"] = i + 1
        rows.append(row)
        print(json.dumps(row), flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "install_time_runs.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("\n| run | git | start, 1-min load before | total s | `pip install` s | `conflict-eval run` s "
          "| load peak | exit | `pip check` | built from source | model fetched |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['run']} | {r['commit']} | {r['started']}, {r['load1_before']} | **{r['total_s']}** "
              f"| {r['pip_install_s']} | {r['conflict_eval_run_s']} | {r['load1_peak']} | {r['exit_status']} "
              f"| {'clean' if r['pip_check_status'] == 0 else r['pip_check']} "
              f"| {', '.join(r['built_from_source']) or 'nothing'} | {r['model_fetched']} |")


if __name__ == "__main__":
    main()
