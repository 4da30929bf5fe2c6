"""The tiny suite runs as the README shows it, on a machine with no network:
every socket to a non-loopback address is refused in the subprocess."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.slow
def test_readme_tiny_suite_runs_offline(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(NO_NETWORK)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    cli = [sys.executable, "-m", "conflict_eval.cli"]
    log_dir = tmp_path / "logs" / "tiny"
    # the README's lines, with --limit 1 to keep a busy CPU's run short
    est = subprocess.run([*cli, "suite", "estimate", "tiny", "--limit", "1"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert est.returncode == 0, est.stderr
    [total] = [ln for ln in est.stdout.splitlines() if ln.startswith("total ")]
    assert "conflict_eval/smollm2" in est.stdout and "n/a" in total  # no per-token price
    run = subprocess.run([*cli, "suite", "run", "tiny", "--limit", "1", "--log-dir", str(log_dir), "--display", "none"],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "suite tiny: 2 task run(s), complete" in run.stdout
    status = subprocess.run([*cli, "suite", "status", str(log_dir)], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=600)
    assert status.returncode == 0 and "all tasks done" in status.stdout
    assert not (Path(tmp_path) / "logs" / "tiny" / "suite-stop.json").exists()
