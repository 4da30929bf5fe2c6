"""The hand-labelled ConflictScore slice (``tests/data/judge_gold/``): claim x
document cells whose documents are read in place from the shared data (the
slice stores record ids, the claims we wrote, and labels; never the data).

A cell's ``document`` is either a MacNoise passage (``record`` = line number
of ``macnoise_fewshot/sample.jsonl``, ``ctx_id`` and ``field`` ``text`` or
``text_pert``) or a TruthfulQA answer-key statement (``row`` of
``truthfulqa_binary/sample.jsonl``, ``field`` ``Best Answer`` / ``Best
Incorrect Answer`` / ``Correct Answers`` with ``item``, the index in the
``;``-separated list). A TruthfulQA cell's claim is its row's Best Answer.
The labelling rule is in ``tests/data/judge_gold/README.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

LABELS = ("SUPPORTS", "CONTRADICTS", "IRRELEVANT")


@dataclass
class GoldCell:
    id: str
    source: str
    claim: str
    document: str
    label: str


def _statements(value: str) -> list[str]:
    return [s.strip() for s in value.split(";") if s.strip()]


def _row(locator: str, row) -> dict:
    if not isinstance(row, dict):
        raise ValueError(f"{locator}: expected a JSON object, got {row!r}")
    return row


def load_gold(cells_file: str | Path, data_dir: str | Path) -> list[GoldCell]:
    """The slice's cells with their claim and document text (an error names the cell and field)."""
    from conflict_eval.records import read_jsonl

    data_dir = Path(data_dir)
    cache: dict[str, list[dict]] = {}

    def rows(source: str) -> list[dict]:
        if source not in cache:
            cache[source] = [_row(loc, r) for loc, r in read_jsonl(data_dir / source / "sample.jsonl")]
        return cache[source]

    out = []
    for loc, cell in read_jsonl(cells_file):
        cell = _row(loc, cell)
        where = f"{cells_file}: cell {cell.get('id')!r}"
        label, doc = cell.get("label"), cell.get("document") or {}
        if label not in LABELS:
            raise ValueError(f"{where}: label {label!r} is not one of {', '.join(LABELS)}")
        try:
            if cell["source"] == "macnoise_fewshot":
                record = rows(cell["source"])[cell["record"]]
                (ctx,) = [c for c in record["ctxs"] if str(c["id"]) == doc["ctx_id"]]
                text, claim = ctx[doc["field"]], cell["claim"]
            elif cell["source"] == "truthfulqa_binary":
                claim = rows(cell["source"])[cell["record"]]["Best Answer"]
                row = rows(cell["source"])[doc["row"]]
                text = _statements(row[doc["field"]])[doc["item"]] if "item" in doc else row[doc["field"]]
            else:
                raise ValueError(f"source {cell['source']!r} is not macnoise_fewshot or truthfulqa_binary")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"{where}: cannot resolve its document ({type(exc).__name__}: {exc})") from exc
        out.append(GoldCell(cell["id"], cell["source"], claim, text, label))
    return out
