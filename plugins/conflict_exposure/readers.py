"""The readers of Conflict Exposure's replies, declared for the checks (hook ``conflict_eval_reply_readers``):
fuzz entries (``answers.fuzz``) and the chains the reply corpus is read through
(``benchmarks/reply_reading.py``). The parsers themselves are in :mod:`.parse`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import NO_CONFLICTS, Chain, Reading, ReplyReaders, norm, triplet_set

OWNER = "plugins/conflict_exposure"
PARSE = "conflict_eval.plugins.conflict_exposure.parse"


def _triplets(text: str):
    from .parse import parse_triplets

    return parse_triplets(text, ["is", "born on"])


def read_triplets(row: dict) -> Reading:
    from .parse import parse_triplets

    p = parse_triplets(row["reply"])
    if not p.triplets and p.reason:
        return Reading("failure", reason=p.reason)
    return Reading("value", triplet_set(p.triplets))


def read_conflicts(row: dict) -> Reading:
    from .parse import parse_triplets, says_no_conflicts

    p = parse_triplets(row["reply"])
    if says_no_conflicts(row["reply"], p):
        return Reading("value", NO_CONFLICTS)
    if not p.triplets and p.reason:
        return Reading("failure", reason=p.reason)
    return Reading("value", triplet_set(p.triplets))


def read_question_list(row: dict) -> Reading:
    from .parse import parse_question_list

    q = parse_question_list(row["reply"])
    return Reading("value", norm(q.questions)) if q.questions else Reading("failure", reason=q.reason)


READERS = ReplyReaders(
    parsers=[
        ParserEntry("conflict_exposure.says_no_conflicts", f"{PARSE}:says_no_conflicts",
                    "never fails: a detection reply says there are no conflicts or not",
                    call=lambda fn, t: fn(t, _triplets(t)), owner=OWNER),
        ParserEntry("conflict_exposure.parse_triplets", f"{PARSE}:parse_triplets",
                    "recorded per document (extraction_failures, rejected_items); no triplets means no annotation",
                    owner=OWNER),
        ParserEntry("conflict_exposure.split_elements", f"{PARSE}:split_elements",
                    "never fails (helper of the two parsers above)", owner=OWNER),
        ParserEntry("conflict_exposure.parse_question_list", f"{PARSE}:parse_question_list",
                    "split_parse_failure recorded; expansion runs without sub-questions", owner=OWNER),
    ],
    chains=[
        Chain("conflict_exposure.parse_triplets", ("conflict_exposure.extract",), read_triplets),
        Chain("conflict_exposure.parse_triplets+says_no_conflicts", ("conflict_exposure.detect",), read_conflicts),
        Chain("conflict_exposure.parse_question_list", ("conflict_exposure.split",), read_question_list),
    ],
)
