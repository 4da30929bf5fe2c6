"""``conflict-eval run`` interrupted for real: Ctrl-C and SIGTERM print
"interrupted" and the log, close it as cancelled, and ``inspect eval-retry``
finishes it with every sample exactly once."""

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log


def _run_and_signal(tmp_path: Path, sig, signal_when_held) -> subprocess.CompletedProcess:
    """Run the 20 demo samples; once 3 replies are given and the rest wait on the model, send ``sig``."""
    hold = tmp_path / "hold"
    hold.mkdir()
    cmd = [sys.executable, "-m", "conflict_eval.cli", "run", "--model", "scripted/x", "-M", f"hold={hold}",
           "-M", "hold_after=3", "--log-dir", str(tmp_path / "logs"), "--display", "none"]
    return signal_when_held(cmd, hold, sig)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_says_so_and_eval_retry_finishes_it(tmp_path, sig, code, signal_when_held):
    log_dir = tmp_path / "logs"
    res = _run_and_signal(tmp_path, sig, signal_when_held)
    assert res.returncode == code, res.stdout + res.stderr
    assert "interrupted" in res.stderr and "IndexError" not in res.stderr + res.stdout
    [log_line] = [line for line in res.stderr.splitlines() if line.startswith("log: ")]
    location = log_line[len("log: "):]
    header = read_eval_log(location, header_only=True)
    assert header.status == "cancelled"  # closed, not left "started"
    assert header.eval.task_registry_name == "conflict_eval/run"
    (tmp_path / "hold" / "release").touch()  # the retry's model (same args) answers at once
    retry = subprocess.run([sys.executable, "-m", "inspect_ai", "eval-retry", location,
                            "--log-dir", str(log_dir), "--display", "none"],
                           capture_output=True, text=True, timeout=300)
    assert retry.returncode == 0, retry.stdout + retry.stderr
    done = [read_eval_log(i) for i in list_eval_logs(str(log_dir))]
    [ok] = [lg for lg in done if lg.status == "success"]
    ids = [s.id for s in ok.samples]
    assert ok.results.completed_samples == ok.results.total_samples == 20
    assert len(ids) == len(set(ids)) == 20


def test_ctrl_c_works_when_started_with_sigint_ignored(tmp_path, signal_when_held):
    """A process started in the background by a shell without job control (``nohup
    conflict-eval ... &``, a CI script) inherits SIGINT ignored; the CLI takes it
    back, so Ctrl-C (and the suite budget's stop, which is a SIGINT) still cancels
    the run instead of being lost and leaving it waiting forever."""
    hold = tmp_path / "hold"
    hold.mkdir()
    ignored = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
               "os.execv(sys.executable, [sys.executable, '-m', 'conflict_eval.cli'] + sys.argv[1:])")
    cmd = [sys.executable, "-c", ignored, "run", "--model", "scripted/x", "-M", f"hold={hold}",
           "-M", "hold_after=3", "--log-dir", str(tmp_path / "logs"), "--display", "none"]
    res = signal_when_held(cmd, hold, signal.SIGINT, timeout=60)
    assert res.returncode == 130, res.stdout + res.stderr
    assert "interrupted (SIGINT)" in res.stderr
