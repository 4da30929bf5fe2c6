"""The one OpenAI-compatible server on 127.0.0.1 for tests (``OpenAIServer``).

Live calls: ``POST /v1/chat/completions`` and ``/v1/responses``, each answered
with ``reply(prompt)`` (the last user message) and usage (the prompt's words in,
the reply's words out). Every live call is recorded in ``seen`` (``{"path",
"body", "auth"}``), its prompt in ``prompts`` and its usage in ``live_usage``;
``empty(n, prompt)`` (``n`` 1-based over the server's life) makes chosen calls
come back ``200`` with ``"choices": []``, as some APIs do under load (their
prompts are in ``failed``).

Batches: the endpoints Inspect's OpenAI batcher uses (inspect_ai 0.3.285,
``_openai_batch.py``): upload a JSONL file (``POST /v1/files``), create a batch
(``POST /v1/batches``), retrieve it (``GET /v1/batches/{id}``), download the
output file (``GET /v1/files/{id}/content``) and cancel it
(``POST /v1/batches/{id}/cancel``), for Chat Completions and Responses
requests alike. A live call is counted in ``counts["live"]``, so a test can tell
batched calls from live ones. Each route is one line of ``ROUTES`` (method,
path test, counter, handler method): a new endpoint is a line and a method.

* ``delay``: seconds a batch stays ``in_progress`` before it completes.
* ``fail``: ``None``, ``"failed"`` (the whole batch rejected, with an error
  per request, as OpenAI reports a rejected batch), ``"expired"`` (every
  request in the error file with code ``batch_expired``, as OpenAI writes
  requests not run within the completion window), or ``"expired-no-file"``
  (expired with neither file). ``fail_after``: only batches created after this many.
  ``usage`` holds ``(in, out)`` per answered batched request.
* ``fault``: a fault of a batch provider (:data:`FAULTS`), injected into the batches
  created after ``fail_after``: ``"missing"`` (the output file lacks its last 2
  lines; the provider still counts them completed), ``"unknown-id"`` (line 1 carries
  a custom_id no request had), ``"cancelled"`` (cancelled in the provider's console:
  no file), ``"cut"`` (lines 1 and 2 cut in half), ``"line-500"`` (line 1 is an HTTP
  500 response), ``"error-object"`` (line 1 is an ``error`` object, no response),
  ``"create-429"``, ``"create-500"``, ``"create-404"`` (batch creation refused with
  that status), ``"stuck"`` (in progress for ever), ``"mixed"`` (line 1 cut in half,
  line 2 an HTTP 500, line 3 an ``error`` object, line 4 with an unknown custom_id,
  line 5 lost, the rest answered: every output-file fault in one batch). A mapping gives each model (the
  ``model`` of its requests) its own fault. ``usage`` counts every request the provider
  answered (bills), lines cut short or lost from the file included.
* ``cancel_status``: a status other than 200 refuses every cancel with it.
* Bounded: it shuts itself down after ``lifetime`` seconds.

``with OpenAIServer() as srv: srv.url`` -> ``http://127.0.0.1:PORT/v1``.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return " ".join(str(p.get("text", "")) for p in content or [] if isinstance(p, dict))


def _messages(body: dict) -> list[dict]:
    """The conversation of a Chat Completions (``messages``) or Responses (``input``) request."""
    if "messages" in body:
        return list(body["messages"])
    items = body.get("input")
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    msgs = [{"role": "system", "content": body["instructions"]}] if body.get("instructions") else []
    return msgs + [i for i in items or [] if isinstance(i, dict) and "role" in i]


def _completion(body: dict, text: str, url: str = "/v1/chat/completions") -> dict:
    """A Chat Completions or Responses API reply with usage: prompt words in, reply words out."""
    prompt_words = sum(len(_text(m.get("content")).split()) for m in _messages(body))
    out_words = len(text.split())
    if url.endswith("/responses"):
        return {"id": f"resp_{uuid.uuid4().hex[:12]}", "object": "response", "created_at": int(time.time()),
                "model": body.get("model", "fake"), "status": "completed", "parallel_tool_calls": True,
                "tool_choice": "auto", "tools": [],
                "output": [{"type": "message", "id": f"msg_{uuid.uuid4().hex[:8]}", "status": "completed",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                "usage": {"input_tokens": prompt_words, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                          "output_tokens": out_words, "output_tokens_details": {"reasoning_tokens": 0},
                          "total_tokens": prompt_words + out_words}}
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": out_words,
                      "total_tokens": prompt_words + out_words}}


def _usage(reply: dict) -> tuple[int, int]:
    u = reply["usage"]
    return (u["input_tokens"], u["output_tokens"]) if "input_tokens" in u else (u["prompt_tokens"],
                                                                              u["completion_tokens"])


def _last_prompt(body: dict) -> str:
    for m in reversed(_messages(body)):
        if m.get("role") == "user":
            return _text(m.get("content"))
    return ""


class OpenAIServer:
    def __init__(self, reply: Callable[[str], str] | str = "A</a>", *, delay: float = 0.2, fail: str | None = None,
                 fail_after: int = 0, lifetime: float = 300.0, empty: Callable[[int, str], bool] | None = None,
                 fault: str | dict[str, str] | None = None):
        assert all(f in FAULTS for f in (fault.values() if isinstance(fault, dict) else [fault] if fault else [])), fault
        self.reply = reply if callable(reply) else (lambda prompt, text=reply: text)
        self.delay, self.fail, self.fail_after, self.lifetime = delay, fail, fail_after, lifetime
        self.fault = fault
        self.empty = empty
        self.seen: list[dict] = []  # every live call: {"path", "body", "auth"}
        self.prompts: list[str] = []  # the prompt of every live call, in order
        self.failed: list[str] = []  # the prompts of the calls answered with no choices
        self.live_usage: list[tuple[int, int]] = []
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.counts: Counter = Counter()
        self.usage: list[dict] = []  # one entry per answered batched request
        self.answered: Counter = Counter()  # batch id -> requests answered (billed), readable or not
        self.cancel_status = 200  # what a cancel gets: another status refuses it
        self.custom_ids: list[str] = []
        self.live: list[tuple[str, dict]] = []  # (path, body) of every live call
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, code: int, payload, raw: bytes | None = None):
                data = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json" if raw is None else "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _route(self, method: str):
                path = _api_path(self.path)
                body = self._body() if method == "POST" else b""
                for verb, test, counter, handle in ROUTES:
                    if verb == method and test(path, self.path):
                        if counter:
                            server.counts[counter] += 1
                        return self._send(*getattr(server, handle)(self, path, body))
                return self._send(404, {"error": {"message": f"no route {path}"}})

            def do_POST(self):  # noqa: N802
                self._route("POST")

            def do_GET(self):  # noqa: N802
                self._route("GET")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True

    # routes (ROUTES): each returns the HTTP code and the JSON payload (or None and raw bytes) ----

    def _files_create(self, req, path: str, body: bytes):
        content = _multipart_file(body, req.headers.get("Content-Type", ""))
        fid = f"file-{uuid.uuid4().hex[:12]}"
        with self.lock:
            self.files[fid] = content
        return 200, {"id": fid, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                     "filename": "batch.jsonl", "purpose": "batch", "status": "processed"}

    def _fault(self, lines: list[dict]) -> str | None:
        """The fault of a batch of these requests (None before ``fail_after`` batches)."""
        if len(self.batches) < self.fail_after or not self.fault:
            return None
        if isinstance(self.fault, str):
            return self.fault
        return self.fault.get(lines[0]["body"].get("model")) if lines else None

    def _batches_create(self, req, path: str, body: bytes):
        request = json.loads(body)
        with self.lock:
            fault = self._fault(self._lines(request))
        if fault and fault.startswith("create-"):
            code = int(fault.removeprefix("create-"))
            return code, {"error": {"message": f"simulated refusal ({code})", "type": "server_error", "code": None}}
        return 200, self._create(request)

    def _lines(self, req: dict) -> list[dict]:
        return [json.loads(x) for x in self.files[req["input_file_id"]].decode().splitlines() if x.strip()]

    def _batches_cancel(self, req, path: str, body: bytes):
        bid = path.split("/")[-2]
        if self.cancel_status != 200:
            return self.cancel_status, {"error": {"message": f"simulated cancel failure ({self.cancel_status})"}}
        with self.lock:
            b = self.batches.get(bid)
            if b is None:
                return 404, {"error": {"message": f"no batch {bid}"}}
            if b["status"] in ("validating", "in_progress"):
                b["status"] = "cancelled"
            return 200, self._public(b)

    def _live_call(self, req, path: str, body: bytes):
        path = "/v1/responses" if _live_path(path, req.path).endswith("responses") else "/v1/chat/completions"
        request = json.loads(body or b"{}")
        prompt = _last_prompt(request)
        with self.lock:
            self.counts["live"] += 1  # a call that did not go through the batch API
            self.live.append((path, request))
            self.seen.append({"path": req.path, "body": request, "auth": req.headers.get("Authorization")})
            self.prompts.append(prompt)
            empty = self.empty is not None and self.empty(len(self.prompts), prompt)
            if empty:
                self.failed.append(prompt)
        reply = _completion(request, self.reply(prompt), path)
        if empty:
            reply["choices"] = []
        self.live_usage.append(_usage(reply))
        return 200, reply

    def _files_content(self, req, path: str, body: bytes):
        fid = path.split("/")[-2]
        with self.lock:
            data = self.files.get(fid)
        return (200, None, data) if data is not None else (404, {"error": {"message": f"no file {fid}"}})

    def _batches_retrieve(self, req, path: str, body: bytes):
        bid = path.split("/")[-1]
        with self.lock:
            b = self.batches.get(bid)
            if b is None:
                return 404, {"error": {"message": f"no batch {bid}"}}
            self._advance(b)
            return 200, self._public(b)

    # batches ------------------------------------------------------------

    def _create(self, req: dict) -> dict:
        bid = f"batch_{uuid.uuid4().hex[:12]}"
        with self.lock:
            lines = self._lines(req)
            n = len(self.batches)
            b = {"id": bid, "object": "batch", "endpoint": req.get("endpoint", "/v1/chat/completions"),
                 "input_file_id": req["input_file_id"], "completion_window": req.get("completion_window", "24h"),
                 "status": "validating", "created_at": int(time.time()), "started": time.monotonic(),
                 "lines": lines, "fail": self.fail if n >= self.fail_after else None,
                 "fault": self._fault(lines),
                 "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
            self.batches[bid] = b
            return self._public(b)

    def _advance(self, b: dict) -> None:
        """Move a batch on by the clock (called under the lock)."""
        if b["status"] in ("completed", "failed", "expired", "cancelled"):
            return
        if time.monotonic() - b["started"] < self.delay or b["fault"] == "stuck":
            b["status"] = "in_progress"
            return
        if b["fail"] == "failed":
            b["status"] = "failed"
            b["errors"] = {"object": "list", "data": [
                {"code": "invalid_request", "message": "simulated rejected batch", "line": i + 1, "param": None}
                for i in range(len(b["lines"]))]}
            return
        if b["fail"] in ("expired", "expired-no-file"):
            # OpenAI: requests not run within the window are written to the error file
            b["status"] = "expired"
            b["request_counts"] = {"total": len(b["lines"]), "completed": 0, "failed": len(b["lines"])}
            if b["fail"] == "expired":
                errors = [{"id": f"batch_req_{uuid.uuid4().hex[:8]}", "custom_id": line["custom_id"],
                           "response": None, "error": {"code": "batch_expired", "message": "This request could "
                                                       "not be executed before the completion window expired."}}
                          for line in b["lines"]]
                fid = f"file-{uuid.uuid4().hex[:12]}"
                self.files[fid] = ("\n".join(json.dumps(x) for x in errors) + "\n").encode()
                b["error_file_id"] = fid
            return
        fault = b["fault"]
        if fault == "cancelled":  # someone cancelled it in the provider's console before any request ran
            b["status"] = "cancelled"
            b["request_counts"] = {"total": len(b["lines"]), "completed": 0, "failed": 0}
            return
        out, failed = [], 0
        for i, line in enumerate(b["lines"]):
            body = line["body"]
            bad = {"line-500": {0: "500"}, "error-object": {0: "object"},
                   "mixed": {1: "500", 2: "object"}}.get(fault or "", {}).get(i)
            if bad:  # not answered: not billed
                failed += 1
                error = {"message": "simulated server error", "type": "server_error", "code": "server_error"}
                answer = ({"response": {"status_code": 500, "request_id": uuid.uuid4().hex, "body": {"error": error}},
                           "error": None} if bad == "500" else
                          {"response": None, "error": {"code": "server_error", "message": error["message"]}})
                out.append({"id": f"batch_req_{uuid.uuid4().hex[:8]}", "custom_id": line["custom_id"], **answer})
                continue
            completion = _completion(body, self.reply(_last_prompt(body)), line.get("url", b["endpoint"]))
            self.usage.append(_usage(completion))
            self.answered[b["id"]] += 1
            self.custom_ids.append(line["custom_id"])
            out.append({"id": f"batch_req_{uuid.uuid4().hex[:8]}", "custom_id": line["custom_id"],
                        "response": {"status_code": 200, "request_id": uuid.uuid4().hex, "body": completion},
                        "error": None})
        text = [json.dumps(x) for x in out]
        if fault == "missing":
            text = text[:-2]
        elif fault == "unknown-id":
            text[0] = text[0].replace(out[0]["custom_id"], "not-a-request-of-this-batch")
        elif fault == "cut":
            text[:2] = [t[:len(t) // 2] for t in text[:2]]
        elif fault == "mixed":  # 1 cut, 2 an HTTP 500, 3 an error object, 4 an unknown custom_id, 5 lost
            text = [text[0][:len(text[0]) // 2]] + text[1:3] + [
                text[3].replace(out[3]["custom_id"], "not-a-request-of-this-batch")] + text[5:]
        fid = f"file-{uuid.uuid4().hex[:12]}"
        self.files[fid] = ("\n".join(text) + "\n").encode()
        b["output_file_id"] = fid
        b["status"] = "completed"
        b["request_counts"] = {"total": len(out), "completed": len(out) - failed, "failed": failed}

    @staticmethod
    def _public(b: dict) -> dict:
        return {k: v for k, v in b.items() if k not in ("lines", "started", "fail", "fault")}

    # lifecycle ----------------------------------------------------------

    @property
    def url(self) -> str:
        return self.base_url

    def model(self, name: str = "openai/gpt-4o"):
        """An Inspect model of this server (Chat Completions; a dummy key; not memoized)."""
        from inspect_ai.model import get_model

        return get_model(name, base_url=self.url, api_key="sk-dummy-for-test", memoize=False, responses_api=False)

    def start(self) -> OpenAIServer:
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        self._timer.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def running(self) -> list[str]:
        """Batches still validating or in progress (what a clean stop must not leave behind)."""
        with self.lock:
            return [b["id"] for b in self.batches.values() if b["status"] in ("validating", "in_progress")]


FAULTS = ("missing", "unknown-id", "cancelled", "cut", "line-500", "error-object", "mixed", "stuck", "create-429",
          "create-500", "create-404")


_API_ROUTE = re.compile(r"(chat/completions|responses|batches(?:/[^/?]+(?:/cancel)?)?|files(?:/[^/?]+/content)?)/?$")


def _api_path(raw: str) -> str:
    """``/v1/<route>`` of a request. A base URL with a query (``/v1?key=K``) puts the route after
    the query, joined to the key's value (``/v1/?key=Kfiles``): the path is searched first."""
    path = raw.split("?")[0]
    found = _API_ROUTE.search(path) or _API_ROUTE.search(raw)
    return "/v1/" + found.group(1) if found else path.rstrip("/")


def _ends(suffix: str) -> Callable[[str, str], bool]:
    return lambda path, raw: path.endswith(suffix)


def _live_path(path: str, raw: str) -> str | None:
    """The route of a live call: a query in the base URL ends up before the route."""
    return next((x for x in (path, raw.rstrip("/")) if x.endswith(("chat/completions", "responses"))), None)


# (method, test of (path without query, raw path), counter or None, OpenAIServer handler): first match wins
ROUTES = (
    ("POST", _ends("/files"), "files.create", "_files_create"),
    ("POST", _ends("/batches"), "batches.create", "_batches_create"),
    ("POST", _ends("/cancel"), "batches.cancel", "_batches_cancel"),
    ("POST", lambda path, raw: _live_path(path, raw) is not None, None, "_live_call"),  # counts "live" itself
    ("GET", _ends("/content"), "files.content", "_files_content"),
    ("GET", lambda path, raw: "/batches/" in path, "batches.retrieve", "_batches_retrieve"),
)


def _multipart_file(body: bytes, content_type: str) -> bytes:
    """The file part of a multipart/form-data upload."""
    boundary = content_type.split("boundary=")[-1].strip('"').encode()
    for part in body.split(b"--" + boundary):
        if b'name="file"' in part:
            _, _, data = part.partition(b"\r\n\r\n")
            return data.rstrip(b"\r\n")
    raise ValueError("no file part in the upload")


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
