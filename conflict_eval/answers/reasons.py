"""What was not scored, in Inspect's words: ``Score.reason`` (inspect_ai 0.3.261+).

Every built-in scorer sets ``Score.reason`` from Inspect's ``ScoreReason``
vocabulary when a sample's answer was abnormal, and leaves it ``None`` when
the reply was read:

* ``invalid_response_format`` -- a reply no reader could read (the papers'
  parse failure);
* ``refusal`` -- the model refused (:mod:`conflict_eval.answers.refusal`);
* ``no_response`` -- the model's answer was empty (also a parse failure in
  the papers' counts: nothing was read);
* ``grader_failed`` -- a grader's reply could not be read (model-graded scorers).

The papers' rates are computed from it (:func:`counts`), and the leaderboard
takes its parse-failure, refusal and no-response columns from the reason, so
a third-party scorer that sets ``Score.reason`` gets those columns too.
"""

from __future__ import annotations

INVALID = "invalid_response_format"
REFUSAL = "refusal"
NO_RESPONSE = "no_response"
GRADER_FAILED = "grader_failed"

PARSE_FAILURE_REASONS = frozenset({INVALID, NO_RESPONSE})
"""The reasons the papers count as a parse failure (no answer was read)."""


def unread_reason(reply: str | None) -> str:
    """The reason for a reply no reader could read: ``no_response`` when it is
    empty (whitespace only), else ``invalid_response_format``.

    >>> unread_reason("  "), unread_reason("I think it is blue")
    ('no_response', 'invalid_response_format')
    """
    return NO_RESPONSE if not (reply or "").strip() else INVALID


def answer_reason(reply: str | None, *, refused: bool = False, read: bool = True) -> str | None:
    """``Score.reason`` for a model's answer: ``refusal``, the unread reason
    when nothing was read, else None (the reply was read)."""
    if refused:
        return REFUSAL
    return None if read else unread_reason(reply)


def counts(reason: str | None) -> dict[str, int]:
    """The papers' 0/1 counts of one sample, computed from its reason.

    >>> counts("no_response")
    {'parse_failure': 1, 'refusal': 0}
    """
    return {"parse_failure": int(reason in PARSE_FAILURE_REASONS), "refusal": int(reason == REFUSAL)}
