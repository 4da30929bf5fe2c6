"""The readers of the URAQ generation replies (user needs), declared for the fuzz checks
(hook ``conflict_eval_reply_readers``); the parsers themselves are in :mod:`.generator`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import ReplyReaders

OWNER = "plugins/user_needs"
GENERATOR = "conflict_eval.plugins.user_needs.generator"

READERS = ReplyReaders(parsers=[
    ParserEntry("user_needs.parse_statements", f"{GENERATOR}:parse_statements",
                "URAQ generation: counted in the report ('knowledge: no numbered statements')", owner=OWNER),
    ParserEntry("user_needs.parse_manipulated", f"{GENERATOR}:parse_manipulated",
                "URAQ generation: the statement is dropped and counted in the report", owner=OWNER),
    ParserEntry("user_needs.parse_questions", f"{GENERATOR}:parse_questions",
                "URAQ generation: each bad item counted in the report by reason", owner=OWNER),
])
