"""What is said and kept about a run's batches at the provider (:mod:`conflict_eval.runs.batch_stop`):
a batch as seen (:class:`SubmittedBatch`, with the command that cancels it, its URL redacted), the
lines said while it waits or is cancelled, the stop record's lines for ``suite status``
(:func:`batch_lines`), and the requests billed but never read, kept beside the logs in
``unread-batches.jsonl`` (:func:`keep_unread`) so a resume does not lose the bill.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from conflict_eval.components.endpoint import redact, redact_url
from conflict_eval.runs.batch_faults import refusal_line

__all__ = ["SubmittedBatch", "age_text", "batch_lines", "billed_unread", "keep_unread", "requests_phrase", "say_left",
           "say_outcome", "say_stderr", "stop_record"]


@dataclass
class SubmittedBatch:
    id: str
    model: str
    url: str  # the batch's own URL (``.../batches/{id}``; printed only through redact_url)
    status: str
    requests: int | None = None  # request_counts.total, once the provider reports it
    completed: int | None = None  # request_counts.completed
    error: str | None = None  # why a cancel failed
    unread: int | None = None  # answered (billed) by the provider, not read by Inspect (runs.batch_faults)
    cause: str | None = None  # why it will give no (or not every) result: its samples' errors say so
    headers: dict[str, str] = field(default_factory=dict, repr=False)  # never written anywhere
    query: str = field(default="", repr=False)  # the query after the batch's URL (never written; redacted)
    ids: list[str] = field(default_factory=list, repr=False)  # its requests' custom_ids, in upload order
    endpoint: str = field(default="/v1/chat/completions", repr=False)
    created: float = field(default_factory=time.time, repr=False)  # first seen (the provider's created_at is whole seconds)
    files: dict[str, Any] = field(default_factory=dict, repr=False)  # result file id -> Unread (or None)

    def cancel_url(self) -> str:
        return f"{self.url.rstrip('/')}/cancel" + (f"?{self.query}" if self.query else "")

    def cancel_command(self) -> str:
        """The command that cancels it, its URL redacted (:func:`~conflict_eval.components.endpoint.redact_url`:
        no user info, a secret query parameter's value ``REDACTED``)."""
        provider = self.model.split("/", 1)[0].upper().replace("-", "_")
        head, route, query = self.url.rpartition(f"batches/{self.id}")[0], f"batches/{self.id}/cancel", self.query
        url = redact_url(head) + route + (f"?{redact_url('http://h/?' + query).partition('?')[2]}" if query else "")
        return (f"curl -X POST '{url}' "
                f"-H \"Authorization: Bearer ${provider}_API_KEY\"")

    def public(self, *, command: bool = False) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k in ("id", "model", "status", "requests", "completed",
                                                              "unread", "cause") and v is not None}
        if self.error:
            out["error"] = redact(self.error)
        if command:
            out["cancel"] = self.cancel_command()
        return out


def requests_phrase(batches: list[SubmittedBatch]) -> str:
    """"N requests", saying so where the provider had not counted a batch's requests yet."""
    n = sum(b.requests or 0 for b in batches)
    uncounted = sum(1 for b in batches if b.requests is None)
    return f"{n} requests" + (f"; {uncounted} batch(es) not yet counted by the provider" if uncounted else "")


def say_stderr(text: str) -> None:
    print(redact(text), file=sys.stderr, flush=True)


def say_left(say: Callable[[str], None], left: list[SubmittedBatch]) -> None:
    """The batches that may still run at the provider, each with the command that cancels it."""
    if not left:
        return
    say(f"{len(left)} batch(es) may still be running at the provider (billed when they finish); cancel with:")
    for b in left:
        say(f"  {b.id} ({b.model}, {b.requests or '?'} requests"
            + (f"; {redact(b.error)}" if b.error else "") + f"): {b.cancel_command()}")


def say_outcome(say: Callable[[str], None], cancelled: list[SubmittedBatch], finished: list[SubmittedBatch],
                left: list[SubmittedBatch], unwatched: set[str]) -> None:
    """What the cancels did: the batches cancelled, those that had finished first, those that may
    still run (each with its command), and the models whose batches could not be seen."""
    if cancelled:
        billed = sum(b.completed or 0 for b in cancelled)
        say(f"cancelled {len(cancelled)} batch(es) ({requests_phrase(cancelled)}) at the provider"
            + (f"; {billed} request(s) had already completed there (billed, results not read)" if billed else ""))
    if finished:
        say(f"{len(finished)} batch(es) had already finished at the provider (billed, results not read): "
            + ", ".join(b.id for b in finished))
    say_left(say, left)
    if unwatched:
        say("batches of " + ", ".join(sorted(unwatched)) + " are not visible to conflict-eval and were "
            "not cancelled; check the provider's batch console")


def stop_record(cancelled: list[SubmittedBatch], finished: list[SubmittedBatch], still: list[SubmittedBatch],
                unwatched: set[str], faulty: list[SubmittedBatch],
                refused: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The stop record's ``batches`` (:meth:`~conflict_eval.runs.batch_stop.BatchWatch.record`), ``None``
    when there is nothing in it."""
    if not (cancelled or finished or still or unwatched or faulty or refused):
        return None
    return {"cancelled": [b.public() for b in cancelled],
            "finished_before_cancel": [b.public() for b in finished],
            "still_running": [b.public(command=True) for b in still],
            "unwatched_models": sorted(unwatched),
            **({"unfinished": [b.public() for b in faulty]} if faulty else {}),
            **({"refused": list(refused)} if refused else {})}


def batch_lines(batches: dict[str, Any] | None) -> list[str]:
    """The stop record's ``batches`` for ``suite status``: what was cancelled, what the provider
    had already answered (billed, results not read, so not in the logs' cost), what may still run."""
    if not batches:
        return []
    out = []
    cancelled, finished = batches.get("cancelled") or [], batches.get("finished_before_cancel") or []
    billed = sum(b.get("completed") or 0 for b in cancelled)
    if cancelled:
        out.append(f"batches: {len(cancelled)} cancelled at the provider ({sum(b.get('requests') or 0 for b in cancelled)}"
                   f" requests)" + (f"; {billed} had already completed there: billed, results not read, "
                                    "not in the logs' cost" if billed else ""))
    if finished:
        out.append(f"batches: {len(finished)} finished at the provider before the cancel "
                   f"({sum(b.get('completed') or 0 for b in finished)} requests): billed, results not read, "
                   "not in the logs' cost")
    for b in batches.get("still_running") or []:
        out.append(redact(f"batch {b['id']} ({b['model']}) may still be running at the provider; "
                          f"cancel it: {b['cancel']}"))
    for b in batches.get("unfinished") or []:
        out.append(f"batch {b['id']} ({b['model']}): {b.get('cause') or 'results not all read'}"
                   + (f"; {b['unread']} request(s) answered there (billed) but not read, not in the logs' cost"
                      if b.get("unread") else "") + "; a re-run resumes its samples")
    for r in batches.get("refused") or []:
        out.append(refusal_line(r))
    if batches.get("unwatched_models"):
        out.append("batches of " + ", ".join(batches["unwatched_models"]) + " could not be seen, so were not "
                   "cancelled: check the provider's console")
    return out


def billed_unread(batches: dict[str, Any] | None) -> int:
    """Requests the provider answered (and bills) in batches whose results the run never read."""
    return sum(n for _, n in _unread_rows(batches))


def _unread_rows(batches: dict[str, Any] | None) -> list[tuple[dict, int]]:
    """``(batch, requests billed but unread)`` of a stop record: the requests a cancelled batch or one
    finished before its cancel had completed, and those a batch that could not finish left ``unread``."""
    if not batches:
        return []
    rows = [(b, b.get("completed") or 0) for key in ("cancelled", "finished_before_cancel")
            for b in batches.get(key) or []]
    return [(b, n) for b, n in rows + [(b, b.get("unread") or 0) for b in batches.get("unfinished") or []] if n]


def keep_unread(log_dir: str | Path, batches: dict[str, Any] | None) -> Path | None:
    """Append a stop's billed-but-unread batches to ``LOG_DIR/unread-batches.jsonl``: a resume
    clears the stop record, but the provider's bill for them stays, so the page must still say so."""
    n = billed_unread(batches)
    if not n:
        return None
    import datetime
    import json

    from conflict_eval.report.spend import UNREAD_FILE

    path = Path(log_dir) / UNREAD_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"id": b["id"], "model": b["model"], "completed": n} for b, n in _unread_rows(batches)]
    line = {"at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "requests_billed_unread": n, "batches": rows}
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
    return path
