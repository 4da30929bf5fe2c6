"""The readers of ConflictScore's replies, declared for the checks (hook ``conflict_eval_reply_readers``):
fuzz entries (``answers.fuzz``) and the chains the reply corpus is read through
(``benchmarks/reply_reading.py``). The parsers themselves are in :mod:`.parse` and :mod:`.pipeline`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import Chain, Reading, ReplyReaders, choice_reading, norm

OWNER = "scorers/conflictscore"
PARSE = "conflict_eval.scorers.conflictscore.parse"
OPTIONS = ["Paris", "Rome", "the placenta"]


def read_rag_choice(row: dict) -> Reading:
    from .parse import parse_rag_choice

    return choice_reading(parse_rag_choice(row["reply"], row["args"]["options"]))


def read_table14_choice(row: dict) -> Reading:
    from .parse import parse_table14_choice

    return choice_reading(parse_table14_choice(row["reply"], row["args"]["options"]))


def read_label(row: dict) -> Reading:
    from .parse import parse_label

    p = parse_label(row["reply"])
    return Reading("value", norm(p.label)) if p.ok else Reading("failure", reason=p.error)


def read_label_list(row: dict) -> Reading:
    from .parse import parse_label_list

    labels = [p.label for p in parse_label_list(row["reply"], row["args"]["n_documents"])]
    want = row["meaning"].get("labels")
    if all(label is None for label in labels):
        return Reading("failure", reason="no label for any document")
    if None in labels and want and all(g is None or norm(g) == norm(w) for g, w in zip(labels, want)):
        return Reading("failure", reason=f"labels for some documents only: {labels}")
    return Reading("value", norm(labels))


def read_claims(row: dict) -> Reading:
    from .parse import parse_claims

    claims, error = parse_claims(row["reply"])
    return Reading("failure", reason=error) if error else Reading("value", norm(claims))


READERS = ReplyReaders(
    parsers=[
        ParserEntry("conflictscore.parse_claims", f"{PARSE}:parse_claims",
                    "decomposition failure: the sample's CS-C/CS-R are undefined and counted", owner=OWNER),
        ParserEntry("conflictscore.parse_label", f"{PARSE}:parse_label",
                    "label failure: the cell is left out and counted (label coverage)", owner=OWNER),
        ParserEntry("conflictscore.parse_label_list", f"{PARSE}:parse_label_list",
                    "label failure per document: left out and counted (label coverage)",
                    call=lambda fn, t: fn(t, 3), owner=OWNER),
        ParserEntry("conflictscore.split_sentences", "conflict_eval.scorers.conflictscore.pipeline:split_sentences",
                    "never fails (claims=sentences)", owner=OWNER),
        ParserEntry("conflictscore.parse_table14_choice", f"{PARSE}:parse_table14_choice",
                    "regeneration failure: the regenerated answer is a counted parse failure",
                    call=lambda fn, t: fn(t, OPTIONS), owner=OWNER),
        ParserEntry("conflictscore.parse_rag_choice", f"{PARSE}:parse_rag_choice",
                    "Table 12/13 answer failure: counted parse failure, scored wrong",
                    call=lambda fn, t: fn(t, OPTIONS), owner=OWNER),
    ],
    chains=[
        Chain("conflictscore.parse_rag_choice", ("choice", "truthfulqa.rag_choice"), read_rag_choice,
              knows_refusal=True, choice_rewrites=True),
        Chain("conflictscore.parse_table14_choice", ("truthfulqa.regenerate",), read_table14_choice,
              knows_refusal=True, choice_rewrites=True),
        Chain("conflictscore.parse_label", ("conflictscore.label",), read_label),
        Chain("conflictscore.parse_label_list", ("conflictscore.label_list",), read_label_list),
        Chain("conflictscore.parse_claims", ("conflictscore.claims",), read_claims),
    ],
)
