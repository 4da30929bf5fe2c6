"""Conflict Exposure parsing, expansion, annotation, rewriting, and scripted runs of every method."""

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.plugins.conflict_exposure.expansion import expand, information_expansion
from conflict_eval.plugins.conflict_exposure.parse import (
    format_triplets,
    parse_question_list,
    parse_triplets,
)
from conflict_eval.plugins.conflict_exposure.prompts import (
    DETECT_TEMPLATE,
    EXTRACT_TEMPLATE,
    NO_CONFLICT_ANNOTATION,
    SPLIT_TEMPLATE,
)
from conflict_eval.plugins.conflict_exposure.solver import annotate
from conflict_eval.scorers.conflict_exposure.store import ConflictExposureStore
from conflict_eval.retrieval import Hit
from conflict_eval.testing import scripted_model

from .conftest import TARGET

# ---------------------------------------------------------------- parsing


@pytest.mark.parametrize("reply,triplets,rejected", [
    ("Sure! Here are the relations:\n[(Paris, capital of, France), (Berlin, capital of, Germany)]\nHope this helps.",
     [("Paris", "capital of", "France"), ("Berlin", "capital of", "Germany")], 0),
    # 4 elements that split more than one way, with no known relation to decide: a counted
    # failure, never a guessed triplet (issue 42 item 3; it was (c, d, "e, f") under issue 28)
    ("[(a, b), (c, d, e, f), (g, h, i)]", [("g", "h", "i")], 2),
    ('[("Smith, John", "born in", \'1950\')]', [("Smith, John", "born in", "1950")], 0),
    ("[[(a, b, c)], ((d, e, f))]", [("a", "b", "c"), ("d", "e", "f")], 0),
    ("[(Paris (France), capital of, France)]", [("Paris (France)", "capital of", "France")], 0),
    ("(K. A. Applegate's, wrote, Animorphs) and (x, , z)", [("K. A. Applegate's", "wrote", "Animorphs")], 1),
    ("no list at all", [], 0),
    ("[(a, b, c), (d, e", [("a", "b", "c")], 0),  # cut at the token limit: its complete items count
])
def test_parse_triplets_messy(reply, triplets, rejected):
    parsed = parse_triplets(reply)
    assert parsed.triplets == triplets
    assert len(parsed.rejected) == rejected


def test_triplet_parse_failure_reasons():
    assert parse_triplets("nothing").reason == "no bracketed item"
    assert parse_triplets("[(a, b)]").reason == "no 3-element item (1 rejected)"
    assert parse_triplets("[(a, b)]").rejected == ["2 element(s): (a, b)"]


def test_parse_question_list():
    assert parse_question_list('You should know: ["Who is A?", "Where is B?", "Who is A?"]').questions == [
        "Who is A?", "Where is B?"]
    assert parse_question_list("[question1, question2]").questions == ["question1", "question2"]
    lines = parse_question_list("- Who is A?\n- Where is B?\nThat is all.")
    assert (lines.questions, lines.method) == (["Who is A?", "Where is B?"], "lines")
    bad = parse_question_list("I do not know.")
    assert not bad.ok and bad.reason == "no [..] list and no line ending in '?'"


def test_format_triplets_is_the_appendix_c_list():
    assert format_triplets([("a", "r", "b"), ("c", "s", "d")]) == "[(a, r, b), (c, s, d)]"

# ---------------------------------------------------------------- expansion


class FakeRetriever:
    """Fixed rankings per query (scores 1.0, 0.9, ... unless given)."""

    def __init__(self, rankings):
        self.rankings = rankings
        self.calls = []

    def search(self, query, k=5):
        return self.search_many([query], k)[0]

    def search_many(self, queries, k=5):
        self.calls.append((list(queries), k))
        out = []
        for q in queries:
            ranked = self.rankings[q][:k]
            out.append([Hit(id=i if isinstance(i, str) else i[0], text=f"text {i}", title=None,
                            score=(1.0 - 0.1 * r) if isinstance(i, str) else i[1], rank=r + 1)
                        for r, i in enumerate(ranked)])
        return out


def test_expand_unions_by_best_score():
    r = FakeRetriever({"a": [("x", 0.5), ("y", 0.4)], "b": [("y", 0.9), ("z", 0.1)]})
    assert [h.id for h in expand(r, ["a", "b"], 2)] == ["y", "x", "z"]
    assert [h.score for h in expand(r, ["a", "b"], 2)] == [0.9, 0.5, 0.1]


def test_algorithm_1_counts_and_deduplication():
    # k=2, n=4: n/2 = 2 new documents each from rewriting and splitting, m = k + n/2 = 4.
    r = FakeRetriever({
        "q": ["d1", "d2", "d3"],
        "rw": ["d1", "d3", "d4", "d5", "d9"],   # minus D -> d3, d4, d5 -> top 2: d3, d4
        "s1": [("d2", 0.95), ("d4", 0.9), ("d6", 0.8), ("d7", 0.2)],
        "s2": [("d8", 0.5), ("d6", 0.85)],       # union by best: d2 .95, d4 .9, d6 .85, d8 .5, d7 .2
    })
    d = information_expansion(r, "q", k=2, n=4, rewrites=["rw"], splits=["s1", "s2"])
    # split top 2 after removing D = {d1, d2}: d4 (already from rewriting, dropped) and d6
    assert d.ids == ["d1", "d2", "d3", "d4", "d6"]
    assert d.source == {"d1": "original", "d2": "original", "d3": "rewrite", "d4": "rewrite", "d6": "split"}
    assert r.calls == [(["q"], 2), (["rw"], 4), (["s1", "s2"], 4)]


def test_expansion_without_split_questions():
    r = FakeRetriever({"q": ["d1", "d2"], "rw": ["d1", "d5"]})
    d = information_expansion(r, "q", k=2, n=10, rewrites=["rw"], splits=[])
    assert d.ids == ["d1", "d2", "d5"]

# ---------------------------------------------------------------- annotation


def test_annotation_placement():
    docs = [Hit("a", "Animorphs is a series.", None, 1, 1), Hit("b", "Goosebumps is the series.", "T", 1, 2),
            Hit("c", "Unrelated.", None, 1, 3)]
    triplets = {"a": [("Animorphs", "is", "series")], "b": [("Goosebumps", "is", "series"), ("x", "y", "z")],
                "c": []}
    conflicts = [('"goosebumps"', "IS", "series."), ("not", "in any", "document")]
    out, notes = annotate(docs, triplets, conflicts)
    assert notes["b"] == ('[Conflict notice: this document contains knowledge that conflicts with other '
                          'documents: ("goosebumps", IS, series.). It may be wrong.]')
    assert notes["a"] == notes["c"] == NO_CONFLICT_ANNOTATION
    assert [d.text for d in out] == [f"{notes['a']} Animorphs is a series.",
                                     f"{notes['b']} Goosebumps is the series.", f"{notes['c']} Unrelated."]
    assert out[1].title == "T"

# ---------------------------------------------------------------- rewriting


def test_rewrite_with_minilm_token_embeddings():
    from conflict_eval.plugins.conflict_exposure.rewrite import default_rewriter

    rw = default_rewriter()
    assert rw.neighbour("nationality") == "nationalities"
    assert rw.neighbour("the") is None  # stop word
    assert rw.neighbour("derrickson") is None  # not a whole-word token
    # capitalised names after the first word and stop words are kept
    assert rw.rewrite("Were Scott Derrickson and Ed Wood of the same nationality?") == (
        "Were Scott Derrickson and Ed Wood of the same nationalities?")
    assert rw.rewrite("Which film was released first?").split()[1] in ("films", "movie")

# ---------------------------------------------------------------- scripted runs


def _extract_reply(prompt):
    return "[(series, is, Goosebumps), (half, item)]" if TARGET in prompt else "[(series, is, Animorphs)]"


def ce_reply(prompt):
    if prompt.startswith("If I want to know"):
        return '["Who wrote Animorphs?", "What are companion books?"]'
    if prompt.startswith("List all relations in"):
        return _extract_reply(prompt)
    if prompt.startswith("List all conflict relations in"):
        return "Conflicts: [(series, is, Goosebumps)]"
    if prompt.startswith("Question:"):
        return "No"
    raise AssertionError(prompt[:80])


def _run(small_kb, log_dir, reply, **task_args):
    model = scripted_model(reply)
    [log] = inspect_eval("conflict_eval/conflict_exposure",
                         task_args={"path": str(small_kb), "retriever": "bm25", **task_args},
                         model=model, limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    return log.samples[0], [c[-1].text for c in model.script.calls]


def test_conflict_exposure_full_run(small_kb, log_dir):
    sample, prompts = _run(small_kb, log_dir, ce_reply)
    store = sample.store_as(ConflictExposureStore)
    question = sample.metadata["question"]
    ids = list(store.doc_sources)
    assert 5 < len(ids) <= 15
    assert list(store.doc_sources.values())[:5] == ["original"] * 5
    assert store.split_questions == ["Who wrote Animorphs?", "What are companion books?"]
    assert len(store.rewritten_queries) == 1 and store.rewritten_queries[0] != question
    # calls: split, one extraction per document, one detection, the answer
    assert len(prompts) == 1 + len(ids) + 1 + 1 == store.model_calls
    assert prompts[0] == SPLIT_TEMPLATE.format(question=question)
    assert all(p.startswith('List all relations in "') for p in prompts[1:-2])
    polluted = [i for i in ids if store.triplets[i] == [["series", "is", "Goosebumps"]]]
    assert polluted, "the injected documents should be retrieved for their own question"
    assert all(store.rejected_items[i] == ["2 element(s): (half, item)"] for i in polluted)
    n_clean = len(ids) - len(polluted)
    assert prompts[-2] == DETECT_TEMPLATE.format(relations_list=format_triplets(
        [tuple(t) for i in ids for t in store.triplets[i]]))
    assert prompts[-2].count("(series, is, Animorphs)") == n_clean
    assert store.conflicts == [["series", "is", "Goosebumps"]]
    final = prompts[-1]
    assert final.startswith(f"Question: {question}\nDocuments: [1] ")
    assert final.endswith('Is "Animorphs" the answer to the question? (Yes or No)')
    assert final.count("conflicts with other documents: (series, is, Goosebumps)") == len(polluted)
    assert final.count(NO_CONFLICT_ANNOTATION) == n_clean
    assert sample.scores["yes_no_accuracy"].value == {"accuracy": 0, "parse_failure": 0}
    assert sample.scores["knowledge_recall"].metadata["retrieved_ids"] == ids


@pytest.mark.parametrize("options,expected_calls", [
    ({"exposure": False}, "split+answer"),
    ({"expansion": "none", "exposure": False}, "answer"),
    ({"expansion": "none"}, "extract*5+detect+answer"),
    ({"expansion": "reans", "exposure": False}, "reans+answer"),
    ({"expansion": "reknow", "exposure": False}, "answer"),
])
def test_variants_take_exactly_their_calls(small_kb, log_dir, options, expected_calls):
    def reply(prompt):
        if prompt.endswith("Answer the question with a short answer (a word or phrase) only."):
            return "Goosebumps"
        return ce_reply(prompt)

    sample, prompts = _run(small_kb, log_dir, reply, **options)
    store = sample.store_as(ConflictExposureStore)
    n_docs = len(store.doc_sources)
    kinds = []
    for p in prompts:
        kinds.append("split" if p.startswith("If I want") else "extract" if p.startswith("List all relations")
                     else "detect" if p.startswith("List all conflict") else
                     "reans" if p.endswith("(a word or phrase) only.") else "answer")
    compact = "+".join(f"{k}*{kinds.count(k)}" if kinds.count(k) > 1 else k for k in dict.fromkeys(kinds))
    assert compact == expected_calls
    if options.get("expansion") == "none":
        assert n_docs == 5
    if options.get("expansion") == "reans":
        assert store.reans_answer == "Goosebumps"
        assert sample.store_as(ConflictExposureStore).doc_sources and "reans" in store.doc_sources.values()
    if options.get("expansion") == "reknow":
        assert n_docs == 15 and list(store.doc_sources.values()).count("reknow") == 10


# RobustRAG: tests/conflict_exposure/test_robustrag.py


def test_astuterag_calls(small_kb, log_dir):
    def reply(prompt):
        if prompt.startswith("Generate 1 short document"):
            return "Animorphs is a science fantasy series by K. A. Applegate."
        if prompt.startswith("Consolidate the information"):
            return "Consolidated: [memory + retrieval] Animorphs series."
        return "Yes"

    sample, prompts = _run(small_kb, log_dir, reply, method="astuterag", iterations=2)
    assert len(prompts) == 4  # internal, two consolidation rounds, answer
    assert "[1] (memory) Animorphs is a science fantasy series" in prompts[1]
    assert prompts[1].count("(retrieval)") == 5
    assert "Last consolidated context:\n(none yet: this is the first round)" in prompts[1]
    assert "Last consolidated context:\nConsolidated: [memory + retrieval]" in prompts[2]
    assert prompts[3].startswith(f"Question: {sample.metadata['question']}\nDocuments: Consolidated:")
    assert sample.scores["yes_no_accuracy"].value["accuracy"] == 1


def test_standard_rag_one_call(small_kb, log_dir):
    sample, prompts = _run(small_kb, log_dir, lambda p: "Yes", method="standard_rag", k=3)
    assert len(prompts) == 1 and prompts[0].count("\n[") == 2  # documents [1] on the Documents line, [2], [3]
    assert len(sample.scores["knowledge_recall"].metadata["retrieved_ids"]) == 3


def test_bad_options_fail_before_running(small_kb):
    from conflict_eval.plugins.conflict_exposure.solver import conflict_exposure
    from conflict_eval.plugins.robustrag.solver import robustrag

    with pytest.raises(ValueError, match="unknown expansion"):
        conflict_exposure(expansion="more")
    with pytest.raises(ValueError, match="unknown retriever"):
        conflict_exposure(retriever="tfidf")
    with pytest.raises(ValueError, match="unknown aggregation"):
        robustrag(aggregation="vote")


@pytest.mark.slow
def test_end_to_end_offline_model_dense(hotpot_rows, tmp_path, log_dir):
    """The real offline model on one polluted question, dense retrieval, every step run. The KB
    is built from that question's record alone: 14 documents for MiniLM to encode, against
    ``small_kb``'s 51 (four records' paragraphs), which the run does not need."""
    import json

    from conflict_eval.plugins.polluted_kb.build import build_polluted_kb
    from conflict_eval.kb.format import save_kb

    from .conftest import builder_reply

    source = tmp_path / "hotpot1.jsonl"
    source.write_text(json.dumps(hotpot_rows[0]) + "\n", encoding="utf-8")
    kb = save_kb(build_polluted_kb(source, scripted_model(builder_reply), limit=1), tmp_path / "kb1.json")
    [log] = inspect_eval("conflict_eval/conflict_exposure", task_args={"path": str(kb), "k": 2, "n": 2},
                         model="conflict_eval/smollm2", limit=1, max_tokens=12, log_dir=log_dir,
                         display="none")
    assert log.status == "success", log.error
    kb_block = log.eval.metadata["retrieval"]["sources"]["polluted_kb"]
    assert (kb_block["backend"], kb_block["passages"]) == ("dense (in memory)", 14)
    sample = log.samples[0]
    store = sample.store_as(ConflictExposureStore)
    assert 2 <= len(store.doc_sources) <= 4
    assert store.model_calls == 1 + len(store.doc_sources) + (1 if any(store.triplets.values()) else 0) + 1
    assert set(store.annotations) == set(store.doc_sources)
    assert sample.scores["yes_no_accuracy"].value["parse_failure"] in (0, 1)
    assert sample.scores["knowledge_recall"].value in (0, 1)
