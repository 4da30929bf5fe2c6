"""The reader of the misinformation-target replies (polluted KB build), declared for the checks
(hook ``conflict_eval_reply_readers``); the parser itself is :func:`.parse.parse_target`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import Chain, Reading, ReplyReaders, parsed_reading


def read_target(row: dict) -> Reading:
    from .parse import parse_target

    return parsed_reading(parse_target(row["reply"], row["args"]["answers"]))


READERS = ReplyReaders(
    parsers=[
        ParserEntry("polluted_kb.parse_target", "conflict_eval.plugins.polluted_kb.parse:parse_target",
                    "KB build: the question gets no misinformation target and is counted",
                    call=lambda fn, t: fn(t, ["Animorphs"]), owner="plugins/polluted_kb"),
    ],
    chains=[Chain("polluted_kb.parse_target", ("polluted_kb.target",), read_target)],
)
