"""SIGTERM handled like SIGINT while an Inspect run is in progress.

Inspect closes its logs as ``cancelled`` on Ctrl-C (SIGINT), keeping the
samples it finished; a plain SIGTERM (``kill``, a batch scheduler, a
container stop) would leave them ``started``. While this context is active,
SIGTERM raises SIGINT instead, so both end the same way; ``received`` says
which signal arrived, for the exit code (130 SIGINT, 143 SIGTERM).

Inspect's ``eval_set`` ends an interrupted run with "Completed all tasks in
'LOG_DIR' successfully" (it counts the logs ``eval`` returned: none after
Ctrl-C), and a resumed suite with nothing left to run prints it too.
:class:`inspect_verdict_muted` keeps that line off the console while a
suite runs; ``suite run`` prints its own verdict, judged from the logs. It also
keeps off Inspect's start-up banner when all it says is which of conflict-eval's
own hooks are enabled ("inspect_ai v... - hooks enabled: 0"): a banner with
anything else in it (a user's hook, telemetry) is printed.
Inspect offers no setting for that one line (only ``display="none"``, which
hides the whole display), so the swap stays, and
``tests/suite/test_inspect_verdict_line.py`` runs Inspect's real ``eval_set`` to fail
when Inspect changes what it depends on (see CONTRIBUTING.md).
"""

from __future__ import annotations

import re
import signal
import sys
import threading

from inspect_ai.hooks import Hooks, RunEnd, hooks


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


# Inspect's closing line of an eval set. It judges the run by the logs ``eval``
# returned, and after Ctrl-C that is none at all, so an interrupted suite
# "Completed all tasks ... successfully". The suite's verdict comes from the logs
# on disk (conflict_eval.runs.status), so this line is dropped while a suite runs.
_INSPECT_VERDICT = re.compile(r"Completed all tasks in '.*' successfully")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_armed = 0


_BANNER = re.compile(r"inspect_ai v\S+ - hooks enabled: (\d+)(.*)")
_OWN_HOOKS = {"conflict_eval/conflict_eval_budget": "conflict-eval suite-wide $ budget",
              "conflict_eval/conflict_eval_verdict": "conflict-eval: a suite's verdict comes from its logs"}


def _is_inspect_verdict(text: str) -> bool:
    return bool(_INSPECT_VERDICT.fullmatch(" ".join(_ANSI.sub("", text).split())))


def _is_own_banner(text: str) -> bool:
    """Inspect's start-up banner listing only conflict-eval's own hooks (or none)."""
    m = _BANNER.fullmatch(" ".join(_ANSI.sub("", text).split()))
    if m is None:
        return False
    rest, n = m.group(2), 0
    for name, description in _OWN_HOOKS.items():
        if f"{name}: {description}" in rest:
            rest, n = rest.replace(f"{name}: {description}", "", 1), n + 1
    return not rest.strip() and n == int(m.group(1))


class _VerdictFilter:
    """The console's file while muted: writes through to ``target`` (``None``:
    stdout at write time) except a write that is Inspect's success line."""

    def __init__(self, target):
        self.target = target

    def _out(self):
        out = self.target if self.target is not None else sys.stdout
        return getattr(out, "rich_proxied_file", out)  # a rich live display's proxy: its own file

    def write(self, text: str) -> int:
        if not (_is_inspect_verdict(text) or _is_own_banner(text)):
            self._out().write(text)
        return len(text)

    def __getattr__(self, name):
        return getattr(self._out(), name)


def _filter_console() -> None:
    import rich

    console = rich.get_console()
    current = console.file
    if not isinstance(current, _VerdictFilter):
        console.file = _VerdictFilter(None if current in (sys.stdout, sys.stderr) else current)


@hooks(name="conflict_eval_verdict", description="conflict-eval: a suite's verdict comes from its logs")
class VerdictHook(Hooks):
    """At the end of each ``eval`` inside a suite's ``eval_set`` (after the
    display has closed and set up the console), route the console through
    :class:`_VerdictFilter` so Inspect's closing success line is not printed."""

    def enabled(self) -> bool:
        return _armed > 0

    async def on_run_end(self, data: RunEnd) -> None:
        if _armed:
            _filter_console()


class inspect_verdict_muted:
    """Context manager around a suite's run (building its models and ``eval_set``):
    Inspect's "Completed all tasks in '...' successfully" and its banner of our own
    hooks are not printed (the caller prints the verdict it judges from the logs).
    Inspect's "Did not successfully complete" line, never misleading, stays."""

    def __enter__(self):
        global _armed
        _armed += 1
        _filter_console()  # from the start: a resume with nothing to run starts no display
        return self

    def __exit__(self, *exc):
        global _armed
        _armed -= 1
        if _armed:
            return
        import rich

        console = rich.get_console()
        if isinstance(console.file, _VerdictFilter):
            console.file = console.file.target
