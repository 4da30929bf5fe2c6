"""Reading the answer out of a reply in the Appendix C format (``<output>...</output>``)."""

from __future__ import annotations

from dataclasses import dataclass

from conflict_eval.answers import clip, tag_bodies
from conflict_eval.answers.refusal import find_refusal


@dataclass(frozen=True)
class OutputParse:
    answer: str | None
    reason: str | None = None
    untagged_refusal: bool = False
    """The reply has no ``<output>`` tag but sincerely refuses ("I don't
    know.", :mod:`conflict_eval.answers.refusal`); ``answer`` is then its
    text, so the metric counts the refusal instead of a parse failure, and
    ``user_need_accuracy`` marks the score ``untagged_refusal`` in its metadata."""

    @property
    def ok(self) -> bool:
        return self.answer is not None


def parse_output(reply: str) -> OutputParse:
    """The text of the last complete ``<output>`` tag, or why there is none.

    Total and linear: any string gives an :class:`OutputParse`; tags are found
    by :func:`~conflict_eval.answers.tag_bodies` (20,000 unclosed ``<output>``
    tags cost linear time), and only the last
    :data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters are read (the
    last tag counts).

    >>> parse_output("<output>Sun</output>").answer
    'Sun'
    >>> parse_output("The Sun.").reason
    'no <output> tag'
    >>> parse_output("<output>Sun").reason
    'unclosed <output> tag'

    A reply with no tag at all that sincerely refuses is read as that
    refusal (``untagged_refusal``), so it is counted as a refusal, not a
    parse failure:

    >>> parse_output("I don't know.")
    OutputParse(answer="I don't know.", reason=None, untagged_refusal=True)
    """
    reply = clip(reply or "", "tail")
    found = tag_bodies(reply, "output")
    if not found:
        if "<output" in reply.lower():
            return OutputParse(None, "unclosed <output> tag")
        if find_refusal(reply) is not None:
            return OutputParse(" ".join(reply.split()), untagged_refusal=True)
        return OutputParse(None, "no <output> tag")
    answer = found[-1].body(reply).strip()
    if not answer:
        return OutputParse(None, "empty <output> tag")
    return OutputParse(answer)
