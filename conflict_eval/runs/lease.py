"""One worker per selection: an exclusive lease in the plan's shared log folder.

Two ``suite worker`` processes on the same selection (a scheduler's retry, two
terminals) would both run every cell of it and pay for it twice. So a worker
first takes the selection's lease, ``LOG_DIR/worker-I.lease``: a small JSON
file with the holder's host, process id, start time and **heartbeat** (Unix
seconds), refreshed every ``heartbeat`` seconds by a thread while the worker
runs, and removed when it ends.

* A second worker finds the lease held and fresh: it refuses with a message
  naming the holder (:class:`LeaseHeld`), or waits for it with ``wait=True``
  (``suite worker --wait``).
* A lease whose heartbeat is older than ``timeout`` seconds is **stale**: its
  holder was killed (SIGKILL, a lost machine) or hangs. So is, at once, a lease
  whose holder ran on this host and whose process no longer exists (a worker
  restarted on the machine where it was killed need not wait). A new worker
  takes a stale lease over and says so; the old holder, should it wake up, finds the lease is no
  longer its own at its next heartbeat and warns (it does not stop by itself).
* Every write is atomic (a temporary file in the same folder, then
  ``os.replace``), so a reader never sees half a lease; the check-and-take is
  serialised by a :class:`filelock.FileLock` on ``worker-I.lease.lock``.

Shared and object storage (``docs/many-machines.md``): on NFS the lock is a
POSIX ``fcntl`` lock, which needs the server's lock manager (NFSv4 has it
built in; a v3 mount without ``lockd`` makes every lock fail or, mounted
``nolock``, succeed locally only); ``os.replace`` is atomic on NFS, and the
heartbeat compares the holder's clock with the reader's, so machines need
synchronised clocks (NTP) within a small part of ``timeout``. An object-store
log folder (``s3://...``) has no locks or atomic rename here: the worker takes
no lease there and says so; one worker per selection is then the scheduler's
job (Hawk starts one pod per eval set; a Kubernetes Job with ``parallelism: 1``).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conflict_eval.records.config_files import json_or_none

DEFAULT_TIMEOUT_S = 180.0  # a heartbeat older than this is a dead or hung holder
DEFAULT_HEARTBEAT_S = 30.0


class LeaseHeld(Exception):
    """Another live worker holds the selection's lease."""


@dataclass
class Lease:
    path: Path
    selection: str
    timeout: float = DEFAULT_TIMEOUT_S
    heartbeat: float | None = None  # default: DEFAULT_HEARTBEAT_S, or a third of a shorter timeout
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    took_over: dict[str, Any] | None = None  # the stale lease this one replaced
    lost: bool = False  # another worker took the lease over while this one ran
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    # -- reading and writing ------------------------------------------------

    def read(self) -> dict[str, Any] | None:
        """The lease file's content; None when there is none. A file that is not a lease
        (cut short by a full disk, edited by hand) is treated as stale, never as held."""
        data = json_or_none(self.path, unreadable=False)
        return data if data is None or isinstance(data, dict) else {"heartbeat": 0.0, "unreadable": True}

    def _write(self, started: float) -> None:
        record = {"host": socket.gethostname(), "pid": os.getpid(), "token": self.token,
                  "selection": self.selection, "started": started, "heartbeat": time.time(),
                  "timeout_s": self.timeout}
        tmp = self.path.with_name(f".{self.path.name}.{self.token}.tmp")
        tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    def _lock(self):
        from filelock import FileLock

        return FileLock(str(self.path) + ".lock", timeout=60)

    def stale(self, record: dict[str, Any], now: float | None = None) -> bool:
        """A lease is stale when its heartbeat is older than ``timeout``, or at once when its holder
        ran on this host and its process is gone (a SIGKILLed worker restarted on the same machine)."""
        beat = record.get("heartbeat")
        if not isinstance(beat, (int, float)) or (now or time.time()) - beat > self.timeout:
            return True
        return record.get("host") == socket.gethostname() and not _alive(record.get("pid"))

    # -- taking, keeping and giving back -------------------------------------

    def acquire(self, *, wait: bool = False, poll: float = 1.0, on_wait=None) -> Lease:
        """Take the lease (see the module docstring); raise :class:`LeaseHeld` when a live
        worker holds it and ``wait`` is false."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        told = False
        while True:
            with self._lock():
                held = self.read()
                if held is None or held.get("token") == self.token or self.stale(held):
                    if held is not None and held.get("token") != self.token:
                        self.took_over = held
                    self._write(time.time())
                    break
            if not wait:
                raise LeaseHeld(holder_text(held, self))
            if on_wait is not None and not told:
                on_wait(holder_text(held, self))
                told = True
            self._stop.wait(poll)
        self._started = time.time()
        self._thread = threading.Thread(target=self._beat, name="lease-heartbeat", daemon=True)
        self._thread.start()
        return self

    def _beat(self) -> None:
        interval = self.heartbeat if self.heartbeat is not None else min(DEFAULT_HEARTBEAT_S, self.timeout / 3)
        while not self._stop.wait(interval):
            with self._lock():
                held = self.read()
                if held is None or held.get("token") != self.token:
                    if not self.lost:
                        self.lost = True
                        print(f"warning: the lease {self.path} was taken over by "
                              f"{holder_text(held, self) if held else 'nobody (removed)'}; "
                              "this worker's cells may now run twice", file=sys.stderr)
                    continue
                self._write(self._started)

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock():
            held = self.read()
            if held is not None and held.get("token") == self.token:
                self.path.unlink(missing_ok=True)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _alive(pid: Any) -> bool:
    """Whether a process of this host exists (one of another user counts as alive)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def holder_text(record: dict[str, Any] | None, lease: Lease) -> str:
    """Who holds a lease, for a message: host, pid, heartbeat age."""
    if not record:
        return "nobody"
    if record.get("unreadable"):
        return f"an unreadable lease file {lease.path}"
    age = time.time() - float(record.get("heartbeat") or 0.0)
    return (f"process {record.get('pid')} on host {record.get('host')} (lease {lease.path}, last heartbeat "
            f"{age:.0f} s ago; taken over after {lease.timeout:.0f} s without one)")
