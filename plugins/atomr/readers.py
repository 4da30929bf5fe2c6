"""The readers of AtomR's replies, declared for the checks (hook ``conflict_eval_reply_readers``):
fuzz entries (``answers.fuzz``). The parsers themselves are in :mod:`.parse` and :mod:`.solver`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import ReplyReaders

OWNER = "plugins/atomr"
PARSE = "conflict_eval.plugins.atomr.parse"

READERS = ReplyReaders(
    parsers=[
        ParserEntry("atomr.parse_operator", f"{PARSE}:parse_operator",
                    "planner failure: the tree is invalid; Direct-RAG fallback, counted", documented=("TreeError",),
                    owner=OWNER),
        ParserEntry("atomr.extract_json_object", f"{PARSE}:extract_json_object",
                    "planner failure: Direct-RAG fallback, counted", documented=("TreeError",), owner=OWNER),
        ParserEntry("atomr.parse_tree", f"{PARSE}:parse_tree", "planner failure: Direct-RAG fallback, counted",
                    documented=("TreeError",), owner=OWNER),
        ParserEntry("atomr.parse_answer", f"{PARSE}:parse_answer", "node answer failure: recorded on the node and counted",
                    owner=OWNER),
        ParserEntry("atomr.parse_sources", f"{PARSE}:parse_sources",
                    "no source named: fallback to every allowed source, counted",
                    call=lambda fn, t: fn(t, ["text", "kg", "web"]), owner=OWNER),
        ParserEntry("atomr.parse_closed_book", "conflict_eval.plugins.atomr.solver:parse_closed_book",
                    "no answer: empty prediction, scored 0 by token_f1/EM",
                    call=lambda fn, t: (fn(t, "standard"), fn(t, "cot")), owner=OWNER),
    ],
    chains=[],
)
