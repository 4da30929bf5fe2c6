"""RAMDocs loader (Wang, Prasad, Stengel-Eskin, Bansal 2025, arXiv 2504.13079).

Upstream: ``RAMDocs_test.jsonl`` of https://github.com/HanNight/RAMDocs at a
pinned commit, one JSON object a line::

    {"question": ..., "documents": [{"text": ..., "type": "correct" | "misinfo" | "noise",
                                     "answer": ... ("unknown" for noise)}, ...],
     "disambig_entity": [...], "gold_answers": [...], "wrong_answers": [...]}

Each row becomes one free-form :class:`ConflictQA` whose evidence is every
document, in the upstream order, labelled by its type (``correct`` ->
``supporting``, ``misinfo`` -> ``conflicting``, ``noise`` -> ``irrelevant``;
the upstream type is also kept as the passage's ``source`` and in
``extra.doc_types``). ``answers`` are the gold answers (all of them are
needed: see :mod:`.scorer`). ``extra`` holds the counts the breakdowns use:
``n_gold``, ``n_correct_docs``, ``n_misinfo_docs``, ``n_noise_docs``,
``ambiguous`` (2+ gold answers) and ``has_misinformation`` (1+ misinfo
document), plus ``wrong_answers``, ``disambig_entity`` and each document's
``answer``.

``conflict_type`` is ``misinformation`` when a misinformation document is
present, else ``none``; ``setting`` is ``ambiguous`` or ``single_answer``.
"""

from __future__ import annotations

from pathlib import Path

from conflict_eval.components.compose import declares_metric
from conflict_eval.records.download import github_file
from conflict_eval.records import (
    BadField,
    ConflictQA,
    Passage,
    Row,
    as_strings,
    build_dataset,
    check_file,
    content_id,
    convert_rows,
    numbered,
    read_json_or_jsonl,
)

RAMDOCS_REPO = "HanNight/RAMDocs"
RAMDOCS_COMMIT = "d44454c9ebb0bf513d8236a03decc9fb58704cad"
RAMDOCS_FILE = "RAMDocs_test.jsonl"
RAMDOCS_SHA256 = "c67f699c97349f00cf1bd08d1dbf8ca1d0cc38c306715c93a10a4f961dcf28b7"
DOC_TYPES = {"correct": "supporting", "misinfo": "conflicting", "noise": "irrelevant"}
NAME = "ramdocs"


def _documents(row: Row) -> list[dict]:
    docs = row.list("documents")
    if not docs:
        raise BadField("documents", "expected at least one document, got an empty list")
    out = []
    for i, doc in enumerate(docs):
        where = f"documents[{i}]"
        if not isinstance(doc, dict):
            raise BadField(where, f"expected an object, got {type(doc).__name__}")
        for key in ("text", "type", "answer"):
            if key not in doc:
                raise BadField(f"{where}.{key}", "field is missing")
        if not isinstance(doc["text"], str) or not doc["text"].strip():
            raise BadField(f"{where}.text", f"expected a non-empty string, got {doc['text']!r:.60}")
        if doc["type"] not in DOC_TYPES:
            raise BadField(f"{where}.type", f"expected one of {', '.join(DOC_TYPES)}, got {doc['type']!r:.60}")
        if not isinstance(doc["answer"], str):
            raise BadField(f"{where}.answer", f"expected a string, got {type(doc['answer']).__name__}")
        out.append(doc)
    return out


def converter():
    """A row -> :class:`ConflictQA` converter (ids stable across subsets of the file)."""
    number = numbered()

    def convert(row: Row) -> ConflictQA:
        question = row.text("question")
        docs = _documents(row)
        gold = row.strings("gold_answers")
        if not gold:
            raise BadField("gold_answers", "expected at least one gold answer")
        wrong = row.strings("wrong_answers")
        entities = as_strings(row["disambig_entity"], "disambig_entity") if "disambig_entity" in row else []
        rid = number(content_id(NAME, question))
        types = [d["type"] for d in docs]
        counts = {t: types.count(t) for t in DOC_TYPES}
        return ConflictQA(
            id=rid,
            dataset=NAME,
            question=question,
            answers=gold,
            evidence=[Passage(text=d["text"], label=DOC_TYPES[d["type"]], id=f"doc{i + 1}",
                              source=f"ramdocs_{d['type']}") for i, d in enumerate(docs)],
            conflict_type="misinformation" if counts["misinfo"] else "none",
            setting="ambiguous" if len(gold) >= 2 else "single_answer",
            extra={
                "n_gold": len(gold),
                "n_correct_docs": counts["correct"],
                "n_misinfo_docs": counts["misinfo"],
                "n_noise_docs": counts["noise"],
                "ambiguous": len(gold) >= 2,
                "has_misinformation": counts["misinfo"] > 0,
                "wrong_answers": wrong,
                "disambig_entity": entities,
                "doc_types": types,
                "doc_answers": [d["answer"] for d in docs],
            },
        )

    return convert


def load_ramdocs(path: str | Path) -> list[ConflictQA]:
    """Validated records of a RAMDocs file (upstream JSON Lines, or a JSON array)."""
    return convert_rows(NAME, read_json_or_jsonl(path), converter(), file=path, id_field=None)


@declares_metric("strict_em")
def ramdocs(path: str | None = None, limit: int | None = None, shuffle: bool = False, seed: int = 0):
    """RAMDocs: questions whose documents mix ambiguity, misinformation and noise.

    Args:
        path: local file in the upstream format (``RAMDocs_test.jsonl`` or any
            subset of its lines); default: download the pinned upstream file
            (checked against its sha256).
        limit: keep the first ``limit`` items (after shuffling).
        shuffle: shuffle with ``seed``.
    """
    if path is not None:
        source = check_file(path, NAME)
    else:
        source = github_file(RAMDOCS_REPO, RAMDOCS_COMMIT, RAMDOCS_FILE, sha256=RAMDOCS_SHA256)
    records = load_ramdocs(source)
    return build_dataset(NAME, records, location=str(source), limit=limit, shuffle=shuffle, seed=seed)
