"""``capital_swaps``: multiple-choice questions, each with one passage that
supports the gold answer or contradicts it (a written-for-the-example dataset;
``data/capital_swaps.jsonl``, or your own file in the same format with ``path=``).

One upstream row (JSON Lines)::

    {"id": "cs-1", "question": "...", "options": ["...", "..."], "answer": "A",
     "passage": "...", "passage_answer": "B"}

``answer`` is the gold letter; ``passage_answer`` the letter the passage
supports. When the two differ the passage is ``conflicting`` and
``passage_answer`` is the record's ``conflict_option`` (``conflict_type``
``counterfactual``); when they agree it is ``supporting`` (``conflict_type``
``none``). ``setting=`` keeps one kind: ``conflict``, ``matching`` or ``all``.
"""

from __future__ import annotations

from importlib.resources import files

from conflict_eval import ConflictQA, Passage, Row, build_dataset, convert_rows, declares_metric, read_jsonl
from conflict_eval.records import LETTERS, check_file

NAME = "capital_swaps"
SETTINGS = ("all", "conflict", "matching")


def convert(row: Row) -> ConflictQA:
    """One upstream row -> :class:`ConflictQA` (a bad field is reported with the file, record and field)."""
    options = row.options("options")
    gold = row.letter("answer", options)
    said = row.letter("passage_answer", options)
    conflict = said != gold
    return ConflictQA(
        id=row.id("id"), dataset=NAME, question=row.text("question"), options=options,
        answers=[options[LETTERS.index(gold)]], gold_option=gold,
        conflict_option=said if conflict else None,
        conflict_answer=options[LETTERS.index(said)] if conflict else None,
        evidence=[Passage(text=row.text("passage"), label="conflicting" if conflict else "supporting")],
        conflict_type="counterfactual" if conflict else "none",
        setting="conflict" if conflict else "matching")


@declares_metric("evidence_following")
def capital_swaps(path: str | None = None, setting: str = "all", limit: int | None = None):
    """The ``capital_swaps`` dataset.

    Args:
        path: A JSON Lines file in the format above (default: the one shipped with the example).
        setting: ``all``, ``conflict`` (passages that contradict the gold answer) or ``matching``.
        limit: Keep the first ``limit`` records.
    """
    if setting not in SETTINGS:
        raise ValueError(f"{NAME}: setting must be one of {', '.join(SETTINGS)}, got {setting!r}")
    if path is None:
        source = files("conflict_eval_example") / "data" / "capital_swaps.jsonl"
        path = str(source)
    check_file(path, NAME)
    records = convert_rows(NAME, read_jsonl(path), convert, file=path)
    records = [r for r in records if setting == "all" or r.setting == setting]
    return build_dataset(NAME, records, location=path, limit=limit)
