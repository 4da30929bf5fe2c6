"""The readers of AtomR's replies, declared for the checks (hook ``conflict_eval_reply_readers``):
fuzz entries (``answers.fuzz``) and the chains the reply corpus is read through
(``benchmarks/reply_reading.py``). The parsers themselves are in :mod:`.parse` and :mod:`.solver`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import Chain, Reading, ReplyReaders, norm

OWNER = "plugins/atomr"
PARSE = "conflict_eval.plugins.atomr.parse"


def read_atomr(row: dict) -> Reading:
    """What AtomR records for a planner tree (``x.atomr_plan``) or a node answer (``x.atomr_answer``)."""
    from .chain import recorded

    status, value, reason = recorded(row["reply"], row["kind"].removeprefix("x.atomr_"))
    return Reading(status, None if value is None else norm(value) if row["kind"] == "x.atomr_plan" else
                   sorted(norm(value)), reason)


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
    chains=[
        Chain("atomr.parse_tree (planner)", ("x.atomr_plan",), read_atomr),
        Chain("atomr.parse_answer (node answers)", ("x.atomr_answer",), read_atomr, knows_refusal=True),
    ],
)
