"""ConflictBank QA (``Warrieryes/CB_qa`` on the Hugging Face hub).

One upstream row (file ``QA_dataset.json``, JSON Lines) holds a Wikidata fact,
four evidence passages and a four-option question::

    question, options (4: correct object, distractor, replaced object, "uncertain"),
    correct_option, replace_option, uncertain_option (letters),
    default_evidence (+ _category)                      -> conflict_type=correct
    misinformation_conflict_evidence_evidence (+ ...)   -> conflict_type=misinformation
    temporal_conflict_evidence (+ _category, _time_span) -> conflict_type=temporal
    semantic_conflict_evidence (+ _category)            -> conflict_type=semantic

Older copies use ``misinformation_conflict_evidence``; the construction
scripts use ``correct_evidence`` / ``fact_conflict_evidence``. All are accepted.

``-T conflict_type=`` picks which evidence the model sees; without it every
row yields four items, one per setting (ids ``<row id>-<setting>``), so the
per-conflict-type breakdown of ``choice_accuracy`` covers all of Figure 3 in
one run. In the three conflict settings ``conflict_option`` is
``replace_option`` (the option the conflicting evidence argues for); in
``correct`` the evidence supports the gold option and ``conflict_type`` is
``none``.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from conflict_eval.records.download import hf_dataset_file
from conflict_eval.records import (
    LETTERS,
    ConflictQA,
    MissingField,
    Passage,
    Row,
    build_dataset,
    check_file,
    content_id,
    convert_rows,
    numbered,
    read_json_or_jsonl,
)

CB_REPO = "Warrieryes/CB_qa"
CB_FILE = "QA_dataset.json"
# UNCONFIRMED PIN: no network access was available when this was written, so
# the hub commit of Warrieryes/CB_qa could not be looked up. The procedure to
# pin it is PIN_PROCEDURE below (also in registry.yaml, `pin_procedure`; a test
# checks that the two agree and that this revision equals the registry's).
CB_REVISION = "main"
PIN_PROCEDURE = (
    "online, run: python -c \"from huggingface_hub import HfApi; "
    "print(HfApi().dataset_info('Warrieryes/CB_qa').sha)\"; put the 40-hex commit in "
    "CB_REVISION (plugins/conflictbank/dataset.py) and datasets.conflictbank.revision "
    "(registry.yaml), download QA_dataset.json at that commit and record its SHA-256 in "
    "plugins/conflictbank/README.md"
)

log = logging.getLogger(__name__)


def is_pinned(revision: str | None) -> bool:
    """True for a full 40-hex commit hash (a branch or tag name such as ``main`` can move)."""
    return bool(revision) and re.fullmatch(r"[0-9a-f]{40}", revision) is not None


def source_info(path: str | None, revision: str = CB_REVISION) -> dict:
    """Where the data came from, for the eval log (``dataset_provenance`` in the
    task metadata): a local file, or the hub file with its revision and whether
    that revision is pinned."""
    if path is not None:
        return {"source": "local file", "path": str(path), "revision": None, "revision_pinned": None}
    info = {"source": f"huggingface:{CB_REPO}/{CB_FILE}", "revision": revision,
            "revision_pinned": is_pinned(revision)}
    if not info["revision_pinned"]:
        info["warning"] = (f"conflictbank: downloaded {CB_REPO}/{CB_FILE} at the unpinned revision "
                           f"{revision!r}; the data may change between runs. To pin: {PIN_PROCEDURE}")
    return info

SETTINGS = ("misinformation", "temporal", "semantic", "correct")
# setting -> accepted evidence keys, in order of preference
EVIDENCE_KEYS = {
    "correct": ("default_evidence", "correct_evidence"),
    "misinformation": (
        "misinformation_conflict_evidence_evidence",
        "misinformation_conflict_evidence",
        "fact_conflict_evidence",
    ),
    "temporal": ("temporal_conflict_evidence",),
    "semantic": ("semantic_conflict_evidence",),
}
CATEGORY_KEYS = {
    "correct": "default_evidence_category",
    "misinformation": "misinformation_conflict_evidence_category",
    "temporal": "temporal_conflict_evidence_category",
    "semantic": "semantic_conflict_evidence_category",
}
KEPT_FIELDS = ("subject", "relation", "object", "replaced_object", "temporal_conflict_time_span")


def _evidence(row: Row, setting: str) -> str:
    for key in EVIDENCE_KEYS[setting]:
        if key in row:
            return row.text(key)
    raise MissingField(EVIDENCE_KEYS[setting][0],
                       f"field is missing (also looked for {', '.join(EVIDENCE_KEYS[setting][1:]) or '-'})")


def converter(settings: tuple[str, ...]):
    """Row -> one :class:`ConflictQA` per setting in ``settings``."""
    number = numbered()

    def convert(row: Row) -> list[ConflictQA]:
        question = row.text("question")
        options = row.options("options")
        gold = row.letter("correct_option", options)
        replaced = row.letter("replace_option", options, unlike="correct_option")
        uncertain = row.letter("uncertain_option", options) if "uncertain_option" in row else None
        base = number(content_id("conflictbank", question, *options))
        extra = {k: row[k] for k in KEPT_FIELDS if k in row}
        if uncertain is not None:
            extra["uncertain_option"] = uncertain
        records = []
        for setting in settings:
            conflict = setting != "correct"
            category = row.get(CATEGORY_KEYS[setting])
            records.append(ConflictQA(
                id=base if len(settings) == 1 else f"{base}-{setting}",
                dataset="conflictbank",
                question=question,
                options=options,
                answers=[options[LETTERS.index(gold)]],
                gold_option=gold,
                conflict_answer=options[LETTERS.index(replaced)] if conflict else None,
                conflict_option=replaced if conflict else None,
                evidence=[Passage(
                    text=_evidence(row, setting),
                    label="conflicting" if conflict else "supporting",
                    source=category if isinstance(category, str) and category else None,
                )],
                conflict_type=setting if conflict else "none",
                setting=setting,
                source_ids=[base],
                extra=extra,
            ))
        return records

    return convert


def load_conflictbank(path: str | Path, conflict_type: str | None = None) -> list[ConflictQA]:
    """Validated records of a ``QA_dataset.json`` file (JSON Lines or a JSON array)."""
    settings = SETTINGS if conflict_type is None else (conflict_type,)
    return convert_rows("conflictbank", read_json_or_jsonl(path), converter(settings), file=path)


def conflictbank(
    path: str | None = None,
    conflict_type: str | None = None,
    limit: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
):
    """ConflictBank four-option QA with the evidence chosen by ``conflict_type``.

    Args:
        path: local copy of ``QA_dataset.json`` (upstream format); default:
            download it from the hub at the pinned revision.
        conflict_type: ``misinformation``, ``temporal``, ``semantic`` or
            ``correct`` (conflict-free evidence); default: all four, one item
            per row and setting.
        limit: keep the first ``limit`` items (after shuffling).
        shuffle: shuffle with ``seed``.
    """
    if conflict_type is not None and conflict_type not in SETTINGS:
        raise ValueError(
            f"conflictbank: unknown conflict_type {conflict_type!r}; expected one of {', '.join(SETTINGS)}"
        )
    if path is not None:
        source = check_file(path, "conflictbank")
    else:
        source = hf_dataset_file(CB_REPO, CB_FILE, CB_REVISION)
    info = source_info(path)
    if "warning" in info:
        log.warning(info["warning"])
    records = load_conflictbank(source, conflict_type)
    ds = build_dataset("conflictbank", records, location=str(source), limit=limit,
                       shuffle=shuffle, seed=seed)
    ds.provenance = info  # eval metadata `dataset_provenance` (conflict_eval.components.compose)
    return ds
