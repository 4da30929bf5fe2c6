"""The hand-labelled ConflictScore slice (``tests/data/judge_gold/``): claim x
document cells whose documents are read in place from the shared data (the
slice stores record ids, the claims we wrote, and labels; never the data).

A cell's ``document`` is one of (``record`` = line number in the source's
``sample.jsonl``):

* ``macnoise_fewshot``: a MacNoise passage, ``ctx_id`` and ``field`` ``text``
  or ``text_pert``;
* ``truthfulqa_binary``: an answer-key statement, ``row`` and ``field`` ``Best
  Answer`` / ``Best Incorrect Answer`` / ``Correct Answers`` with ``item``, the
  index in the ``;``-separated list; the claim is the record's Best Answer;
* ``ramdocs``: a retrieved passage, ``doc`` = index in the record's ``documents``;
* ``conflictqa_strategyqa``: a passage, ``record`` (its own record, which may
  differ from the claim's) and ``field`` (``parametric_memory``,
  ``counter_memory``, ...).

Every cell but a TruthfulQA one stores the claim we wrote (``claim``) and a
``claim_id``; a known-wrong control claim says which style it is in
``control`` (``specific_wrong`` or ``vague_wrong``). The labelling rules are in
``tests/data/judge_gold/README.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

LABELS = ("SUPPORTS", "CONTRADICTS", "IRRELEVANT")
CONTROLS = ("specific_wrong", "vague_wrong")
SOURCES = ("macnoise_fewshot", "truthfulqa_binary", "ramdocs", "conflictqa_strategyqa")


@dataclass
class GoldCell:
    id: str
    source: str
    claim: str
    document: str
    label: str
    claim_id: str = ""
    control: str | None = None


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
            elif cell["source"] == "ramdocs":
                rows(cell["source"])[cell["record"]]  # the claim's record exists
                text, claim = rows(cell["source"])[cell["record"]]["documents"][doc["doc"]]["text"], cell["claim"]
            elif cell["source"] == "conflictqa_strategyqa":
                rows(cell["source"])[cell["record"]]
                text, claim = rows(cell["source"])[doc["record"]][doc["field"]], cell["claim"]
            else:
                raise ValueError(f"source {cell['source']!r} is not one of {', '.join(SOURCES)}")
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"the document text is {text!r}")
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: cannot resolve its document ({type(exc).__name__}: {exc})") from exc
        control = cell.get("control")
        if control is not None and control not in CONTROLS:
            raise ValueError(f"{where}: control {control!r} is not one of {', '.join(CONTROLS)}")
        claim_id = str(cell.get("claim_id") or f"{cell['source']}:{cell['record']}")
        out.append(GoldCell(cell["id"], cell["source"], claim, text, label, claim_id, control))
    return out


def write_human_scores(cells: list[GoldCell], path: str | Path) -> Path:
    """The hand labels as an Inspect ``precomputed_scores()`` file (JSON Lines: ``id``,
    ``value`` = the label, ``metadata``), so a log of the slice carries them as human scores."""
    from conflict_eval.records import write_jsonl

    write_jsonl(path, [{"id": c.id, "value": c.label,
                        "metadata": {"source": c.source, "claim_id": c.claim_id, "control": c.control,
                                     "labeller": "human"}} for c in cells])
    return Path(path)


def judge_stats(cells: list[GoldCell], labels: list[str | None]) -> dict:
    """One judge's labels (``None`` = unreadable) against the hand labels: accuracy (unreadable =
    wrong) and accuracy on the readable cells, each with a 95% Wilson interval; coverage; Cohen's
    kappa (unreadable = its own category); the labels given; and, per control style, the
    acceptance of known-wrong claims: of the control cells whose hand label is not SUPPORTS, how
    many the judge labelled SUPPORTS."""
    from .panel import pair_agreement, wilson

    gold = [c.label for c in cells]
    readable = [(g, x) for g, x in zip(gold, labels) if x is not None]
    accepts = {}
    for style in CONTROLS:
        wrong = [x for c, x in zip(cells, labels) if c.control == style and c.label != "SUPPORTS"]
        accepts[style] = wilson(sum(x == "SUPPORTS" for x in wrong), len(wrong))
    return {
        "cells": len(gold), "readable": len(readable),
        "coverage": len(readable) / len(gold) if gold else float("nan"),
        "accuracy": wilson(sum(g == x for g, x in zip(gold, labels)), len(gold)),
        "accuracy_readable": wilson(sum(g == x for g, x in readable), len(readable)),
        "kappa": pair_agreement(gold, [x or "UNREADABLE" for x in labels])["kappa"],
        "predicted": {lab: sum(1 for x in labels if x == lab) for lab in LABELS}
                     | {"unreadable": sum(1 for x in labels if x is None)},
        "accepts": accepts,
    }


def slice_report(cells: list[GoldCell], judges: dict[str, dict[str, str | None]]) -> dict:
    """The slice's summary and each judge's :func:`judge_stats` (``judges``: name -> {cell id:
    label or None}), overall and per source; with two or more judges the panel's strict-majority
    label, pairwise kappa / raw agreement / error correlation, Krippendorff's alpha and the
    effective number of judges (:func:`.panel.effective_judges`)."""
    from .panel import alpha, effective_judges, error_correlation, pair_agreement, strict_majority

    gold = [c.label for c in cells]
    out: dict = {"cells": len(cells), "claims": len({c.claim for c in cells}),
                 "gold_labels": {lab: gold.count(lab) for lab in LABELS},
                 "controls": {s: sum(c.control == s for c in cells) for s in CONTROLS},
                 "sources": {s: sum(c.source == s for c in cells) for s in SOURCES}, "judges": {}}
    labels = {name: [got.get(c.id) for c in cells] for name, got in judges.items()}
    for name, lab in labels.items():
        out["judges"][name] = judge_stats(cells, lab) | {"by_source": {
            src: judge_stats([c for c in cells if c.source == src], [x for x, c in zip(lab, cells) if c.source == src])
            for src in SOURCES if any(c.source == src for c in cells)}}
    names = list(labels)
    if len(names) > 1:
        votes = [[labels[n][i] for n in names] for i in range(len(cells))]
        pairs = {f"{a} ~ {b}": pair_agreement(labels[a], labels[b])
                 | {"error_correlation": error_correlation(labels[a], labels[b], gold)}
                 for i, a in enumerate(names) for b in names[i + 1:]}
        out["panel"] = judge_stats(cells, [strict_majority(v) for v in votes]) | {
            "alpha": alpha(votes), "pairs": pairs,
            "effective_judges": effective_judges(len(names), [p["error_correlation"] for p in pairs.values()])}
    return out
