"""SIGTERM handled like SIGINT while an Inspect run is in progress.

Inspect closes its logs as ``cancelled`` on Ctrl-C (SIGINT), keeping the
samples it finished; a plain SIGTERM (``kill``, a batch scheduler, a
container stop) would leave them ``started``. While this context is active,
SIGTERM raises SIGINT instead, so both end the same way; ``received`` says
which signal arrived, for the exit code (130 SIGINT, 143 SIGTERM).
"""

from __future__ import annotations

import signal
import threading


class SigtermAsSigint:
    """While running: SIGTERM is turned into SIGINT (Inspect's cancel path closes
    the logs as cancelled); records which signal arrived. Main thread only."""

    def __init__(self):
        self.received: str | None = None
        self._old = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGTERM, self._on_term)
        return self

    def _on_term(self, signum, frame):
        self.received = self.received or "SIGTERM"
        signal.raise_signal(signal.SIGINT)

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGTERM, self._old)
