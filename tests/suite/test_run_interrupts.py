"""``conflict-eval run`` interrupted for real: Ctrl-C and SIGTERM print
"interrupted" and the log, close it as cancelled, and ``inspect eval-retry``
finishes it with every sample exactly once.

The Ctrl-C run is started the way a shell without job control starts a
background job (``nohup conflict-eval ... &``, a CI script): with SIGINT
inherited as ignored. The CLI takes SIGINT back (``signal.default_int_handler``,
what a normal start has), so Ctrl-C (and the suite budget's stop, which is a
SIGINT) still cancels the run instead of being lost and leaving it waiting
forever. One ``inspect eval-retry`` process retries both logs."""

import signal
import subprocess
import sys
from pathlib import Path

from inspect_ai.log import list_eval_logs, read_eval_log

LIMIT = 6  # 3 replies given, then the rest wait on the model: enough to leave a retry work on each log
SIGINT_IGNORED = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                  "os.execv(sys.executable, [sys.executable, '-m', 'conflict_eval.cli'] + sys.argv[1:])")


def _run_and_signal(tmp_path: Path, sig, signal_when_held, start: list[str]) -> subprocess.CompletedProcess:
    """Run ``LIMIT`` demo samples; once 3 replies are given and the rest wait on the model, send ``sig``."""
    hold = tmp_path / f"hold-{sig.name}"
    hold.mkdir()
    cmd = [*start, "run", "--model", "scripted/x", "-M", f"hold={hold}", "-M", "hold_after=3",
           "--limit", str(LIMIT), "--log-dir", str(tmp_path / "logs"), "--display", "none"]
    return signal_when_held(cmd, hold, sig)


def test_interrupted_run_says_so_and_eval_retry_finishes_it(tmp_path, signal_when_held):
    log_dir = tmp_path / "logs"
    starts = {signal.SIGINT: [sys.executable, "-c", SIGINT_IGNORED],
              signal.SIGTERM: [sys.executable, "-m", "conflict_eval.cli"]}
    cancelled = {}
    for sig, code in [(signal.SIGINT, 130), (signal.SIGTERM, 143)]:
        res = _run_and_signal(tmp_path, sig, signal_when_held, starts[sig])
        assert res.returncode == code, res.stdout + res.stderr
        assert f"interrupted ({sig.name})" in res.stderr and "IndexError" not in res.stderr + res.stdout
        [log_line] = [line for line in res.stderr.splitlines() if line.startswith("log: ")]
        location = log_line[len("log: "):]
        header = read_eval_log(location, header_only=True)
        assert header.status == "cancelled"  # closed, not left "started"
        assert header.eval.task_registry_name == "conflict_eval/run"
        cancelled[header.eval.task_id] = location
        (tmp_path / f"hold-{sig.name}" / "release").touch()  # the retry's model (same args) answers at once
    retry = subprocess.run([sys.executable, "-m", "inspect_ai", "eval-retry", *cancelled.values(),
                            "--log-dir", str(log_dir), "--display", "none"],
                           capture_output=True, text=True, timeout=300)
    assert retry.returncode == 0, retry.stdout + retry.stderr
    done = [read_eval_log(i) for i in list_eval_logs(str(log_dir))]
    ok = {lg.eval.task_id: lg for lg in done if lg.status == "success"}
    assert len(ok) == len([lg for lg in done if lg.status == "success"]) and ok.keys() == cancelled.keys()
    for log in ok.values():  # each retried log: every sample once
        ids = [s.id for s in log.samples]
        assert log.results.completed_samples == log.results.total_samples == LIMIT
        assert len(ids) == len(set(ids)) == LIMIT
