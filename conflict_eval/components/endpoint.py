"""The endpoint a model was called at, as it was, with no secret in it.

Inspect records a base URL in the log only when it was given as
``--model-base-url`` (or ``base_url=``); a URL taken from the environment
(``OPENAI_BASE_URL``, ``INSPECT_EVAL_MODEL_BASE_URL``, ...) leaves no trace.
:func:`resolve_endpoint` works out at run time which URL the provider will use
and where it came from (:func:`model_endpoint` for a model object). Our tasks
record it as task metadata ``conflict_eval_endpoint`` (``{model: {"url",
"source"}}``; for a local GGUF model also ``file``, ``bytes``, ``sha256``, ``pinned``), which the report reads: ``compose_task`` and the named tasks for
the model Inspect builds them for (:func:`active_endpoint`: ``inspect eval``,
``conflict-eval run``), the suite runner for each suite model. A log without it
says the endpoint was not recorded unless Inspect recorded a URL: never
"default endpoint" on a guess.

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
    ``REDACTED``; a value already ``REDACTED...`` is kept, so redacting twice changes
    nothing) or fragment; a string that is not a URL comes back as is."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _URL_RE.sub(lambda m: m.group(0).split("://", 1)[0] + "://" + REDACTED, url)
    if not parts.scheme or not parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    # a base URL's query before an API route (``?key=K/batches/ID/cancel``, as the OpenAI client
    # joins them): the secret is the value up to the route, which is kept
    query = urlencode([(k, REDACTED + ("/" + v.split("/", 1)[1] if "/" in v else "")
                        if _SECRET_PARAM.search(k) and not v.startswith(REDACTED) else v)
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


def file_text(recorded: dict) -> str:
    """A local model file as the page names it: file, size, sha256 and whether it is the pinned one."""
    pinned = "the pinned conflict_eval/smollm2 file" if recorded.get("pinned") else "not the pinned SmolLM2 file"
    return f"local file {recorded['file']} ({recorded.get('bytes', '?'):,} bytes, sha256 {recorded.get('sha256')}; {pinned})"


def endpoint_text(model: str, base_url: str | None, recorded: dict | None) -> str:
    """What the page says about a model's endpoint (see module docstring)."""
    if isinstance(recorded, dict) and recorded.get("file"):
        return file_text(recorded)
    if isinstance(recorded, dict) and recorded.get("source"):
        if recorded.get("url"):
            return f"{redact_url(str(recorded['url']))} ({recorded['source']})"
        return f"provider {model.split('/')[0]} (default endpoint: no base URL flag, model arg or environment variable)"
    if base_url:
        return f"{redact_url(base_url)} (--model-base-url)"
    return UNRECORDED


def model_endpoint(model) -> dict[str, str | None]:
    """:func:`resolve_endpoint` of an Inspect ``Model``: a base URL given to it (flag or
    ``base_url`` model arg), else the environment, else one its provider resolved itself.
    A local model (``conflict_eval/...``) is its file: name, size, sha256 and whether it
    is the pinned one (``model_file.gguf_facts``)."""
    file = getattr(model.api, "model_file", None)
    if isinstance(file, dict):
        return {"url": None, "source": "local model file", **file}
    found = resolve_endpoint(str(model), model.explicit_base_url)
    if found["url"] is None and model.api.base_url:
        return {"url": redact_url(model.api.base_url), "source": f"provider {str(model).split('/')[0]} base URL"}
    return found


def active_endpoint() -> dict[str, dict[str, str | None]]:
    """``{model: {"url", "source"}}`` for the model Inspect is building a task for (its
    active model while it resolves tasks); ``{}`` outside an eval. Never builds a model:
    ``INSPECT_EVAL_MODEL`` is set aside while asking, so only an active model answers.
    Inspect leaves the last active model set after an eval; the entry is keyed by model
    name, and the report reads only the entry of the log's own model."""
    from inspect_ai.model import get_model

    saved = os.environ.pop("INSPECT_EVAL_MODEL", None)
    try:
        model = get_model()
    except Exception:  # noqa: BLE001 -- no eval in progress
        return {}
    finally:
        if saved is not None:
            os.environ["INSPECT_EVAL_MODEL"] = saved
    return {str(model): model_endpoint(model)}
