"""``conflict-eval run`` interrupted for real: Ctrl-C and SIGTERM print
"interrupted" and the log, close it as cancelled, and ``inspect eval-retry``
finishes it with every sample exactly once."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log


def _run_and_signal(log_dir: Path, sig) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "conflict_eval.cli", "run", "--model", "scripted/x", "-M", "delay=0.25",
           "--log-dir", str(log_dir), "--display", "none"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(log_dir.glob("*.eval")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no log appeared"
        time.sleep(0.1)
    time.sleep(1.0)  # a few of the 20 demo samples
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_says_so_and_eval_retry_finishes_it(tmp_path, sig, code):
    log_dir = tmp_path / "logs"
    res = _run_and_signal(log_dir, sig)
    assert res.returncode == code, res.stdout + res.stderr
    assert "interrupted" in res.stderr and "IndexError" not in res.stderr + res.stdout
    [log_line] = [line for line in res.stderr.splitlines() if line.startswith("log: ")]
    location = log_line[len("log: "):]
    header = read_eval_log(location, header_only=True)
    assert header.status == "cancelled"  # closed, not left "started"
    assert header.eval.task_registry_name == "conflict_eval/run"
    retry = subprocess.run([sys.executable, "-m", "inspect_ai", "eval-retry", location,
                            "--log-dir", str(log_dir), "--display", "none"],
                           capture_output=True, text=True, timeout=300)
    assert retry.returncode == 0, retry.stdout + retry.stderr
    done = [read_eval_log(i) for i in list_eval_logs(str(log_dir))]
    [ok] = [lg for lg in done if lg.status == "success"]
    ids = [s.id for s in ok.samples]
    assert ok.results.completed_samples == ok.results.total_samples == 20
    assert len(ids) == len(set(ids)) == 20
