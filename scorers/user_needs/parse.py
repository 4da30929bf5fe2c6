"""Reading the answer out of a reply in the Appendix C format (``<output>...</output>``)."""

from __future__ import annotations

from dataclasses import dataclass

from conflict_eval.answers import clip, tag_bodies


@dataclass(frozen=True)
class OutputParse:
    answer: str | None
    reason: str | None = None

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
    """
    reply = clip(reply or "", "tail")
    found = tag_bodies(reply, "output")
    if not found:
        if "<output" in reply.lower():
            return OutputParse(None, "unclosed <output> tag")
        return OutputParse(None, "no <output> tag")
    answer = found[-1].body(reply).strip()
    if not answer:
        return OutputParse(None, "empty <output> tag")
    return OutputParse(answer)
