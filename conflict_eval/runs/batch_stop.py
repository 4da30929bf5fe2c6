"""Batches a run leaves at the provider when it stops early (Ctrl-C, SIGTERM): seen, then cancelled.

Inspect's batcher (inspect_ai 0.3.285) keeps the batches it submitted in its
own private state and names them only in lines it prints ("Created batch ID
with N requests"); neither its public API, its hooks nor its logs carry a
batch ID. When a run is cancelled, its batch worker goes with the event loop
and the batches it submitted keep running, and billing, at the provider.

What this module sees instead is the provider's own answers, the least
invasive way there is: a response event hook on the model's HTTP client
(``model.api.http_client``, the public attribute of Inspect's OpenAI and
OpenAI-compatible providers; Inspect installs its own hooks on the same
client the same way). It reads only the Batch objects the Batches API returns
(``POST .../batches`` when a batch is created, ``GET .../batches/{id}`` each
time Inspect polls it): the batch ID, its status and ``request_counts``; the
upload of a batch's input file (``POST .../files``, read before it is sent
with httpx's ``Request.aread``) for its requests' ``custom_id`` values; and the
download of its result files (``GET .../files/{id}/content``).

A batch that cannot finish ends (:mod:`conflict_eval.runs.batch_faults`):
the answer of a poll that reports it ``cancelled``, ``expired`` or ``failed``
without results, or of one past ``timeout`` (the suite's ``batch_timeout``;
the batch is cancelled at the provider first), is handed to Inspect as a
failed batch with one error per request; a result file is handed on with its
readable lines only, and each other request gets its error in Inspect's
batcher. Those are the only answers it changes (the body of a read httpx
response, ``_content``); what the provider answered but nobody read is counted
(``unread``). While a batch waits, its age and counts are said every
``progress`` seconds. A batch creation the provider refuses (429, 5xx, 404) is
noted (``refused``) for one clear line. Every URL it prints or stores goes
through :func:`conflict_eval.components.endpoint.redact_url`.

:meth:`BatchWatch.stop` is called once ``eval``/``eval_set`` has returned:
every batch last seen not finished is cancelled at the provider
(``POST .../batches/{id}/cancel``, OpenAI's Batch API, with the headers the
run created it with), and the outcome is printed: "cancelled N batches (M
requests) at the provider". A batch whose cancel fails is listed with the
command that cancels it. The outcome goes into the suite's stop record.
Requests the provider finished before the cancel are billed (OpenAI bills a
cancelled batch's completed requests) and their results are not read; their
count is reported (``completed_before_cancel``).

Not seen, so not cancelled (each reported as such):

* batched models of providers whose batches go through another API or client
  (``anthropic``, ``google``, ``grok``): listed as ``unwatched_models``;
* a batch created in the instant the run was interrupted, before its creation
  response reached the client (the provider made it; the run never learned
  its ID).

A second Ctrl-C (or SIGTERM) during the cancels stops them at once
(``KeyboardInterrupt`` propagates); the suite's stop record, written before
the cancels start, then lists every batch as still running with its command.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from pathlib import Path
from typing import Any, Callable

from conflict_eval.components.endpoint import redact
from conflict_eval.runs.batch_faults import (DOWNLOAD_ROUTE, POLL_ROUTE, BatchResultError, api_route, batch_url, failed_batch,
                                             missing_errors, readable_results, read_upload, refusal_line,
                                             unfinished_cause, uploaded_ids)
from conflict_eval.runs.batch_record import (SubmittedBatch, batch_lines, billed_unread, keep_unread,
                                             requests_phrase, say_left, say_outcome, say_stderr, stop_record)
from conflict_eval.runs.walltime import duration_text

# the batch as seen, its lines and the unread-batches file live in runs.batch_record; importable from here too
__all__ = ["BATCH_TIMEOUT", "CANCEL_DEADLINE", "CANCEL_TIMEOUT", "CANCELLED", "FINISHED", "PROGRESS_EVERY", "BatchWatch",
           "SubmittedBatch", "batch_lines", "billed_unread", "keep_unread", "refusal_line"]

FINISHED = frozenset({"completed", "failed", "expired", "cancelled"})
CANCELLED = frozenset({"cancelling", "cancelled"})
CANCEL_TIMEOUT = 10.0  # seconds per cancel request
CANCEL_DEADLINE = 30.0  # seconds for all of them; the batches not tried by then are listed
BATCH_TIMEOUT = 26 * 3600.0  # seconds a batch may wait (the suite's batch_timeout): Inspect asks for a 24 h window
PROGRESS_EVERY = 300.0  # seconds between the lines that say the waiting batches' age and counts
# request headers never replayed on a cancel (the body's, the transport's, Inspect's request id)
_DROP_HEADERS = {"content-length", "content-type", "host", "transfer-encoding", "connection", "accept-encoding",
                 "idempotency-key", "x-irid"}



def _counts(data: dict) -> tuple[int | None, int | None]:
    counts = data.get("request_counts") or {}
    total = counts.get("total")
    return (total if total else None), counts.get("completed")



def _replace_body(response, payload: bytes) -> None:
    """Give Inspect ``payload`` as the response's body. httpx keeps a read body in ``_content``
    (httpx2 as vendored by inspect_ai 0.3.285); the response was read just before."""
    response._content = payload
    response.__dict__.pop("_text", None)


class BatchWatch:
    """The batches a run's models submitted, as the provider reported them.

    ``timeout``: seconds a batch may stay unfinished at the provider before it is cancelled
    there and its samples end as errors (the suite's ``batch_timeout``); ``progress``: seconds
    between the lines saying each waiting batch's age and counts (at most a quarter of
    ``timeout``); ``say``: where they go (stderr, every URL redacted)."""

    def __init__(self, timeout: float = BATCH_TIMEOUT, progress: float = PROGRESS_EVERY,
                 say: Callable[[str], None] | None = None):
        self._lock = threading.Lock()
        self.batches: dict[str, SubmittedBatch] = {}
        self.unwatched: set[str] = set()  # batched models whose batches cannot be seen
        self.refused: list[dict[str, Any]] = []  # batch creations the provider refused: model, status, message
        # at least four lines before a batch times out
        self.timeout, self.progress, self.say = timeout, min(progress, timeout / 4), say or say_stderr
        self._clients: set[int] = set()  # the HTTP clients already hooked
        self._apis: dict[str, Any] = {}  # model name -> its provider object (whose batcher runs the batches)
        self._uploads: dict[str, list[str]] = {}  # uploaded input file id -> its requests' custom_ids
        self._said = 0.0  # when the waiting batches were last said

    def watch(self, model_name: str, model: Any) -> bool:
        """Watch a built Inspect ``Model``'s batch calls; ``False`` (and listed) where it cannot be done."""
        client = getattr(getattr(model, "api", None), "http_client", None)
        hooks = getattr(client, "event_hooks", None)
        if not isinstance(hooks, dict) or "response" not in hooks or "request" not in hooks:
            self.unwatched.add(model_name)
            return False
        self._apis.setdefault(model_name, model.api)
        if id(client) not in self._clients:
            self._clients.add(id(client))
            hooks["request"].append(read_upload)
            hooks["response"].append(functools.partial(self._on_response, model_name))
        return True

    async def _on_response(self, model_name: str, response) -> None:
        request = response.request
        route = api_route(request.url) or ""
        post, get = request.method == "POST", request.method == "GET"
        creating, polling = post and route == "batches", get and POLL_ROUTE.fullmatch(route) is not None
        uploading, download = post and route == "files", DOWNLOAD_ROUTE.fullmatch(route) if get else None
        downloading = download is not None
        if not (creating or polling or uploading or downloading):
            return
        try:
            await response.aread()
            data = response.json() if not downloading else None
        except Exception:  # noqa: BLE001 -- not a JSON answer: nothing to note
            data = None
        if (creating or uploading) and not 200 <= response.status_code < 300:
            message = ((data or {}).get("error") or {}).get("message") if isinstance(data, dict) else None
            with self._lock:
                self.refused.append({"model": model_name, "status": response.status_code,
                                     "message": redact(str(message or response.reason_phrase))})
            return
        if not 200 <= response.status_code < 300:
            return
        if downloading:
            return await self._on_file(response, download.group(1))
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            return
        if uploading:
            with self._lock:
                self._uploads[data["id"]] = uploaded_ids(getattr(request, "_content", b"") or b"")
            return
        total, completed = _counts(data)
        with self._lock:
            batch = self.batches.get(data["id"])
            if batch is None:  # created, or first polled (Together creates its batches with another client)
                url, query = batch_url(str(request.url), route, data["id"])
                headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROP_HEADERS
                           and not k.lower().startswith("x-stainless")}
                batch = self.batches[data["id"]] = SubmittedBatch(
                    data["id"], model_name, url, "validating", query=query, headers=headers,
                    ids=self._uploads.pop(str(data.get("input_file_id")), []),
                    endpoint=str(data.get("endpoint") or "/v1/chat/completions"))
            batch.status = str(data.get("status") or batch.status).lower()
            batch.requests = total or batch.requests
            batch.completed = completed if completed is not None else batch.completed
            for key in ("output_file_id", "error_file_id"):
                if data.get(key):
                    batch.files.setdefault(str(data[key]), None)
        if polling:
            await self._on_poll(batch, data, response)

    async def _on_poll(self, batch: SubmittedBatch, data: dict, response) -> None:
        """A batch that will give Inspect no result is handed to it as failed, one error per request;
        one older than ``timeout`` is cancelled first; the waiting batches are said now and then."""
        cause = unfinished_cause(data)
        age = time.time() - batch.created
        if cause is None and batch.status not in FINISHED and age > self.timeout:
            await self._cancel_late(batch)
            cause = (f"no result within the suite's batch_timeout ({self.timeout:g} s; the batch was "
                     f"{batch.status} at the provider" + (f"; its cancel failed: {batch.error})" if batch.error
                                                          else ", and is cancelled there)"))
        if cause is not None:
            if batch.cause is None:
                self.say(f"batch {batch.id} ({batch.model}) will not finish: {cause}; its "
                         f"{len(batch.ids) or batch.requests or '?'} request(s) end as errors")
            batch.cause = cause
            batch.unread = batch.completed or None  # billed there, never read
            _replace_body(response, json.dumps(failed_batch(data, batch.ids, batch.model, cause)).encode())
            return
        now = time.monotonic()
        if batch.status not in FINISHED and now - self._said >= self.progress:
            self._said = now
            for b in self.running():
                counts = f"{b.completed or 0}/{b.requests or len(b.ids) or '?'}"
                self.say(f"batch {b.id} ({b.model}): {b.status} at the provider for {duration_text(time.time() - b.created)}; "
                         f"requests completed/total {counts}; ends as errors after batch_timeout "
                         f"{self.timeout:g} s")

    async def _cancel_late(self, batch: SubmittedBatch) -> None:
        import httpx

        try:
            async with httpx.AsyncClient(timeout=CANCEL_TIMEOUT) as client:
                r = await client.post(batch.cancel_url(), headers=batch.headers)
            data = r.json() if r.content else {}
            if not r.is_success or not isinstance(data, dict):
                batch.error = f"HTTP {r.status_code}"
                return
            batch.status = str(data.get("status") or batch.status).lower()
            _, completed = _counts(data)
            batch.completed = completed if completed is not None else batch.completed
        except (httpx.HTTPError, ValueError) as exc:
            batch.error = redact(f"{type(exc).__name__}: {exc}")

    async def _on_file(self, response, file_id: str) -> None:
        """A result file of a watched batch: Inspect gets its readable lines; every other request of
        the batch (unreadable, or no line in any of its files, counted once the last file is read)
        gets its error in Inspect's batcher (:func:`_send_errors`)."""
        with self._lock:
            batch = next((b for b in self.batches.values() if file_id in b.files), None)
        if batch is not None and not batch.ids:  # created by another client: Inspect's batcher knows them
            held = self._held(batch)
            batch.ids = list(held.requests) if held is not None else []
        if batch is None or not batch.ids:
            return
        found = readable_results(response.content, file_id, batch.id, batch.model, batch.ids, batch.endpoint)
        batch.files[file_id] = found
        _replace_body(response, found.text)
        if any(v is None for v in batch.files.values()):
            return  # another file of the batch is still to come
        files = list(batch.files.values())
        seen = set().union(*(v.seen for v in files))
        errors = {k: v for f in files for k, v in f.errors.items()}
        missing = [cid for cid in batch.ids if cid not in seen]
        errors.update(missing_errors(batch.id, batch.model, missing, list(batch.files)))
        read = sum(f.read for f in files)
        unread = max(batch.completed or 0, sum(f.answered for f in files)) - read
        unknown = [u for f in files for u in f.unknown]
        batch.unread = unread or None
        if not (errors or unknown or unread):
            return
        batch.cause = "; ".join(x for x in (f"{len(errors)} request(s) without a readable result" if errors else "",
                                            f"line(s) answering no request of the batch: {', '.join(unknown)}"
                                            if unknown else "") if x)
        self.say(f"batch {batch.id} ({batch.model}): {read} of {len(batch.ids)} result(s) readable"
                 + (f"; {len(missing)} request(s) have no line in its result file(s)" if missing else "")
                 + (f"; {len(errors) - len(missing)} line(s) cannot be read" if len(errors) > len(missing) else "")
                 + (f"; {len(unknown)} line(s) answer no request of the batch" if unknown else "")
                 + (f"; {unread} request(s) answered (billed) but not read" if unread else ""))
        if errors and not await self._send_errors(batch, errors):
            self.say(f"batch {batch.id} ({batch.model}): its batcher could not be reached; requests "
                     f"{', '.join(errors)} may wait until the run's batch_timeout")

    async def _send_errors(self, batch: SubmittedBatch, errors: dict[str, str]) -> bool:
        """Each request of ``errors`` ends with its :class:`BatchResultError`: sent to the request's
        result stream in Inspect's batcher (the provider's ``_completions_batcher`` or
        ``_responses_batcher``, their in-flight ``Batch.requests``: inspect_ai 0.3.285 internals),
        before Inspect resolves the rest of the batch from the file."""
        held = self._held(batch)
        if held is None:
            return False
        for cid, message in errors.items():
            request = held.requests.get(cid)
            if request is None:
                continue
            request.submitted()
            try:
                await request.result_stream.send(BatchResultError(message))
            except Exception:  # noqa: BLE001 -- the sample is gone (cancelled): nobody to tell
                pass
        return True

    def _held(self, batch: SubmittedBatch) -> Any:
        """Inspect's in-flight ``Batch`` (``requests``: custom_id -> ``BatchRequest``) of ``batch``, in
        its provider's ``_completions_batcher`` or ``_responses_batcher``; ``None`` if not found."""
        api = self._apis.get(batch.model)
        for name in ("_completions_batcher", "_responses_batcher"):
            inflight = getattr(getattr(api, name, None), "_inflight_batches", None)
            held = inflight.get(batch.id) if isinstance(inflight, dict) else None
            if held is not None:
                return held
        return None

    def running(self) -> list[SubmittedBatch]:
        with self._lock:
            return [b for b in self.batches.values() if b.status not in FINISHED]

    def record(self, cancelled: list[SubmittedBatch] | None = None,
               finished: list[SubmittedBatch] | None = None) -> dict[str, Any] | None:
        """For the stop record: what was cancelled, finished first, and what still runs (with its command);
        ``unfinished``: the batches whose samples ended as errors (each with its ``cause`` and the
        requests answered but ``unread``); ``refused``: the batch creations the provider refused."""
        cancelled, finished = cancelled or [], finished or []
        done = {b.id for b in cancelled + finished}
        still = [b for b in self.running() if b.id not in done]
        return stop_record(cancelled, finished, still, self.unwatched, self.faulty(), self.refused)

    def watching(self) -> bool:
        """Whether any model's batches are watched."""
        return bool(self._clients)

    def say_refused(self) -> None:
        """One line per refused batch creation (model and status): the provider's status and what to do."""
        said = set()
        for r in self.refused:
            if (r["model"], r["status"]) not in said:
                said.add((r["model"], r["status"]))
                self.say(refusal_line(r))

    def faulty(self) -> list[SubmittedBatch]:
        """The batches that gave (some of) their samples no result, or results nobody read."""
        with self._lock:
            return [b for b in self.batches.values() if b.cause or b.unread]

    def settle(self, log_dir: str | Path | None, signalled: bool,
               record: Callable[[dict[str, Any] | None], None] | None = None) -> dict[str, Any] | None:
        """After the eval: ``record`` (the caller's stop record, ``None`` when nothing is left)
        first lists what still runs, so a second Ctrl-C during the cancels leaves every batch
        listed; then every unfinished batch is cancelled (:meth:`stop`), the billed-but-unread
        requests are kept beside the logs (:func:`keep_unread`) and the record is written
        again with the outcome. Returns the outcome, ``None`` where there was nothing to do."""
        if record is not None:
            record(self.record() if signalled or self.faulty() or self.refused else None)
        if self.running() or (signalled and self.unwatched):
            batches = self.stop()  # nobody will read these batches' results: cancel them at the provider
        elif self.faulty() or self.refused:
            batches = self.record()
        else:
            return None
        if log_dir is not None:
            keep_unread(log_dir, batches)
        if record is not None:
            record(batches)
        return batches

    def stop(self, say: Callable[[str], None] | None = None, timeout: float = CANCEL_TIMEOUT,
             deadline: float = CANCEL_DEADLINE) -> dict[str, Any] | None:
        """Cancel every batch still running at the provider; say what happened; the stop record's ``batches``."""
        import time

        import httpx

        say = say or self.say
        running = self.running()
        if running:
            say(f"cancelling {len(running)} batch(es) still running at the provider ({requests_phrase(running)})"
                " (Ctrl-C again to leave them running)")
        cancelled: list[SubmittedBatch] = []
        finished: list[SubmittedBatch] = []
        end = time.monotonic() + deadline
        try:
            for b in running:
                left = end - time.monotonic()
                if left <= 0:
                    b.error = f"not tried: the cancels took over {deadline:.0f} s"
                    continue
                try:
                    r = httpx.post(b.cancel_url(), headers=b.headers, timeout=min(timeout, left))
                    data = r.json() if r.content else {}
                except (httpx.HTTPError, ValueError) as exc:
                    b.error = redact(f"{type(exc).__name__}: {exc}")
                    continue
                if not r.is_success or not isinstance(data, dict):
                    message = (data.get("error") or {}).get("message") if isinstance(data, dict) else None
                    b.error = redact(f"HTTP {r.status_code}" + (f": {message}" if message else ""))
                    continue
                total, completed = _counts(data)
                with self._lock:
                    b.status = str(data.get("status") or b.status).lower()
                    b.requests = total or b.requests
                    b.completed = completed if completed is not None else b.completed
                if b.status in CANCELLED:
                    cancelled.append(b)
                elif b.status in FINISHED:
                    finished.append(b)
                else:
                    b.error = f"still {b.status} after the cancel request"
        except KeyboardInterrupt:
            say_left(say, [b for b in running if b not in cancelled and b not in finished])
            raise
        say_outcome(say, cancelled, finished, [b for b in running if b not in cancelled and b not in finished],
                    self.unwatched)
        return self.record(cancelled, finished)
