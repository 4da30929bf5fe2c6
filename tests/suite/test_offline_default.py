"""The tiny suite runs as docs/suites.md shows it (estimate, run, status), on a
machine with no network: every socket to a non-loopback address is refused in
the subprocess.

The three commands run one after another in one fresh process (through the
same ``cli.main`` that ``python -m conflict_eval.cli`` calls), not in a process
each: a process costs seconds of imports, and nothing a command leaves behind
can spare a later one the network, since the first ran with every socket
refused too."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

NO_NETWORK = '''
import socket

_connect = socket.socket.connect


def _refuse(self, address, *args, **kwargs):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and not host.startswith("/"):
        raise OSError(f"network disabled in this test: connect to {address!r}")
    return _connect(self, address, *args, **kwargs)


socket.socket.connect = _refuse
'''

# each command's exit code, stdout and stderr, as one JSON line on the real stdout
COMMANDS = '''
import contextlib, io, json, sys
from conflict_eval.cli.main import main

done = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    done.append({"argv": argv, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
    if code != 0:
        break
print(json.dumps(done))
'''


@pytest.mark.slow
def test_readme_tiny_suite_runs_offline(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(NO_NETWORK)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    log_dir = tmp_path / "logs" / "tiny"
    # the documented lines, with --limit 1 to keep a busy CPU's run short
    lines = [["suite", "estimate", "tiny", "--limit", "1"],
             ["suite", "run", "tiny", "--limit", "1", "--log-dir", str(log_dir), "--display", "none"],
             ["suite", "status", str(log_dir)]]
    proc = subprocess.run([sys.executable, "-c", COMMANDS, json.dumps(lines)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout.strip().splitlines()[-1])
    est, run, status = (done + [None, None])[:3]  # fewer than three: a command failed (and the rest did not run)
    assert est["code"] == 0, est["stderr"]
    [total] = [ln for ln in est["stdout"].splitlines() if ln.startswith("total ")]
    assert "conflict_eval/smollm2" in est["stdout"] and "n/a" in total  # no per-token price
    assert run and run["code"] == 0, run and run["stdout"] + run["stderr"]
    assert "suite tiny: 2 task run(s), complete" in run["stdout"]
    assert status and status["code"] == 0 and "all tasks done" in status["stdout"], status
    assert not (Path(tmp_path) / "logs" / "tiny" / "suite-stop.json").exists()
    # the real offline model answered the first sample of each task (once test_suite.py's own in-process run)
    logs = [read_eval_log(i) for i in list_eval_logs(str(log_dir), recursive=True)]
    assert {lg.eval.model for lg in logs} == {"conflict_eval/smollm2"}
    assert {lg.eval.metadata["suite"]["label"]: [s.id for s in lg.samples] for lg in logs} == {
        "end_to_end/demo": ["mis-01"], "end_to_end/demo(conflict_type=temporal)": ["tmp-01"]}
