"""Errors a model provider trips over, as one line that says what to do.

:func:`explain` turns an exception from a command into ``(message, exit code)``:
2 for a problem in what was given (a missing API key, a foreign log in the
log folder, a bad option), 1 for a run that failed (an unreachable endpoint).
Inspect's ``PrerequisiteError`` carries rich markup (``[bold][blue]...``); it is
recognised by name (its class is private to Inspect) and printed as plain
text. Every message is redacted (no URL user info or token).
"""

from __future__ import annotations

import re

from conflict_eval.components.endpoint import redact

_MARKUP = re.compile(r"\[/?(?:bold|italic|dim|underline|blue|red|green|yellow|cyan|magenta|white|bright_\w+|b|i|u)"
                     r"(?: [a-z_ ]+)?\]")
_KEY_VAR = re.compile(r"\b[A-Z][A-Z0-9_]*_(?:API_KEY|TOKEN)\b")


def plain(text: str) -> str:
    """``text`` without rich markup, with URLs redacted."""
    return redact(_MARKUP.sub("", str(text)))


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in plain(text).splitlines() if ln.strip()]
    lines = [ln for ln in lines if ln.upper().rstrip(":") != "ERROR"]
    return re.sub(r"^ERROR:\s*", "", " ".join(lines[:2]))


def explain(exc: BaseException) -> tuple[str, int] | None:
    """``(one-line message, exit code)`` for errors with a known fix, else None."""
    from conflict_eval.runs.preflight import RunFailure

    if isinstance(exc, RunFailure):
        return plain(str(exc)), 1
    if type(exc).__name__ != "PrerequisiteError":
        return None
    text = plain(getattr(exc, "message", None) or str(exc))
    keys = list(dict.fromkeys(_KEY_VAR.findall(text)))
    if keys or "api key" in text.lower():
        which = keys[0] if keys else "the provider's API key variable"
        return (f"no API key for the model: set {which} in the environment (or in a .env file) and re-run"
                + (f" (also accepted: {', '.join(keys[1:])})" if len(keys) > 1 else ""), 2)
    m = re.search(r"Existing log file '([^']+)' in log_dir is not associated", text)
    if m:
        return (f"the log folder holds a log of another run ({m.group(1)}); give a fresh --log-dir, move that log "
                "out, or pass --log-dir-allow-dirty to leave it there", 2)
    return _first_line(text), 2
