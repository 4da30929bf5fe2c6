"""The readers of MADAM-RAG's replies, declared for the checks (hook ``conflict_eval_reply_readers``):
fuzz entries (``answers.fuzz``) and the chains the reply corpus is read through
(``benchmarks/reply_reading.py``). The parsers themselves are in :mod:`.parse`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import Chain, Reading, ReplyReaders, norm

OWNER = "plugins/madam_rag"
PARSE = "conflict_eval.plugins.madam_rag.parse"


def read_agent(row: dict) -> Reading:
    from .parse import parse_agent_answer

    a = parse_agent_answer(row["reply"])
    if not a.answer:
        return Reading("failure", reason="empty answer")
    return Reading("value", norm(a.answer))


def read_aggregation(row: dict) -> Reading:
    from .parse import parse_aggregation

    a = parse_aggregation(row["reply"])
    return Reading("value", sorted(norm(a.answers))) if a.ok else Reading("failure", reason=a.error)


READERS = ReplyReaders(
    parsers=[
        ParserEntry("madam_rag.parse_agent_answer", f"{PARSE}:parse_agent_answer",
                    "no Answer: marker: the whole reply up to Explanation is the answer (early stop only), "
                    "counted in unmarked_agent_replies", owner=OWNER),
        ParserEntry("madam_rag.parse_aggregation", f"{PARSE}:parse_aggregation",
                    "no readable All Correct Answers list: answer_parse_failure; strict_em scores 0 and counts it "
                    "in parse_failure", owner=OWNER),
    ],
    chains=[
        Chain("madam_rag.parse_agent_answer", ("x.madam_agent",), read_agent),
        Chain("madam_rag.parse_aggregation", ("x.madam_aggregation",), read_aggregation),
    ],
)
