"""TruthfulQA binary choice (Jan-2025 version) with retrieved documents: the
``truthfulqa_binary`` dataset (:func:`truthfulqa_binary`), used by
``conflict_eval/truthfulqa_conflict`` through the registry.

Rows: ``Question``, ``Best Answer`` (correct option), ``Best Incorrect Answer``
(distractor), ``Correct Answers`` / ``Incorrect Answers`` ("; "-separated).
The A/B order is randomised per question with ``random.Random(f"{seed}|{i}")``
(``i`` = row index), so it is reproducible and independent of ``--limit``.

Documents (the paper uses the top 10 Google results; offline we retrieve the
top ``k`` from a local corpus with a pluggable retriever,
:func:`conflict_eval.retrieval.make_retriever`). The corpus, built by
:func:`build_corpus`, is:

1. the reference statements of the questions in the file -- each entry of
   ``Correct Answers`` and ``Incorrect Answers`` as its own document. These
   play the role of web pages asserting the truth *and* the misconception,
   which is the conflict the case study is about. By default
   (``statements="others"``) a question never retrieves its *own* answer-key
   statements (they would hand it the gold Best Answer); ``"all"`` keeps them
   (the earlier behaviour), ``"none"`` drops every statement; and
2. background passages from other real corpora (``background`` files:
   HotpotQA/IRCoT Wikipedia paragraphs, CRAG web search snippets, or any
   ``{id, text, title}`` JSONL), so retrieval is not restricted to answer
   texts: without them every retrieved document would be an option
   paraphrase (too clean, and too few per question), unlike web results.

The ``Source`` URL column is a link only (no passage text), so it is not used.
"""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path

from conflict_eval.records import (
    ArgumentError,
    ConflictQA,
    Passage,
    Row,
    TaskArgument,
    convert_rows,
    read_json_or_jsonl,
)
from conflict_eval.scorers.conflictscore.truthfulqa import key_entity, mentions

logger = logging.getLogger(__name__)


def _statements(value: str) -> list[str]:
    return [s.strip() for s in value.split(";") if s.strip()]


STATEMENTS = ("others", "all", "none")


def build_corpus(truthfulqa_path: str | Path, background: list[str] | None = None,
                 statements: str = "all") -> list[dict]:
    """Corpus documents ``{id, text, title, source}`` (see module docstring); duplicates dropped.

    ``statements="none"`` leaves the answer-key statements out; otherwise
    each statement document carries ``owners``: the questions whose answer
    key contains it (used by :func:`retrieve` to exclude a question's own).
    """
    if statements not in STATEMENTS:
        raise ValueError(f"statements={statements!r}; expected one of {', '.join(STATEMENTS)}")
    docs: list[dict] = []
    seen: dict[str, dict] = {}

    def add(doc_id: str, text: str, title: str | None, source: str, owner: str | None = None):
        text = " ".join(text.split())
        if not text:
            return
        if text not in seen:
            seen[text] = {"id": doc_id, "text": text, "title": title, "source": source}
            docs.append(seen[text])
        if owner is not None:
            seen[text].setdefault("owners", [])
            if owner not in seen[text]["owners"]:
                seen[text]["owners"].append(owner)

    for n, (_, row) in enumerate(read_json_or_jsonl(truthfulqa_path)):
        if isinstance(row, dict) and statements != "none":
            for kind in ("Correct Answers", "Incorrect Answers"):
                for m, s in enumerate(_statements(str(row.get(kind, "")))):
                    add(f"tqa{n}-{kind[0].lower()}{m}", s, None, "truthfulqa_statement", str(row.get("Question", "")))
    for path in background or []:
        from conflict_eval.retrieval import is_index_dir, is_url_spec

        if is_index_dir(path) or is_url_spec(path):
            raise ArgumentError(f"background={path!r} is an index or a search server: pass it as ",
                                TaskArgument("corpus", path), " (a separate corpus); background= takes corpus files "
                                "merged with the statements")
        with open(path, encoding="utf-8-sig") as f:
            for n, line in enumerate(f):
                if not line.strip():
                    continue
                row = json.loads(line)
                if "contexts" in row:  # HotpotQA / IRCoT format
                    for c in row["contexts"]:
                        add(f"{Path(path).parent.name}:{n}:{c.get('id')}", c["paragraph_text"], c.get("title"), "wikipedia")
                elif "search_results" in row:  # CRAG format
                    for m, r in enumerate(row["search_results"]):
                        add(f"crag:{n}:{m}", r.get("page_snippet") or "", r.get("page_name"), "web")
                elif "text" in row:
                    add(str(row.get("id", f"{path}:{n}")), row["text"], row.get("title"), "corpus")
                else:
                    raise ValueError(f"{path} line {n + 1}: unknown corpus format (keys {sorted(row)})")
    return docs


def truthfulqa_records(path: str | Path, documents: dict[str, list[dict]] | None = None,
                       seed: int = 0) -> list[ConflictQA]:
    """Binary-choice records; ``documents[question]`` are the retrieved
    documents (``{id, text, title, source}``) of each question."""

    def convert(row: Row) -> ConflictQA:
        i = len(records_seen)
        records_seen.append(1)
        question, best, wrong = row.text("Question"), row.text("Best Answer"), row.text("Best Incorrect Answer")
        correct_first = random.Random(f"{seed}|{i}").random() < 0.5
        options = [best, wrong] if correct_first else [wrong, best]
        evidence = [Passage(text=d["text"], title=d.get("title"), id=d["id"], source=d.get("source"))
                    for d in (documents or {}).get(question, [])]
        return ConflictQA(
            id=f"truthfulqa-{i}", dataset="truthfulqa_binary", question=question, options=options,
            answers=[best], gold_option="A" if correct_first else "B",
            conflict_answer=wrong, conflict_option="B" if correct_first else "A",
            evidence=evidence, conflict_type="misinformation", setting="rag",
            source_ids=[str(i)], extra={"category": row.get("Category"), "type": row.get("Type")},
        )

    records_seen: list[int] = []
    return convert_rows("truthfulqa_binary", read_json_or_jsonl(path), convert, file=path)


def retrieve(questions: list[str], corpus: list[dict], retriever: str = "bm25", k: int = 10,
             exclude_own: bool = False) -> dict[str, list[dict]]:
    """Top-``k`` documents per question from ``corpus`` (indexed in memory).

    ``exclude_own``: a statement from the question's own answer key
    (``owners``) is never returned; the next best documents take its place.
    """
    from conflict_eval.retrieval import make_retriever

    if not corpus:
        raise ValueError("truthfulqa_conflict: the retrieval corpus is empty (statements=none and no "
                         "background/corpus given)")
    r = make_retriever(retriever)
    r.index([{k_: d[k_] for k_ in ("id", "text", "title")} for d in corpus])
    by_id = {d["id"]: d for d in corpus}
    own = {q: 0 for q in questions}
    if exclude_own:
        for d in corpus:
            for q in d.get("owners", ()):
                if q in own:
                    own[q] += 1
    depth = k + max(own.values(), default=0)
    hits = r.search_many(questions, k=min(depth, len(corpus)))
    out = {}
    for q, hs in zip(questions, hits):
        docs = [by_id[h.id] for h in hs]
        if exclude_own:
            docs = [d for d in docs if q not in d.get("owners", ())]
        out[q] = docs[:k]
    return out


def retrieve_from(questions: list[str], spec: str, k: int = 10, retriever: str = "bm25") -> dict[str, list[dict]]:
    """Top-``k`` documents per question from a separate corpus: an index
    directory, a corpus file or a search server (``conflict_eval.retrieval.open_corpus``)."""
    from conflict_eval.retrieval import open_corpus

    searcher = open_corpus(spec, retriever)
    hits = searcher.search_many(questions, k)
    return {q: [{"id": h.id, "text": h.text, "title": h.title, "source": "corpus"} for h in hs]
            for q, hs in zip(questions, hits)}


# --------------------------------------------------------------------------- search results from a file

#: Where a saved search response keeps its result list (our ``results``; Google via
#: SerpAPI ``organic_results``, Serper ``organic``; CRAG ``search_results``).
RESULT_LISTS = ("results", "organic_results", "organic", "search_results")
#: Where a result keeps its text (first non-empty string wins).
TEXT_FIELDS = ("text", "snippet", "description", "content", "page_snippet", "body")
TITLE_FIELDS = ("title", "name", "page_name")
URL_FIELDS = ("url", "link", "page_url")


def _norm_question(q: str) -> str:
    return " ".join(q.split()).casefold()


def search_results_file(path: str | Path, k: int = 10) -> dict[str, list[dict]]:
    """Per-question documents saved from a search API: ``{normalised question:
    [{id, text, title, url, source}]}`` (the first ``k`` results, in order).

    One JSON object per line (or a JSON array), shaped like what a search API
    returns with the question added::

        {"question": "<the TruthfulQA Question, verbatim>",
         "results": [{"title": "...", "url": "...", "snippet": "..."}, ...]}

    The list may be named ``results``, ``organic_results`` (SerpAPI),
    ``organic`` (Serper) or ``search_results``; a result's text is its first
    non-empty ``text`` / ``snippet`` / ``description`` / ``content`` /
    ``page_snippet`` / ``body``; ``title``/``name`` and ``url``/``link`` are
    optional. Bad records are reported together, naming the file, the record
    and the field.
    """
    from conflict_eval.records import BadField, MissingField

    out: dict[str, list[dict]] = {}

    def convert(row: Row):
        question = row.text("question")
        key = next((f for f in RESULT_LISTS if f in row), None)
        if key is None:
            raise MissingField("results", f"field is missing (also looked for {', '.join(RESULT_LISTS[1:])})")
        docs = []
        for n, r in enumerate(row.list(key)):
            if not isinstance(r, dict):
                raise BadField(f"{key}[{n}]", f"expected an object, got {type(r).__name__}")
            text = next((r[f] for f in TEXT_FIELDS if isinstance(r.get(f), str) and r[f].strip()), None)
            if text is None:
                raise BadField(f"{key}[{n}]", f"no text: expected one of {', '.join(TEXT_FIELDS)} as a non-empty string")
            title = next((r[f] for f in TITLE_FIELDS if isinstance(r.get(f), str) and r[f].strip()), None)
            url = next((r[f] for f in URL_FIELDS if isinstance(r.get(f), str) and r[f].strip()), None)
            docs.append({"id": url or f"{len(out)}-{n}", "text": " ".join(text.split()), "title": title,
                         "url": url, "source": "search_results_file"})
        if _norm_question(question) in out:
            raise BadField("question", "the same question appears in an earlier record")
        out[_norm_question(question)] = docs[:k]
        return None

    convert_rows("truthfulqa_conflict documents", read_json_or_jsonl(path), convert, file=path, id_field="question")
    return out


# --------------------------------------------------------------------------- key entity

def key_entity_counts(documents: dict[str, list[dict]]) -> dict:
    """Per run: how many retrieved documents mention their question's key entity."""
    per_question = [(q, sum(mentions(d["text"] + " " + (d.get("title") or ""), key_entity(q)) for d in docs), len(docs))
                    for q, docs in documents.items()]
    return {"documents": sum(n for _, _, n in per_question),
            "mentioning_key_entity": sum(m for _, m, _ in per_question),
            "questions": len(per_question),
            "questions_with_no_document_mentioning_it": sum(1 for _, m, n in per_question if m == 0),
            "how": "key entity = longest capitalised run after the first word (joined across of/the/and), "
                   "else the longest content word not ending in -ed/-ing; a document mentions it if every "
                   "content word of it starts a word of the title or text"}


# --------------------------------------------------------------------------- the registered dataset

def truthfulqa_binary(
    path: str | None = None,
    background: list[str] | None = None,
    corpus: str | None = None,
    statements: str | None = None,
    documents: str | None = None,
    retriever: str = "bm25",
    k: int = 10,
    seed: int = 0,
    limit: int | None = None,
):
    """TruthfulQA binary choice, each question with its retrieved documents.

    Args:
        path: TruthfulQA binary-choice file (JSONL or JSON rows of the
            Jan-2025 CSV); required (e.g. ``../shared/data/truthfulqa_binary/sample.jsonl``):
            no upstream revision is pinned (the module README says why).
        background: extra corpus files (see :func:`build_corpus`).
        corpus: a separate retrieval corpus instead of the file's statements:
            an index directory (``conflict-eval index build``), a corpus file or
            a search server (``es+http://...``, ``colbert+http://...``).
        statements: the file's answer-key statements in the corpus: ``others``
            (default without ``corpus``: other questions' statements, never the
            question's own), ``all`` (own answer key included), ``none``
            (default with ``corpus`` or ``documents``).
        documents: per-question search results saved from a search API
            (:func:`search_results_file`), used as each question's documents;
            questions without a record are left out and counted.
        retriever: ``bm25`` or ``dense`` (``conflict_eval.retrieval``).
        k: documents per question (the paper: top 10).
        seed: A/B order seed.
        limit: keep the first ``limit`` questions (after retrieval).

    The dataset's ``provenance`` (eval metadata) holds ``retrieval`` (what the
    documents are, with a ``note`` on how far the setting is from the
    paper's), ``dropped_records`` and ``dropped_total``.
    """
    from conflict_eval.records import DataNeeded, build_dataset, check_file

    if not path:
        raise DataNeeded("truthfulqa_conflict", "required", "a TruthfulQA binary-choice JSONL file")
    check_file(path, "truthfulqa_binary")
    if isinstance(background, str):
        background = [background]
    if documents and (corpus or background or statements):
        raise ValueError("documents= gives each question its own documents: it cannot be combined with "
                         "corpus=, background= or statements=")
    statements = statements or ("none" if corpus or documents else "others")
    if statements not in STATEMENTS:
        raise ValueError(f"statements={statements!r}; expected one of {', '.join(STATEMENTS)}")
    if corpus and (statements != "none" or background):
        raise ValueError("corpus= is a separate corpus: it cannot be combined with background= or "
                         "statements=others|all (index the statements into it instead)")
    records = truthfulqa_records(path, seed=seed)
    questions = [r.question for r in records]
    dropped: dict[str, int] = {}
    if documents:
        saved = search_results_file(documents, k)
        found = {q: saved[_norm_question(q)] for q in questions if _norm_question(q) in saved}
        if not found:
            raise ValueError(f"truthfulqa_conflict: no question of {path} has a record in documents={documents} "
                             "(the 'question' field must be the TruthfulQA Question)")
        if len(found) < len(questions):
            dropped["no record in the documents file"] = len(questions) - len(found)
            logger.warning("truthfulqa_conflict: %d question(s) of %s have no record in %s: left out",
                           len(questions) - len(found), path, documents)
        unused = len(saved) - len({_norm_question(q) for q in found})
        by_question = found
        retrieval = _retrieval_block(documents, None, statements, retriever, path, search_file=True,
                                     unmatched_records=unused)
    elif corpus:
        by_question = retrieve_from(questions, corpus, k, retriever)
        retrieval = _retrieval_block(corpus, None, statements, retriever, path)
    else:
        docs = build_corpus(path, background, statements)
        by_question = retrieve(questions, docs, retriever, k, exclude_own=statements == "others")
        retrieval = _retrieval_block(background, docs, statements, retriever, path)
    retrieval["key_entity_mentions"] = key_entity_counts(by_question)
    records = truthfulqa_records(path, by_question, seed=seed)
    if documents:
        records = [r for r in records if r.question in by_question]
    # named as the task's logs have always named it: `conflict-eval compare` refuses two logs whose
    # dataset names differ, so logs written before the loader became a dataset plugin still compare
    samples = build_dataset("truthfulqa_conflict", records, location=str(path), limit=limit)
    samples.provenance = {"retrieval": retrieval, "dropped_records": dropped, "dropped_total": sum(dropped.values())}
    return samples


#: The log's note for each setting: what the documents are, and that only
#: per-question web search results resemble the paper's setting.
PAPER_SETTING = ("The paper supplies the top 10 Google Search results per question (ConflictScore §6); ")
NOTES = {
    "others": PAPER_SETTING + "this offline default is NOT that setting: documents are retrieved from the "
              "answer-key statements of the OTHER questions in the evaluated file (each question's own "
              "statements excluded) plus any background passages, so they are often off-topic (see "
              "key_entity_mentions) and scores are not comparable with Tables 4-5.",
    "all": PAPER_SETTING + "this is NOT that setting: documents are retrieved from every answer-key statement "
           "of the evaluated file, the question's OWN statements included (its Best Answer can be retrieved "
           "verbatim), plus any background passages; scores are not comparable with Tables 4-5.",
    "none": PAPER_SETTING + "this is NOT that setting: documents are retrieved from a separate corpus (or only "
            "background passages) with no answer-key statements; scores are not comparable with Tables 4-5 "
            "unless that corpus holds per-question web results.",
    "search_file": PAPER_SETTING + "here each question's documents are the saved search results of "
                   "-T documents= (the first k per question); they match the paper's setting only if they "
                   "are the top 10 Google results.",
}


def _retrieval_block(spec, docs: list[dict] | None, statements: str, retriever: str, path: str,
                     search_file: bool = False, **extra) -> dict:
    """The ``retrieval`` eval-metadata block of this task (with a ``note``
    that matches the setting)."""
    from conflict_eval.retrieval import describe_source, open_corpus, retrieval_block

    answer_key = {"others": "other questions' statements only (own answer key excluded)",
                  "all": "every statement, the question's own answer key included",
                  "none": "no answer-key statements"}[statements]
    note = NOTES["search_file" if search_file else statements]
    if search_file:
        desc = {"corpus": str(spec), "passages": None, "backend": "per-question search results file"}
        return retrieval_block({"documents": desc}, {"documents": False}, dataset_files=[str(path)],
                               answer_key_statements=statements, answer_key=answer_key, note=note, **extra)
    if docs is None:
        desc = describe_source(open_corpus(spec, retriever))
    else:
        files = [str(path)] + [str(b) for b in spec or []]
        desc = {"corpus": ", ".join(files), "passages": len(docs), "backend": f"{retriever} (in memory)",
                "statement_documents": sum(1 for d in docs if d["source"] == "truthfulqa_statement")}
    return retrieval_block({"documents": desc}, {"documents": statements != "none"},
                           specs={"documents": spec if docs is None else None}, dataset_files=[str(path)],
                           answer_key_statements=statements, answer_key=answer_key, note=note, **extra)
