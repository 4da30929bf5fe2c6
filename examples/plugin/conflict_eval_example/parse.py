"""The reply reader of ``verdict_first``: cut out the ``VERDICT:`` line's text,
then read the letter with the toolkit's one choice reader
(:func:`conflict_eval.answers.parse_choice`), as every method that asks for an
option letter must. Pure and linear in the reply's length (one pass over its
lines, no regular expression that backtracks).

>>> read_verdict("VERDICT: B\\nREASON: the passage says so.", "AB").letter
'B'
>>> read_verdict("I think B.", "AB").reason
'no VERDICT: line'
"""

from __future__ import annotations

from conflict_eval.answers import ChoiceParse, parse_choice
from conflict_eval.answers.refusal import find_refusal

LABEL = "verdict:"


def verdict_segment(reply: str) -> str | None:
    """The text after the last ``VERDICT:`` label (any case, at a line start), or None."""
    if LABEL not in reply.lower():  # most replies: one pass in C, no loop over lines
        return None
    found = None
    for line in reply.splitlines():
        stripped = line.strip().lstrip("*#> ").strip()
        if stripped[: len(LABEL)].lower() == LABEL:
            found = stripped[len(LABEL):].strip(" *")
    return found


def read_verdict(reply: str, letters: str) -> ChoiceParse:
    """The reply's choice as a :class:`conflict_eval.answers.ChoiceParse`; a reply with
    no ``VERDICT:`` line, or an unreadable one, is a failure with its reason (a
    sincere refusal without one is ``refused``: :func:`conflict_eval.answers.refusal.find_refusal`)."""
    segment = verdict_segment(reply)
    if segment is None:  # a sincere refusal (the toolkit's one recogniser) is a refusal, not a parse failure
        refusal = find_refusal(reply)
        return ChoiceParse.refusal(refusal.phrase) if refusal else ChoiceParse.failure("no VERDICT: line")
    if not segment:
        return ChoiceParse(letter=None, ok=False, reason="empty VERDICT: line")
    return parse_choice(segment, letters)
