"""The reader of the over-rationalization judge's replies, declared for the checks
(hook ``conflict_eval_reply_readers``); the parser itself is :func:`.parse.parse_verdict`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import Chain, Reading, ReplyReaders


def read_verdict(row: dict) -> Reading:
    from .parse import parse_verdict

    v = parse_verdict(row["reply"])
    if v.error:
        return Reading("failure", reason=v.error)
    return Reading("value", "yes" if v.rationalizes else "no")


READERS = ReplyReaders(
    parsers=[
        ParserEntry("microact.parse_verdict", "conflict_eval.scorers.microact.parse:parse_verdict",
                    "overrationalization: the sample is not judged (NaN), counted in parse_failure and left out of "
                    "the ratio; never read as YES or NO", owner="scorers/microact"),
    ],
    chains=[Chain("microact.parse_verdict", ("x.overrationalization",), read_verdict)],
)
