"""Whether a suite's tasks are done, read from the Inspect logs themselves.

A task is **complete** when its log has status ``success`` and
``completed_samples == total_samples``; ``eval_set``'s own success flag is
not trusted (after Ctrl-C it reports success with cancelled logs left behind).

The tasks a log directory should hold are the ones ``eval_set`` wrote into
its manifest (``eval-set.json``: one entry per task and model, with the
``task_id`` its logs carry; read by :mod:`conflict_eval.report.manifest`, as
the leaderboard reads it); a task with no log yet is listed as
``not started``, with its total when ``suite run`` recorded it. Of several logs of one task (an interrupted attempt and its
retry), the complete one wins, else the newest.

A ``cancelled`` log whose samples are all done (a SIGINT or SIGTERM between
the last score and Inspect's closing of the log) is shown as ``cancelled,
to close``: re-running the suite reuses every sample from that log (no model
call) and only writes the finished log (:attr:`TaskStatus.to_close`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from conflict_eval.runs.walltime import duration_text

# `inspect ctl --log-dir` flags a running task whose log has not changed for 10 minutes
# (inspect_ai 0.3.285, _QUIET_SECONDS): a crashed worker leaves its log `started`
QUIET_SECONDS = 10 * 60


@dataclass(frozen=True)
class TaskStatus:
    model: str
    label: str
    status: str  # success, started, cancelled, error, not started
    done: int
    total: int | None
    log: str | None = None
    task_id: str | None = None
    errors: int = 0  # samples that ended in an error (crashed samples closed as errors among them)
    updated_at: float | None = None  # the log file's modification time (Unix seconds), as `inspect ctl` reads it

    @property
    def quiet(self) -> float | None:
        """Seconds since a ``started`` log last changed, when that is :data:`QUIET_SECONDS` or more: its
        worker has probably stopped (``inspect ctl --log-dir``'s rule); None otherwise."""
        import time

        if self.status != "started" or self.updated_at is None:
            return None
        idle = time.time() - self.updated_at
        return idle if idle >= QUIET_SECONDS else None

    @property
    def complete(self) -> bool:
        return self.status == "success" and self.total is not None and self.done == self.total

    @property
    def to_close(self) -> bool:
        """Every sample is done but Inspect closed the log as ``cancelled``: a
        re-run reuses them all and only closes the log (``eval_set`` retries a
        cancelled log with its finished samples). A ``started`` log with every
        sample done is not counted here: its run may still be closing it."""
        return self.status == "cancelled" and bool(self.total) and self.done == self.total


def _label(header) -> str:
    from conflict_eval.report import canonical_task_name

    suite = (header.eval.metadata or {}).get("suite") or {}
    if suite.get("label"):
        return str(suite["label"]) + (f" seed={suite['seed']}" if suite.get("seed") is not None else "")
    return canonical_task_name(header.eval.task, header.eval.task_args, header.eval.metadata)


def _counts(info, header) -> tuple[int, int | None, int]:
    """(done, total, errors) samples of one log: done as every reader counts it
    (:func:`conflict_eval.report.done.is_done`); total from Inspect's results
    when it wrote them, else the dataset size times epochs; errors: samples
    that ended in an error (Inspect's sample summaries, as ``inspect ctl`` counts
    ``errored``)."""
    from inspect_ai.log import read_eval_log_sample_summaries

    from conflict_eval.report.done import is_done
    from conflict_eval.report.logs import _CANCEL_ERRORS

    try:
        summaries = read_eval_log_sample_summaries(info)
    except Exception:  # noqa: BLE001 -- a log cut off by a kill may hold no readable samples
        summaries = []
    done = len({(str(s.id), s.epoch) for s in summaries if is_done(s)})
    # a sample cut off in flight by Ctrl-C, SIGTERM or a budget stop is not an
    # error of its own: the leaderboard's rule (report.logs.was_cut_off; a
    # summary's error is its message, a string)
    cancelled = header.status == "cancelled"
    errors = len({(str(s.id), s.epoch) for s in summaries if s.error is not None
                  and not (cancelled and str(s.error).lstrip().startswith(_CANCEL_ERRORS))})
    if header.results is not None and header.status != "started":
        return done, header.results.total_samples, errors
    samples = header.eval.dataset.samples
    epochs = header.eval.config.epochs or 1
    limit = header.eval.config.limit
    if isinstance(limit, int) and samples is not None:
        samples = min(samples, limit)
    return done, (samples * epochs if samples is not None else None), errors


def log_mtime(info) -> float | None:
    """A listed log's modification time in Unix seconds (Inspect's ``EvalLogInfo.mtime`` is in milliseconds)."""
    return None if info.mtime is None else info.mtime / 1000.0


def task_statuses(log_dir: str | Path, expected: list[tuple[str, str, int]] | None = None) -> list[TaskStatus]:
    """One :class:`TaskStatus` per task and model of the log directory (searched recursively).

    ``expected`` (``(model, label, total samples)`` of every task a suite
    should hold) lists the tasks with no log yet as ``not started``; without
    it they come from ``eval_set``'s manifest, named and counted by
    :func:`conflict_eval.report.manifest.planned_tasks` (the suite's label and
    total when ``suite run`` recorded them, else the canonical name and ``?``)."""
    from inspect_ai.log import read_eval_log

    from conflict_eval.report.logs import listed_logs
    from conflict_eval.report.manifest import log_keys, planned_tasks

    best: dict[tuple[str, str], tuple[tuple, TaskStatus]] = {}
    keys: set[tuple] = set()  # every log's keys to the planned tasks (report.manifest.log_keys)
    for info in listed_logs(log_dir):  # a merged cell once
        try:
            header = read_eval_log(info, header_only=True)
        except Exception:  # noqa: BLE001 -- unreadable: shown as such, never as done
            best[(info.name, "?")] = ((0,), TaskStatus("?", Path(info.name).name, "unreadable", 0, None, info.name))
            continue
        done, total, errors = _counts(info, header)
        st = TaskStatus(header.eval.model, _label(header), header.status, done, total,
                        info.name, header.eval.task_id, errors, log_mtime(info))
        key = (header.eval.task_id, header.eval.model)
        keys |= log_keys(header.eval.model, header.eval.task_id, header.eval.eval_set_id,
                         header.eval.task_registry_name or header.eval.task)
        rank = (st.complete, header.eval.created or "")
        if key not in best or rank > best[key][0]:
            best[key] = (rank, st)
    found = {key: st for key, (_, st) in best.items()}
    if expected is not None:  # the suite's cells only: logs of other set-ups in the folder do not count
        cells: dict[tuple, TaskStatus] = {}
        for st in found.values():
            key = (st.model, st.label)
            if any(key == (m, lb) for m, lb, _ in expected) and (
                    key not in cells or (st.complete, st.done) > (cells[key].complete, cells[key].done)):
                cells[key] = st
        for model, label, total in expected:
            cells.setdefault((model, label), TaskStatus(model, label, "not started", 0, total))
        found = cells
    else:
        for p in planned_tasks(log_dir):
            if p.key not in keys:
                keys.add(p.key)
                found[p.key] = TaskStatus(p.model, p.label, "not started", 0, p.total, None, p.task_id)
    return sorted(found.values(), key=lambda s: (s.model, s.label))


def incomplete(statuses: list[TaskStatus]) -> list[TaskStatus]:
    return [s for s in statuses if not s.complete]


TO_CLOSE_NOTE = ("  to close: every sample is done, but the log was closed as cancelled before Inspect finished "
                 "it; a re-run reuses all its samples (no model call) and only writes the finished log")


def render_status(statuses: list[TaskStatus]) -> str:
    """A plain-text table: state, done/total, errors, model, task (unfinished
    tasks first). State is ``done`` for a complete task, ``partial`` for a
    ``success`` log short of its samples (its errored samples in the errors
    column), ``cancelled, to close`` for a cancelled log with every sample done
    (:attr:`TaskStatus.to_close`, told under the table), ``running`` for a
    ``started`` log (``inspect ctl``'s word; one quiet for 10 minutes is told
    under the table in its words: its eval process may have stopped), else
    the log's status."""
    if not statuses:
        return "  (no task logs)"
    rows = [("state", "done/total", "errors", "model", "task")]
    for s in sorted(statuses, key=lambda s: (s.complete, s.model, s.label)):
        mark = "done" if s.complete else "partial" if s.status == "success" else \
            "cancelled, to close" if s.to_close else "running" if s.status == "started" else s.status
        rows.append((mark, f"{s.done}/{s.total if s.total is not None else '?'}", str(s.errors), s.model, s.label))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    table = "\n".join("  " + "  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4] for r in rows)
    notes = [f"  {s.model} x {s.label}: running, but its log has not changed for {duration_text(s.quiet)} -- its eval "
             "process may have stopped (a re-run resumes it)" for s in statuses if s.quiet is not None]
    if any(s.to_close for s in statuses):
        notes.append(TO_CLOSE_NOTE)
    return table + "".join("\n" + n for n in notes)


def status_json(statuses: list[TaskStatus]) -> list[dict[str, Any]]:
    return [{**asdict(s), "complete": s.complete, "to_close": s.to_close, "quiet_s": s.quiet} for s in statuses]


def error_lines(statuses: list[TaskStatus]) -> list[str]:
    """What stopped each errored task, from its log's header (Inspect's own error): the last line
    of the message, which names the cause; the whole traceback is in the log (``inspect view``)."""
    from inspect_ai.log import read_eval_log

    out = []
    for s in statuses:
        if s.status != "error" or not s.log:
            continue
        try:
            error = read_eval_log(s.log, header_only=True).error
        except Exception as e:  # an unreadable log is said, never hidden
            out.append(f"error: {s.model} x {s.label}: its log {s.log} cannot be read ({type(e).__name__}: {e})")
            continue
        lines = [ln.strip() for ln in (error.message if error else "").splitlines() if ln.strip()]
        out.append(f"error: {s.model} x {s.label}: " + (lines[-1] if lines else "no message in its log")
                   + f" (log: {s.log.removeprefix('file://')})")
    return out
