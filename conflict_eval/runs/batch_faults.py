"""Batches that cannot finish: what the provider answered, made into one error per request.

Inspect's OpenAI batcher (inspect_ai 0.3.285, ``_openai_batch.py`` and
``util/batch.py``) waits for ever on a batch the provider reports ``cancelled``
or ``expired`` with no file, and on every request whose line is missing from
the output file; it fails a whole batch, with a pydantic error or a JSON error,
when one line is cut short, carries an unknown ``custom_id``, an HTTP 500
response or an ``error`` object. :class:`~conflict_eval.runs.batch_stop.BatchWatch`
sees those answers first (a response hook on the model's HTTP client) and,
with the functions here, hands Inspect an answer it settles:

* :func:`failed_batch`: a batch that ended without results (``cancelled``,
  ``expired``, ``failed``, or older than the suite's ``batch_timeout``) becomes
  a ``failed`` batch with one error per request, in the order the requests
  were uploaded, which Inspect turns into one error per sample (its
  ``_results_from_rejection``);
* :func:`readable_results`: the lines of an output or error file that Inspect
  can read pass on; each line it could not read (cut short, not a 200
  response, an ``error`` object, a body its response class rejects) is taken
  out and its request gets a :class:`BatchResultError` saying why, as does each
  request no file answered; a line with an unknown ``custom_id`` is dropped.
  Inspect's own ``error`` line handling cannot carry them: in inspect_ai
  0.3.285 with this openai SDK it raises "The request instance has not been
  set on this response" for every ``error`` line, failing the whole batch.
  The watch sends each error to its request in Inspect's batcher (the
  batcher's in-flight batch, ``Batch.requests[custom_id].result_stream``), then
  Inspect resolves the readable ones from the file.

Every message names the batch, the request (its ``custom_id``) and the cause.
Those samples end as errors; the run ends; a re-run resumes only them.
What the provider answered but nobody read is counted (:class:`Unread`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from conflict_eval.components.endpoint import redact

_CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"([^"]+)"')


def uploaded_ids(content: bytes) -> list[str]:
    """The ``custom_id`` of every request of a batch input file, in order, from the
    multipart body of its upload (one JSON object a line)."""
    out = []
    for raw in content.split(b"\n"):
        raw = raw.strip(b"\r")
        if not raw.startswith(b"{"):
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and isinstance(line.get("custom_id"), str) and "body" in line:
            out.append(line["custom_id"])
    return out


def failed_batch(data: dict, ids: list[str], model: str, cause: str) -> dict:
    """``data`` (a Batch object) as a ``failed`` batch with one error per request, in upload order,
    naming the batch, the request and ``cause``; where the uploads were not seen (a batch created
    by another client), the requests are numbered from ``request_counts.total``."""
    total = (data.get("request_counts") or {}).get("total") or 0
    names = ids or [f"{n} of {total} (its custom_id was not seen)" for n in range(1, total + 1)]
    out = dict(data)
    out["status"] = "failed"
    out["output_file_id"] = out["error_file_id"] = None
    # a rejected batch's own error per request (OpenAI's errors.data, in request order) where it gives one each
    own = [e for e in ((data.get("errors") or {}).get("data") or []) if isinstance(e, dict)]
    causes = ([f"the provider reports the batch {data.get('status')}: [{e.get('code')}] {e.get('message')}"
               for e in own] if own and len(own) == len(names) else [cause] * len(names))
    errors = [{"code": "conflict_eval_unfinished", "line": n, "param": None,
               "message": f"batch {data['id']} ({model}): request {name}: {why}"}
              for n, (name, why) in enumerate(zip(names, causes), 1)]
    if not errors:  # Inspect then fails every request with one generic error; say ours instead
        errors = [{"code": "conflict_eval_unfinished", "line": None, "param": None,
                   "message": f"batch {data['id']} ({model}): {cause}"}]
    out["errors"] = {"object": "list", "data": errors}
    return out


def unfinished_cause(data: dict) -> str | None:
    """Why a polled batch will never give Inspect results, or ``None`` (it may still)."""
    status = str(data.get("status") or "").lower()
    if status not in ("cancelled", "expired", "failed"):
        return None
    if status != "failed" and (data.get("output_file_id") or data.get("error_file_id")):
        return None  # its files hold what was run; readable_results reads them
    errors = (data.get("errors") or {}).get("data") or []
    said = "; ".join(f"[{e.get('code')}] {e.get('message')}" for e in errors[:3] if isinstance(e, dict))
    counts = data.get("request_counts") or {}
    done = counts.get("completed")
    return (f"the provider reports the batch {status}" + (f" ({said})" if said else "")
            + (f"; {done} request(s) had completed there (billed, results not read)" if done else ""))


class BatchResultError(RuntimeError):
    """A request of a batch whose result cannot be read; the message names the batch, the request
    and the cause. Not retried by Inspect (not a provider status error); a re-run resumes it."""


def _body_problem(body: Any, endpoint: str) -> str | None:
    """Why Inspect's response class would reject ``body`` (its first field error), or ``None``."""
    import pydantic

    if endpoint.endswith("/responses"):
        from openai.types.responses import Response as cls
    else:
        from openai.types.chat import ChatCompletion as cls
    try:
        cls.model_validate(body)
    except pydantic.ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "body"
        return f"the response body does not parse ({e.error_count()} error(s); {where}: {first.get('msg')})"
    return None


@dataclass
class Unread:
    """One file's lines: what Inspect gets, and what the provider answered but nobody reads."""

    text: bytes = b""
    errors: dict[str, str] = field(default_factory=dict)  # custom_id -> why its line cannot be read
    answered: int = 0  # lines holding a 200 response (readable or not), and lines cut short
    read: int = 0  # lines passed on as responses
    seen: set[str] = field(default_factory=set)  # the custom_ids this file answered, well or not
    unknown: list[str] = field(default_factory=list)  # lines whose custom_id no request had


def readable_results(content: bytes, name: str, batch: str, model: str, ids: list[str],
                     endpoint: str) -> Unread:
    """An output or error file (``name``) of ``batch``: the lines Inspect can read, and why each
    other request's line cannot be (see module docstring); ``ids`` are the batch's requests."""
    known = set(ids)
    out = Unread()
    lines = []
    for n, raw in enumerate(content.split(b"\n"), 1):
        raw = raw.strip(b"\r")
        if not raw.strip():
            continue
        where = f"batch {batch} ({model}): line {n} of file {name}"
        try:
            line = json.loads(raw)
            if not isinstance(line, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            found = _CUSTOM_ID.search(raw)
            cid = found.group(1).decode() if found else None
            out.answered += 1
            if cid in known and cid not in out.seen:
                out.seen.add(cid)
                out.errors[cid] = f"{where}: request {cid}: the line is not valid JSON (cut short?): {e}"
            else:
                out.unknown.append(cid or f"line {n}")
            continue
        cid = line.get("custom_id")
        response = line.get("response") if isinstance(line.get("response"), dict) else None
        ok_status = response is not None and response.get("status_code") == 200
        if ok_status:
            out.answered += 1
        if cid not in known or cid in out.seen:
            out.unknown.append(str(cid))
            continue
        out.seen.add(cid)
        error = line.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            code = error.get("code") if isinstance(error, dict) else None
            problem = f"the provider answered with an error ({code}: {message})"
        elif response is None:
            problem = "the line holds neither a response nor an error"
        elif not ok_status:
            body = response.get("body")
            said = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
            problem = f"the provider answered HTTP {response.get('status_code')}" + (f": {said}" if said else "")
        else:
            problem = _body_problem(response.get("body"), endpoint)
        if problem:
            out.errors[cid] = f"{where}: request {cid}: {problem}"
        else:
            out.read += 1
            lines.append(raw)
    out.text = b"\n".join(lines) + (b"\n" if lines else b"")
    return out


def missing_errors(batch: str, model: str, missing: list[str], files: list[str]) -> dict[str, str]:
    """Why each request no file of the batch answered has no result."""
    where = ", ".join(files) or "no file"
    return {cid: f"batch {batch} ({model}): request {cid}: the provider reports the batch completed but its "
                 f"result file ({where}) has no line for it" for cid in missing}


_ROUTE = re.compile(r"(batches(?:/[^/?]+(?:/cancel)?)?|files(?:/[^/?]+/content)?)/?$")
POLL_ROUTE = re.compile(r"batches/[^/?]+")
DOWNLOAD_ROUTE = re.compile(r"files/([^/?]+)/content")


def api_route(url) -> str | None:
    """The Batches or Files API route at the end of a request URL (``batches``, ``batches/ID``,
    ``files``, ``files/ID/content``...), or ``None``. A base URL with a query
    (``.../v1?key=K``) puts the route after the query: the OpenAI client appends it to the raw
    path (``/v1/?key=Kbatches``), so the query is searched where the path holds no route."""
    path = url.path
    query = url.query.decode() if isinstance(url.query, bytes) else str(url.query or "")
    for text in (path, f"{path}?{query}" if query else None):
        found = _ROUTE.search(text) if text else None
        if found:
            return found.group(1)
    return None


def batch_url(raw: str, route: str, batch_id: str) -> tuple[str, str]:
    """``(url, query)`` of a batch from the URL of its creation (``route`` ``batches``) or of a
    poll (``batches/ID``): the route kept where the client put it, a query after it apart."""
    head, _, tail = raw.rpartition(route)
    _, _, query = tail.partition("?")
    return f"{head}batches/{batch_id}", query


async def read_upload(request) -> None:
    """Read a batch input file's upload before it is sent (httpx's ``Request.aread`` keeps the
    body to send), so the watch learns its requests' ``custom_id``s from the response."""
    if request.method == "POST" and api_route(request.url) == "files":
        await request.aread()


REFUSAL_ADVICE = {
    429: "the provider's batch queue or rate limit is full: wait, then run the same command again (it resumes)",
    404: "the endpoint has no Batches API for this model: check the base URL, or run it without batch",
}


def refusal_line(refused: dict[str, Any]) -> str:
    """One line for a batch creation the provider refused (``BatchWatch.refused``): its status and what to do."""
    status = refused.get("status")
    advice = REFUSAL_ADVICE.get(status) or ("the provider's batch service failed: run the same command again later "
                                            "(it resumes)" if isinstance(status, int) and status >= 500 else
                                            "check the model's batch setting and the provider's console")
    return redact(f"the provider refused to create a batch for {refused.get('model')}: HTTP {status} "
                  f"({refused.get('message')}); {advice}")
