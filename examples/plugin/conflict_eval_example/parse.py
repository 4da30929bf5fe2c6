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

LABEL = "verdict:"


def verdict_segment(reply: str) -> str | None:
    """The text after the last ``VERDICT:`` label (any case, at a line start), or None."""
    found = None
    for line in reply.splitlines():
        stripped = line.strip().lstrip("*#> ").strip()
        if stripped[: len(LABEL)].lower() == LABEL:
            found = stripped[len(LABEL):].strip(" *")
    return found


def read_verdict(reply: str, letters: str) -> ChoiceParse:
    """The reply's choice as a :class:`conflict_eval.answers.ChoiceParse`; a reply with
    no ``VERDICT:`` line, or an unreadable one, is a failure with its reason (a
    sincere refusal without one is ``refused``)."""
    segment = verdict_segment(reply)
    if segment is None:
        whole = parse_choice(reply, letters)  # a sincere refusal is a refusal, not a parse failure
        return whole if whole.refused else ChoiceParse(letter=None, ok=False, reason="no VERDICT: line")
    if not segment:
        return ChoiceParse(letter=None, ok=False, reason="empty VERDICT: line")
    return parse_choice(segment, letters)
