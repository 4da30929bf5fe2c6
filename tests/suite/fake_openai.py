"""A loopback OpenAI-compatible server for tests: ``POST /v1/chat/completions``
answers ``A</a>`` with usage (prompt words in, one token out) and records every
request path and Authorization header it saw."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):  # noqa: N802 -- http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self.server.seen.append({"path": self.path, "auth": self.headers.get("Authorization")})
        words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
        reply = {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
                 "model": body.get("model", "m"),
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": "A</a>"}}],
                 "usage": {"prompt_tokens": words, "completion_tokens": 1, "total_tokens": words + 1}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeOpenAI:
    """``with FakeOpenAI() as srv: srv.url`` -> ``http://127.0.0.1:PORT/v1``."""

    def __enter__(self) -> FakeOpenAI:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.seen = []
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        return self

    @property
    def seen(self) -> list:
        return self.server.seen

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
