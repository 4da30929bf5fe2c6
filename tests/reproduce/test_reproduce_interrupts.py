"""``conflict-eval reproduce`` interrupted for real behaves like ``conflict-eval run``:
"interrupted", the log (closed as cancelled) and how to resume, exit 130 / 143, no table."""

import signal
import sys

import pytest
from inspect_ai.log import read_eval_log


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_card_run(shared_data, tmp_path, sig, code, signal_when_held):
    log_dir, hold = tmp_path / "logs", tmp_path / "hold"
    hold.mkdir()
    cmd = [sys.executable, "-m", "conflict_eval.cli", "reproduce", "conflictqa-gpt4", "--model", "scripted/gpt-4",
           "-M", f"hold={hold}", "-M", "hold_after=3", "-M", "reply=A",
           "-T", f"path={shared_data / 'conflictqa_strategyqa' / 'sample.jsonl'}",
           "--limit", "6", "--log-dir", str(log_dir), "--display", "none"]
    proc = signal_when_held(cmd, hold, sig)  # 3 replies given, the rest waiting on the model
    out, err = proc.stdout, proc.stderr
    assert proc.returncode == code, out + err
    assert f"interrupted ({'SIGTERM' if sig == signal.SIGTERM else 'SIGINT'})" in err
    assert "paper model" not in out  # no verdict from a partial run
    [log_line] = [line for line in err.splitlines() if line.startswith("log: ")]
    assert read_eval_log(log_line[len("log: "):], header_only=True).status == "cancelled"
    assert "resume: inspect eval-retry" in err
