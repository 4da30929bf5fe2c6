"""Checks before a suite spends anything: is each model's endpoint reachable?

Inspect retries a refused connection with back-off for minutes (150 s and
more) without a word. :func:`check_endpoints` opens one TCP connection to each
base URL the run will use (the flag, model arg or environment variable, see
:mod:`conflict_eval.components.endpoint`), bounded by ``timeout`` seconds, and
raises :class:`EndpointUnreachable` naming the model, the URL (redacted) and
where it came from. A provider's default endpoint is not checked.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

from conflict_eval.components.endpoint import redact_url, resolve_endpoint

CONNECT_TIMEOUT = float(os.environ.get("CONFLICT_EVAL_CONNECT_TIMEOUT", "5"))


class RunFailure(RuntimeError):
    """The run could not go ahead for a reason outside the user's options (exit 1)."""


class EndpointUnreachable(RunFailure):
    pass


def _raw_url(model: str, base_url: str | None) -> tuple[str | None, str]:
    from conflict_eval.components.endpoint import _env_vars

    if base_url:
        return base_url, "--model-base-url / base_url model arg"
    for var in _env_vars(model):
        if os.environ.get(var):
            return os.environ[var], f"environment {var}"
    return None, "provider default"


def check_endpoint(model: str, base_url: str | None = None, timeout: float = CONNECT_TIMEOUT) -> dict:
    """The resolved endpoint of ``model``; raises :class:`EndpointUnreachable`
    when an http(s) base URL does not accept a connection within ``timeout`` s."""
    url, source = _raw_url(model, base_url)
    if url:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            try:
                with socket.create_connection((parts.hostname, port), timeout=timeout):
                    pass
            except OSError as exc:
                reason = exc.strerror or type(exc).__name__
                raise EndpointUnreachable(
                    f"cannot reach {redact_url(url)} ({source}) for model {model}: {reason} within {timeout:g} s; "
                    "start the server or fix the URL, then re-run (checked before the run, so Inspect does not "
                    "retry it for minutes)") from None
    return resolve_endpoint(model, base_url)


def check_endpoints(specs, timeout: float = CONNECT_TIMEOUT) -> None:
    """:func:`check_endpoint` for every ``ModelSpec`` (its ``base_url`` arg, if any)."""
    seen = set()
    for m in specs:
        key = (m.model, (m.args or {}).get("base_url"))
        if key not in seen:
            seen.add(key)
            check_endpoint(m.model, key[1], timeout)
