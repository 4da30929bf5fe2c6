"""KRE (Knowledge Robustness Evaluation; Ying et al., ACL 2024) loaders.

Upstream: https://github.com/yingjiahao14/KRE at a pinned commit, one JSON
array per subset. Each row::

    {"question": ..., "choices": [...], "answer": "B", "candidate": "A",
     "negative_answer": "<text of option A>", " golden_context": ...,
     "negative_context": ...}

``answer`` is the gold letter, ``candidate`` the letter of the misleading
option that ``negative_context`` (an LLM-written explanation) argues for.
The golden-context key has a leading space in the shipped files; the key
without the space (as the authors' README spells it) is accepted too.

Settings (``-T setting=``):

* ``conflict`` -- the evidence is ``negative_context``; ``conflict_option`` is
  ``candidate``; ``conflict_type`` is ``counterfactual`` (see README).
* ``conflict_free`` -- the evidence is the golden context; no conflict option;
  ``conflict_type`` is ``none``.

Rows have no id; each record's id is ``<dataset>-<first 10 hex of sha1 of
question + choices>`` so a record keeps its id in the full upstream file and
in any subset of it. A file with the same question and choices twice is
rejected (a duplicate id naming both lines), as every loader rejects duplicate
records: evaluating an item twice would weigh it double.
"""

from __future__ import annotations

import logging
from pathlib import Path

from conflict_eval.records.download import github_file
from conflict_eval.records import (
    LETTERS,
    BadField,
    ConflictQA,
    Passage,
    Row,
    build_dataset,
    check_file,
    content_id,
    convert_rows,
    read_json_or_jsonl,
)

KRE_REPO = "yingjiahao14/KRE"
KRE_COMMIT = "fb170442ea942439c01cf8d105d935a4b80facc3"
KRE_FILES = {
    "kre_ecqa": "dataset/cose.json",  # named after CoS-E; the README calls the subset ECQA
    "kre_ecare": "dataset/ecare.json",
    "kre_musique": "dataset/musique.json",
    "kre_squad": "dataset/squad.json",
}
SETTINGS = ("conflict", "conflict_free")
CONFLICT_TYPE = "counterfactual"
GOLDEN_KEYS = (" golden_context", "golden_context")
logger = logging.getLogger(__name__)


def _golden(row: Row) -> str:
    return row.text_any(*GOLDEN_KEYS)


def converter(name: str, setting: str):
    """A row -> :class:`ConflictQA` converter for dataset ``name`` in ``setting``."""
    def convert(row: Row) -> ConflictQA:
        question = row.text("question")
        choices = row.options("choices")
        gold = row.letter("answer", choices)
        candidate = row.letter("candidate", choices, unlike="answer")
        negative_answer = row.text("negative_answer")
        if negative_answer.strip() != choices[LETTERS.index(candidate)].strip():
            raise BadField(
                "negative_answer",
                f"{negative_answer!r} is not the text of option {candidate} "
                f"({choices[LETTERS.index(candidate)]!r})",
            )
        golden, negative = _golden(row), row.text("negative_context")
        rid = content_id(name, question, *choices)
        conflict = setting == "conflict"
        return ConflictQA(
            id=rid,
            dataset=name,
            question=question,
            options=choices,
            answers=[choices[LETTERS.index(gold)]],
            gold_option=gold,
            conflict_answer=negative_answer if conflict else None,
            conflict_option=candidate if conflict else None,
            evidence=[
                Passage(text=negative, label="conflicting", source="kre_negative_context")
                if conflict
                else Passage(text=golden, label="supporting", source="kre_golden_context")
            ],
            conflict_type=CONFLICT_TYPE if conflict else "none",
            setting=setting,
            extra={"candidate": candidate, "negative_answer": negative_answer},
        )

    return convert


def duplicate_options(options: list[str]) -> list[list[str]]:
    """Groups of letters whose options have the same text (white space and
    case ignored), e.g. ``[["A", "B"]]`` for ``["bent", "bent", "crooked"]``.

    >>> duplicate_options(["mortal", "dying", "death", "dead", "Mortal "])
    [['A', 'E']]
    """
    groups: dict[str, list[str]] = {}
    for i, option in enumerate(options):
        groups.setdefault(" ".join(option.split()).casefold(), []).append(LETTERS[i])
    return [letters for letters in groups.values() if len(letters) > 1]


def load_kre(name: str, path: str | Path, setting: str = "conflict") -> list[ConflictQA]:
    """Validated records of a KRE file (upstream JSON array, or JSON Lines).

    Records that list the same option text under two letters are kept (they
    are upstream items) and marked in ``extra["duplicate_options"]``; the
    ``choice_accuracy`` scorer scores them by option text. Their number is
    logged per dataset and file (a warning when there are any)."""
    if setting not in SETTINGS:
        raise ValueError(f"{name}: unknown setting {setting!r}; expected one of {', '.join(SETTINGS)}")
    records = convert_rows(name, read_json_or_jsonl(path), converter(name, setting), file=path)
    duplicated = gold_twice = 0
    for record in records:
        groups = duplicate_options(record.options)
        if groups:
            record.extra["duplicate_options"] = groups
            duplicated += 1
            gold_twice += any(record.gold_option in g for g in groups)
    report = logger.warning if duplicated else logger.info
    report("%s (%s): %d of %d record(s) list the same option text under two letters "
           "(%d with the gold option's text twice); they are scored by option text",
           name, path, duplicated, len(records), gold_twice)
    return records


def _kre(name: str, path, setting, limit, shuffle, seed):
    if setting not in SETTINGS:
        raise ValueError(f"{name}: unknown setting {setting!r}; expected one of {', '.join(SETTINGS)}")
    if path is not None:
        source = check_file(path, name)
    else:
        source = github_file(KRE_REPO, KRE_COMMIT, KRE_FILES[name])
    records = load_kre(name, source, setting)
    return build_dataset(name, records, location=str(source), limit=limit, shuffle=shuffle, seed=seed)


def kre_ecqa(path: str | None = None, setting: str = "conflict", limit: int | None = None,
             shuffle: bool = False, seed: int = 0):
    """KRE ECQA subset (upstream ``dataset/cose.json``; 5 options).

    Args:
        path: local file in the upstream format (JSON array or JSON Lines);
            default: download the pinned upstream file.
        setting: ``conflict`` (negative context as evidence) or
            ``conflict_free`` (golden context).
        limit: keep the first ``limit`` items (after shuffling).
        shuffle: shuffle with ``seed``.
    """
    return _kre("kre_ecqa", path, setting, limit, shuffle, seed)


def kre_ecare(path: str | None = None, setting: str = "conflict", limit: int | None = None,
              shuffle: bool = False, seed: int = 0):
    """KRE e-CARE subset (upstream ``dataset/ecare.json``; 2 options). Args as :func:`kre_ecqa`."""
    return _kre("kre_ecare", path, setting, limit, shuffle, seed)


def kre_musique(path: str | None = None, setting: str = "conflict", limit: int | None = None,
                shuffle: bool = False, seed: int = 0):
    """KRE MuSiQue subset (upstream ``dataset/musique.json``). Args as :func:`kre_ecqa`."""
    return _kre("kre_musique", path, setting, limit, shuffle, seed)


def kre_squad(path: str | None = None, setting: str = "conflict", limit: int | None = None,
              shuffle: bool = False, seed: int = 0):
    """KRE SQuAD v2.0 subset (upstream ``dataset/squad.json``). Args as :func:`kre_ecqa`."""
    return _kre("kre_squad", path, setting, limit, shuffle, seed)
