"""The endpoint a model was called at, as it was, with no secret in it.

Inspect records a base URL in the log only when it was given as
``--model-base-url`` (or ``base_url=``); a URL taken from the environment
(``OPENAI_BASE_URL``, ``INSPECT_EVAL_MODEL_BASE_URL``, ...) leaves no trace.
:func:`resolve_endpoint` works out at run time which URL the provider will use
and where it came from; the suite runner records it as task metadata
``conflict_eval_endpoint`` (``{"url", "source"}``), which the report reads.
A log without it (a plain ``inspect eval`` run) says the endpoint was not
recorded unless Inspect recorded a URL: never "default endpoint" on a guess.

:func:`redact_url` strips user info, secret query parameters and fragments;
:func:`redact` applies it to every URL inside a string or nested value, and
everything the report writes or prints passes through it.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,20}://[^\s\"'<>`]+")
_SECRET_PARAM = re.compile(r"key|token|secret|password|passwd|pwd|auth|signature|sig|credential|session",
                           re.IGNORECASE)
REDACTED = "REDACTED"
UNRECORDED = "not recorded (Inspect logs a base URL only when one is passed as --model-base-url)"


def redact_url(url: str) -> str:
    """``url`` without user info, secret query parameters (their values become
    ``REDACTED``) or fragment; a string that is not a URL comes back as is."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _URL_RE.sub(lambda m: m.group(0).split("://", 1)[0] + "://" + REDACTED, url)
    if not parts.scheme or not parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    query = urlencode([(k, REDACTED if _SECRET_PARAM.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="/:,")
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


def redact(value: Any) -> Any:
    """Every URL inside ``value`` (a string, or dicts and lists of them) redacted."""
    if isinstance(value, str):
        return _URL_RE.sub(lambda m: redact_url(m.group(0)), value) if "://" in value else value
    if isinstance(value, dict):
        return {redact(k): redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact(v) for v in value)
    return value


def _env_vars(model: str) -> list[str]:
    """The environment variables a provider reads its base URL from, in order
    (Inspect's convention ``<PROVIDER>_BASE_URL``, then ``INSPECT_EVAL_MODEL_BASE_URL``).
    ``openai-api/<service>/...`` reads ``<SERVICE>_BASE_URL``."""
    parts = model.split("/")
    provider = parts[1] if parts[0] == "openai-api" and len(parts) > 2 else parts[0]
    name = re.sub(r"[^A-Za-z0-9]", "_", provider).upper()
    return [f"{name}_BASE_URL", "INSPECT_EVAL_MODEL_BASE_URL"]


def resolve_endpoint(model: str, base_url: str | None = None,
                     environ: dict[str, str] | None = None) -> dict[str, str | None]:
    """``{"url", "source"}`` of the endpoint ``model`` will be called at:
    the flag or model arg, else the environment variable the provider reads,
    else ``url=None, source="provider default"``. The URL is redacted."""
    env = os.environ if environ is None else environ
    if base_url:
        return {"url": redact_url(base_url), "source": "--model-base-url / base_url model arg"}
    for var in _env_vars(model):
        if env.get(var):
            return {"url": redact_url(env[var]), "source": f"environment {var}"}
    return {"url": None, "source": "provider default"}


def endpoint_text(model: str, base_url: str | None, recorded: dict | None) -> str:
    """What the page says about a model's endpoint (see module docstring)."""
    if isinstance(recorded, dict) and recorded.get("source"):
        if recorded.get("url"):
            return f"{redact_url(str(recorded['url']))} ({recorded['source']})"
        return f"provider {model.split('/')[0]} (default endpoint: no base URL flag, model arg or environment variable)"
    if base_url:
        return f"{redact_url(base_url)} (--model-base-url)"
    return UNRECORDED
