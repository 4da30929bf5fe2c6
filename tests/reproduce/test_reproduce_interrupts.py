"""``conflict-eval reproduce`` interrupted for real behaves like ``conflict-eval run``:
"interrupted", the log (closed as cancelled) and how to resume, exit 130 / 143, no table."""

import signal
import subprocess
import sys
import time

import pytest
from inspect_ai.log import read_eval_log


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_card_run(shared_data, tmp_path, sig, code):
    log_dir = tmp_path / "logs"
    cmd = [sys.executable, "-m", "conflict_eval.cli", "reproduce", "conflictqa-gpt4", "--model", "scripted/gpt-4",
           "-M", "delay=0.25", "-M", "reply=A", "-T", f"path={shared_data / 'conflictqa_strategyqa' / 'sample.jsonl'}",
           "--limit", "40", "--log-dir", str(log_dir), "--display", "none"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(log_dir.glob("*.eval")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no log appeared"
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == code, out + err
    assert f"interrupted ({'SIGTERM' if sig == signal.SIGTERM else 'SIGINT'})" in err
    assert "paper model" not in out  # no verdict from a partial run
    [log_line] = [line for line in err.splitlines() if line.startswith("log: ")]
    assert read_eval_log(log_line[len("log: "):], header_only=True).status == "cancelled"
    assert "resume: inspect eval-retry" in err
