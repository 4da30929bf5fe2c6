"""Model and grader failures are errors, never text.

An API can answer a call without an answer: an empty ``choices`` list, an
empty completion whose stop reason is an error (``unknown``, or a
``content_filter`` that left no text), or an ``error`` field and no text.
Read as text, such an output becomes an empty reply that a method scores
("the model generated nothing"), a debate reads as "unchanged", or a grader
drops as a label failure. Every solver and scorer therefore passes each
model output through :func:`checked`, which raises
:class:`ModelOutputError`, a plain ``Exception``, the way Inspect's own
``ModelRefusalError`` is: the sample runner records it as a sample error, so
``--retry-on-error`` retries the sample and, without retries, the sample
ends in error, unscored. A malformed body (truncated JSON, no ``choices``
key) already raises in Inspect's provider and reaches the runner the same way;
nothing here catches it.

An empty completion that *stopped normally* (``stop``, ``max_tokens``) is
what the model wrote, and stays text: a method counts it as a parse failure.
"""

from __future__ import annotations

from typing import Any

ERROR_STOP_REASONS = frozenset({"unknown", "content_filter"})
"""Stop reasons that, with no text, mean the call failed rather than the model wrote nothing."""


class ModelOutputError(Exception):
    """A model call returned no usable output (see the module docstring).

    Retryable: Inspect records it as a sample error, so ``--retry-on-error``
    runs the sample again."""

    def __init__(self, what: str, reason: str, model: str | None = None):
        self.what, self.reason, self.model = what, reason, model
        on = f" ({model})" if model else ""
        super().__init__(f"Model output error: {what}{on}: {reason}")


def output_failure(output: Any) -> str | None:
    """Why ``output`` (an Inspect ``ModelOutput``) is a failed call, or ``None`` when it carries a reply.

    >>> from inspect_ai.model import ModelOutput
    >>> output_failure(ModelOutput(model="m", choices=[]))
    "the API returned an empty 'choices' list"
    >>> output_failure(ModelOutput.from_content("m", "", stop_reason="unknown"))
    "an empty completion with stop reason 'unknown'"
    >>> output_failure(ModelOutput.from_content("m", "", stop_reason="stop")) is None
    True
    """
    if output is None:
        return "no output at all"
    choices = getattr(output, "choices", None)
    if not choices:
        return "the API returned an empty 'choices' list"
    completion = getattr(output, "completion", None) or ""
    if completion.strip():
        return None
    if getattr(output, "error", None):
        return f"an empty completion with the error {str(output.error)[:200]!r}"
    stop = getattr(choices[0], "stop_reason", None)
    if stop in ERROR_STOP_REASONS:
        return f"an empty completion with stop reason {stop!r}"
    return None


def checked(output: Any, what: str = "the model", model: Any = None):
    """``output`` itself, or :class:`ModelOutputError` when it is a failed call
    (:func:`output_failure`). ``what`` names the call in the message (e.g.
    ``"MADAM-RAG agent 2"``, ``"the ConflictScore grader"``)."""
    reason = output_failure(output)
    if reason is not None:
        name = str(model) if model is not None else (getattr(output, "model", None) or None)
        raise ModelOutputError(what, reason, name)
    return output


async def generate_checked(model: Any, input: Any, what: str = "the model", **kwargs: Any):
    """``checked(await model.generate(input, **kwargs), what)``."""
    return checked(await model.generate(input, **kwargs), what, model)


async def generate_state(generate: Any, state: Any, what: str = "the model", **kwargs: Any):
    """``await generate(state, **kwargs)`` (a solver's ``Generate``) with its
    output checked. Inspect's ``generate`` itself fails on an empty ``choices``
    list when it appends the (missing) message; that failure is re-raised as
    :class:`ModelOutputError` so every empty reply fails the same way."""
    try:
        state = await generate(state, **kwargs)
    except IndexError:
        output = getattr(state, "output", None)
        if output is not None and not getattr(output, "choices", None):
            raise ModelOutputError(what, "the API returned an empty 'choices' list",
                                   getattr(output, "model", None) or None) from None
        raise
    checked(state.output, what)
    return state
