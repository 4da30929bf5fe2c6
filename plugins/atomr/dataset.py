"""AtomR's benchmarks as canonical records (AtomR §4.1.1).

Each loader reads a local file with ``path=`` (upstream format) or downloads
the pinned upstream file. Every record keeps

* ``extra["category"]``: the question type / hop count used for the
  breakdowns of Tables 2-3 (``None`` where the data has none: IRCoT's
  HotpotQA files carry no bridge/comparison type);
* ``extra["source_files"]``: files the knowledge sources can be built from
  (``text``: a passage corpus, ``kg``: triples, ``web``: pre-fetched pages),
  only where the file holds them: IRCoT HotpotQA ``contexts`` and MuSiQue
  ``paragraphs`` (the corpus is all records' paragraphs), BlendQA's NQ
  ``long_answer`` paragraphs and ``sub_source`` triples, CRAG's
  ``search_results``.

Formats accepted:

* ``atomr_hotpotqa``: IRCoT processed HotpotQA (``question_id``,
  ``question_text``, ``answers_objects[].spans``, ``contexts``).
* ``atomr_2wiki``: AtomR's 2Wiki file (``question_id``, ``question``,
  ``answers``, ``type``) or the IRCoT format.
* ``atomr_musique``: AtomR's file (``question_id``, ``question``, ``answers``)
  or official MuSiQue (``id``, ``question``, ``answer``, ``answer_aliases``,
  ``paragraphs``). Category = hops from the id prefix (``2hop``...).
* ``atomr_crag``: AtomR's file (``question_id``, ``question``, ``answers``,
  ``question_type``) or official CRAG (``interaction_id``, ``query``,
  ``answer``, ``alternative_answers``, ``search_results``).
* ``atomr_blendqa``: BlendQA records (``index``, ``type``, ``question``,
  ``answers``, ``sub_source1/2``, ``long_answer``, ``entity``). Category =
  KG-Web / KG-Text / Text-Web from ``type``.

Answer fields must be lists of strings (a bare string is an error, not one
answer: every upstream file writes lists); ids must be non-empty strings or
integers; every paragraph needs ``paragraph_text``. Errors name the file,
the record id and the field (``answers_objects[0].spans``).
"""

from __future__ import annotations

import json
from pathlib import Path

from conflict_eval.records.download import github_file
from conflict_eval.records import (
    BadField,
    ConflictQA,
    Passage,
    Row,
    as_strings,
    build_dataset,
    check_file,
    convert_rows,
    optional_text,
    read_json_or_jsonl,
)

ATOMR_REPO = "THU-KEG/AtomR"
ATOMR_COMMIT = "ccfbb71e4643a05e27e00abe71e5212e9abb52c2"
IRCOT_MIRROR = "xindili-cmu/anlp-project-multihop"
IRCOT_COMMIT = "df0d5757f42f098ab6026f40323e91c369307506"

UPSTREAM = {
    "hotpotqa": [(IRCOT_MIRROR, IRCOT_COMMIT, "processed_data/hotpotqa/dev_subsampled.jsonl")],
    "2wiki": [(ATOMR_REPO, ATOMR_COMMIT, "datasets/single_source/2WikiMultiHop/2wiki_test_500.jsonl")],
    "musique": [(ATOMR_REPO, ATOMR_COMMIT, "datasets/single_source/Musique/musique_test_500.jsonl")],
    "crag": [(ATOMR_REPO, ATOMR_COMMIT, "datasets/multi_source/CRAG/CRAG_test_500.jsonl")],
    "blendqa": [(ATOMR_REPO, ATOMR_COMMIT, f"datasets/multi_source/BlendQA/{f}")
                for f in ("kg-web_132.jsonl", "text-kg_163.jsonl", "web-text_150.jsonl")],
}

ID_FIELDS = ("question_id", "id", "interaction_id", "index")
"""Where each format keeps its id (named in error reports)."""

BLENDQA_CATEGORY = {"type1_k2w": "KG-Web", "type2_w2k": "KG-Web", "type_t2k": "KG-Text",
                    "type1_w2t": "Text-Web", "type2_t2w": "Text-Web"}


def _answers(row: Row, key: str = "answers") -> list[str]:
    out = row.strings(key)
    if not out:
        raise BadField(key, f"expected a non-empty list of answer strings, got {row[key]!r:.80}")
    return out


def _objects(row: Row, key: str) -> list[dict]:
    """A list of JSON objects (``answers_objects``, ``contexts``, ``paragraphs``)."""
    items = row.list(key)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise BadField(f"{key}[{i}]", f"expected an object, got {type(item).__name__} {item!r:.60}")
    return items


def _passages(row: Row, key: str, id_key: str) -> list[Passage]:
    """IRCoT ``contexts`` / MuSiQue ``paragraphs``: ``paragraph_text`` (required),
    ``title``, ``id``/``idx``, ``is_supporting``."""
    out = []
    for i, p in enumerate(_objects(row, key)):
        text = p.get("paragraph_text")
        if not isinstance(text, str) or not text.strip():
            why = "field is missing" if "paragraph_text" not in p else f"expected a non-empty string, got {text!r:.60}"
            raise BadField(f"{key}[{i}].paragraph_text", why)
        pid = optional_text(p.get(id_key), f"{key}[{i}].{id_key}")
        supporting = p.get("is_supporting", False)
        if supporting not in (True, False, None):  # also admits 1 / 0
            raise BadField(f"{key}[{i}].is_supporting", f"expected true or false, got {supporting!r:.40}")
        out.append(Passage(text=text, title=optional_text(p.get("title"), f"{key}[{i}].title"),
                           id=str(i) if pid is None else pid,
                           label="supporting" if supporting else "unknown", source="wikipedia"))
    return out


def _ircot(name: str, path: str, category: str | None = None):
    def convert(row: Row) -> ConflictQA:
        answers: list[str] = []
        for i, obj in enumerate(_objects(row, "answers_objects")):
            spans = obj.get("spans")
            answers += [] if spans is None else as_strings(spans, f"answers_objects[{i}].spans")
        if not answers:
            raise BadField("answers_objects", "no answer spans")
        qid = row.id("question_id")
        return ConflictQA(id=qid, dataset=name, question=row.text("question_text"),
                          answers=answers, evidence=_passages(row, "contexts", "id"), source_ids=[qid],
                          extra={"category": category or row.get("type"), "source_files": {"text": path}})
    return convert


def _files(dataset: str, path: str | None) -> list[Path]:
    if path:
        return [check_file(path, f"atomr_{dataset}")]
    return [github_file(repo, commit, file) for repo, commit, file in UPSTREAM[dataset]]


def _load(dataset: str, path: str | None, convert_for, files: list[str] | None = None) -> list[ConflictQA]:
    records: list[ConflictQA] = []
    for f in files or _files(dataset, path):
        records += convert_rows(f"atomr_{dataset}", read_json_or_jsonl(f), convert_for(str(f)),
                                file=f, id_field=ID_FIELDS)
    return records


def _finish(dataset: str, records, path, limit, shuffle, seed, category):
    """``category``: one name, comma-separated names or a list (``-T category=2hop,3hop``)."""
    if category is not None:
        from .solver import as_names

        wanted = as_names(category, "category")
        records = [r for r in records if r.extra.get("category") in wanted]
        if not records:
            raise ValueError(f"atomr_{dataset}: no records with category {', '.join(wanted) or repr(category)}")
    return build_dataset(f"atomr_{dataset}", records, location=path, limit=limit, shuffle=shuffle, seed=seed)


def atomr_hotpotqa(path: str | None = None, limit: int | None = None, shuffle: bool = False, seed: int = 0):
    """HotpotQA in IRCoT's processed format; the text corpus is all records' contexts."""
    records = _load("hotpotqa", path, lambda f: _ircot("atomr_hotpotqa", f))
    return _finish("hotpotqa", records, path, limit, shuffle, seed, None)


def atomr_2wiki(path: str | None = None, category: str | list[str] | None = None, limit: int | None = None,
                shuffle: bool = False, seed: int = 0):
    """2WikiMultihopQA (AtomR's 500 test questions, or IRCoT format with contexts).

    Args:
        category: keep these types, comma-separated or a list (compositional, comparison, bridge_comparison, inference).
    """
    def convert_for(f):
        ircot = _ircot("atomr_2wiki", f)

        def convert(row: Row) -> ConflictQA:
            if "contexts" in row:
                return ircot(row)
            qid = row.id("question_id")
            return ConflictQA(id=qid, dataset="atomr_2wiki", question=row.text("question"),
                              answers=_answers(row), source_ids=[qid],
                              extra={"category": row.text("type"), "source_files": {}})
        return convert

    return _finish("2wiki", _load("2wiki", path, convert_for), path, limit, shuffle, seed, category)


def musique_hops(qid: str) -> str:
    """``2hop``/``3hop``/``4hop`` from a MuSiQue id such as ``3hop1__847420_720378_15538``."""
    prefix = qid.split("__", 1)[0]
    if not prefix[:1].isdigit() or "hop" not in prefix:
        raise BadField("id", f"MuSiQue id {qid!r} does not start with '<n>hop'")
    return prefix[: prefix.index("hop") + 3]


def atomr_musique(path: str | None = None, category: str | list[str] | None = None, limit: int | None = None,
                  shuffle: bool = False, seed: int = 0):
    """MuSiQue (AtomR's 500 test questions, or official records with paragraphs).

    Args:
        category: keep ``2hop``, ``3hop`` and/or ``4hop`` questions (comma-separated or a list).
    """
    def convert_for(f):
        def convert(row: Row) -> ConflictQA:
            if "paragraphs" in row:
                qid = row.text("id")
                aliases = row.strings("answer_aliases") if row.get("answer_aliases") is not None else []
                answers = [row.text("answer").strip()] + aliases
                evidence = _passages(row, "paragraphs", "idx")
                files = {"text": f}
            else:
                qid = row.text("question_id")
                answers, evidence, files = _answers(row), [], {}
            return ConflictQA(id=qid, dataset="atomr_musique", question=row.text("question"),
                              answers=answers, evidence=evidence, source_ids=[qid],
                              extra={"category": musique_hops(qid), "source_files": files})
        return convert

    return _finish("musique", _load("musique", path, convert_for), path, limit, shuffle, seed, category)


def atomr_crag(path: str | None = None, category: str | list[str] | None = None, limit: int | None = None,
               shuffle: bool = False, seed: int = 0):
    """CRAG (AtomR's 500 static questions, or official records with search results).

    Args:
        category: keep these ``question_type`` values, comma-separated or a list
            (simple, simple_w_condition, comparison, multi-hop, ...).
    """
    def convert_for(f):
        def convert(row: Row) -> ConflictQA:
            if "query" in row:
                qid = row.text("interaction_id")
                alt = row["alternative_answers"]
                if isinstance(alt, str):
                    try:
                        alt = json.loads(alt)
                    except json.JSONDecodeError:
                        raise BadField("alternative_answers", f"not a JSON list: {alt!r:.60}") from None
                answers = [row.text("answer").strip()] + as_strings(alt, "alternative_answers")
                question, files = row.text("query"), {"web": f}
            else:
                qid = row.text("question_id")
                answers, question, files = _answers(row), row.text("question"), {}
            return ConflictQA(id=qid, dataset="atomr_crag", question=question, answers=answers,
                              source_ids=[qid],
                              extra={"category": row.text("question_type"), "domain": row.get("domain"),
                                     "query_time": row.get("query_time"), "source_files": files})
        return convert

    return _finish("crag", _load("crag", path, convert_for), path, limit, shuffle, seed, category)


def atomr_blendqa(path: str | None = None, category: str | list[str] | None = None, limit: int | None = None,
                  shuffle: bool = False, seed: int = 0):
    """BlendQA (all three files, or one file given by ``path``).

    Args:
        category: keep ``KG-Web``, ``KG-Text`` and/or ``Text-Web`` questions (comma-separated or a list).
    """
    files = [str(f) for f in _files("blendqa", path)]

    def convert_for(f):
        def convert(row: Row) -> ConflictQA:
            qtype = row.text("type")
            if qtype not in BLENDQA_CATEGORY:
                raise BadField("type", f"unknown BlendQA type {qtype!r}; expected one of {sorted(BLENDQA_CATEGORY)}")
            rid = f"{qtype}-{row.id('index')}"
            return ConflictQA(id=rid, dataset="atomr_blendqa", question=row.text("question"),
                              answers=_answers(row), source_ids=[rid],
                              extra={"category": BLENDQA_CATEGORY[qtype], "type": qtype,
                                     "entity": row.get("entity"), "source_files": {"text": files, "kg": files}})
        return convert

    records = _load("blendqa", path, convert_for, files)
    return _finish("blendqa", records, path, limit, shuffle, seed, category)
