"""One worker per selection (issue 44, item 4): the lease in the shared log folder refuses a
second worker, waits with --wait, keeps itself fresh by heartbeat, and is taken over once its
holder is killed (SIGKILL) and its heartbeat is older than the timeout. Two `suite worker`
processes on one selection: tests/suite/test_many_machines.py (the second one refused, exit 75,
while the first runs; every sample once)."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from conflict_eval.runs.lease import Lease, LeaseHeld

def _wait_for(predicate, timeout=30.0):
    done = threading.Event()
    while not done.wait(0.02):  # a condition on the file system, polled; never a fixed sleep
        if predicate():
            return True
        timeout -= 0.02
        if timeout <= 0:
            return False
    return True


def test_a_second_lease_is_refused_naming_the_holder(tmp_path):
    path = tmp_path / "worker-1.lease"
    with Lease(path, "sel.json").acquire() as first:
        record = json.loads(path.read_text())
        assert record["pid"] == os.getpid() and record["host"] == socket.gethostname()
        assert record["token"] == first.token and record["selection"] == "sel.json"
        with pytest.raises(LeaseHeld, match=rf"process {os.getpid()} on host .*last heartbeat \d+ s ago"):
            Lease(path, "sel.json").acquire()
    assert not path.exists()  # given back
    with Lease(path, "sel.json").acquire():  # free again
        pass


def test_the_heartbeat_keeps_a_lease_fresh_and_wait_takes_it_when_given_back(tmp_path):
    path = tmp_path / "worker-1.lease"
    first = Lease(path, "sel.json", heartbeat=0.05, timeout=0.5).acquire()
    beat = json.loads(path.read_text())["heartbeat"]
    assert _wait_for(lambda: json.loads(path.read_text())["heartbeat"] > beat)  # refreshed by its thread
    said, got = [], []
    second = Lease(path, "sel.json", timeout=0.5)
    waiter = threading.Thread(target=lambda: got.append(second.acquire(wait=True, poll=0.02, on_wait=said.append)))
    waiter.start()
    assert _wait_for(lambda: said)  # it waits, and says for whom
    assert f"process {os.getpid()}" in said[0] and not got
    first.release()
    waiter.join(timeout=30)
    assert got and second.took_over is None and json.loads(path.read_text())["token"] == second.token
    second.release()


def test_a_sigkilled_holder_is_replaced(tmp_path):
    """On the holder's own host a dead process frees the lease at once; from another host (only the
    heartbeat to go by) it is taken over once the heartbeat is older than the timeout."""
    import conflict_eval.runs.lease as lease_module

    path = tmp_path / "worker-1.lease"
    # the module alone (stdlib and filelock), not the package: the process starts in a fraction of a second
    holder = subprocess.Popen(
        [sys.executable, "-c", "import importlib.util, sys, threading; from pathlib import Path; "
         f"spec = importlib.util.spec_from_file_location('lease', {lease_module.__file__!r}); "
         "m = importlib.util.module_from_spec(spec); sys.modules['lease'] = m; spec.loader.exec_module(m); "
         f"m.Lease(Path({str(path)!r}), 'sel.json', heartbeat=0.05).acquire(); print('held', flush=True); "
         "threading.Event().wait()"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        new = Lease(path, "sel.json", timeout=0.3)
        with pytest.raises(LeaseHeld, match=f"process {holder.pid} "):
            new.acquire()  # alive and beating: refused
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        record = json.loads(path.read_text())
        new.acquire()  # same host, process gone: taken over without waiting
        assert new.took_over["pid"] == holder.pid
        new.release()
    finally:
        holder.kill()
        holder.wait()
    # the same lease as seen from another machine: a fresh heartbeat holds, an old one is taken over
    path.write_text(json.dumps({**record, "host": "other-host", "heartbeat": time.time()}))
    remote = Lease(path, "sel.json", timeout=0.3)
    with pytest.raises(LeaseHeld, match=f"process {holder.pid} on host other-host"):
        remote.acquire()
    remote.acquire(wait=True, poll=0.02)  # after the timeout
    assert remote.took_over["host"] == "other-host"
    assert json.loads(path.read_text())["pid"] == os.getpid()
    remote.release()


def test_a_holder_whose_lease_was_taken_over_says_so(tmp_path, capsys):
    path = tmp_path / "worker-1.lease"
    first = Lease(path, "sel.json", heartbeat=0.02, timeout=0.2).acquire()
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "token": "someone-else", "pid": 1}))  # what a takeover leaves
    assert _wait_for(lambda: first.lost)
    first.release()
    assert path.exists()  # the new holder's lease is not removed
    assert "was taken over by process 1" in capsys.readouterr().err


def test_an_unreadable_lease_file_is_stale_not_held(tmp_path):
    path = tmp_path / "worker-1.lease"
    path.write_text("{cut sho")
    lease = Lease(path, "sel.json").acquire()
    assert lease.took_over == {"heartbeat": 0.0, "unreadable": True}
    lease.release()
