"""The readers of the user-needs answers, declared for the checks (hook ``conflict_eval_reply_readers``):
fuzz entries (``answers.fuzz``) and the chains the reply corpus is read through
(``benchmarks/reply_reading.py``). The parsers themselves are in :mod:`.parse` and :mod:`.normalize`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import Chain, Reading, ReplyReaders, norm, says_refusal

OWNER = "scorers/user_needs"
NORMALIZE = "conflict_eval.scorers.user_needs.normalize"


def read_user_needs(row: dict) -> Reading:
    """``user_need_accuracy``: the ``<output>`` answer; a strict or near refusal is a refusal."""
    from .normalize import is_i_dont_know, is_near_refusal
    from .parse import parse_output

    p = parse_output(row["reply"])
    if says_refusal(p):
        return Reading("refusal", reason=p.reason)
    if not p.ok:
        return Reading("failure", reason=p.reason)
    if is_i_dont_know(p.answer) or is_near_refusal(p.answer):
        return Reading("refusal")
    return Reading("value", norm(p.answer))


def read_match_option(row: dict) -> Reading:
    """The option a free-form answer names (``None``: unmatched, a value of its own)."""
    from .normalize import match_option
    from .parse import parse_output

    answer = row["reply"]
    if row["kind"] == "user_needs.answer":
        answer = parse_output(row["reply"]).answer
        if answer is None:
            return Reading("failure", reason="no <output> answer")
    return Reading("value", norm(match_option(answer, list(row["args"]["options"]))))


def _option_meaning(row: dict) -> dict:
    return {"answer": row["meaning"]["option"]}


READERS = ReplyReaders(
    parsers=[
        ParserEntry("user_needs.parse_output", "conflict_eval.scorers.user_needs.parse:parse_output",
                    "user_need_accuracy: wrong (correct 0) and counted in parse_failure", owner=OWNER),
        ParserEntry("user_needs.canonical", f"{NORMALIZE}:canonical",
                    "never fails: any answer gets a comparable form", owner=OWNER),
        ParserEntry("user_needs.is_near_refusal", f"{NORMALIZE}:is_near_refusal",
                    "never fails: a reply is a near-refusal or not", owner=OWNER),
        ParserEntry("user_needs.match_option", f"{NORMALIZE}:match_option",
                    "user_need_accuracy: no option named (or several): unmatched, counted apart from wrong",
                    call=lambda fn, t: fn(t, ["Sahara desert.", "the ocean.", "a desert oasis."]), owner=OWNER),
    ],
    chains=[
        Chain("user_needs.parse_output+reads_as_refusal", ("user_needs.answer",), read_user_needs, knows_refusal=True),
        Chain("user_needs.match_option", ("option_match", "user_needs.answer"), read_match_option,
              applies=lambda row: "option" in row["meaning"], meaning=_option_meaning),
    ],
)
