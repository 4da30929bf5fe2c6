"""The readers of Micro-Act's replies, declared for the checks (hook ``conflict_eval_reply_readers``):
fuzz entries (``answers.fuzz``) and the chains the reply corpus is read through
(``benchmarks/reply_reading.py``). The parsers themselves are in :mod:`.parse`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import Chain, Reading, ReplyReaders, norm

OWNER = "plugins/microact"
PARSE = "conflict_eval.scorers.microact.parse"
FAILURE = ("Micro-Act: counted (invalid_actions / helper_parse_failures) and shown to the model as an observation; "
           "the loop goes on")


def read_turn(row: dict) -> Reading:
    from conflict_eval.scorers.microact.parse import parse_turn

    t = parse_turn(row["reply"])
    return Reading("value", norm(t.action)) if t.ok else Reading("failure", reason=t.error)


def read_assert(row: dict) -> Reading:
    from conflict_eval.scorers.microact.parse import parse_assert

    a = parse_assert(row["reply"])
    return Reading("failure", reason=a.error) if a.error else Reading("value", (a.conflict, a.confidence))


def read_steps(row: dict) -> Reading:
    from conflict_eval.scorers.microact.parse import parse_steps

    steps = parse_steps(row["reply"])
    return Reading("value", len(steps)) if steps else Reading("failure", reason="no steps")


READERS = ReplyReaders(
    parsers=[
        ParserEntry("microact.parse_turn", f"{PARSE}:parse_turn", FAILURE, owner=OWNER),
        ParserEntry("microact.parse_call", f"{PARSE}:parse_call", FAILURE,
                    call=lambda fn, t: fn(t, ("knowledge_gen", "reason", "decompose", "assert", "terminate")),
                    documented=("ValueError",), owner=OWNER),
        ParserEntry("microact.thought", f"{PARSE}:_thought", "logged only (the thought never decides anything)",
                    owner=OWNER),
        ParserEntry("microact.parse_assert", f"{PARSE}:parse_assert", FAILURE, owner=OWNER),
        ParserEntry("microact.parse_steps", f"{PARSE}:parse_steps", FAILURE, owner=OWNER),
    ],
    chains=[
        Chain("microact.parse_turn", ("x.microact_turn",), read_turn),
        Chain("microact.parse_assert", ("x.microact_assert",), read_assert),
        Chain("microact.parse_steps", ("x.microact_steps",), read_steps),
    ],
)
