"""Issue 27 Fidelity 1: build-polluted-kb takes any corpus built with
`conflict-eval index build` (or a corpus file it reads, e.g. BEIR HotpotQA's
corpus.jsonl shape), mapping the questions' supporting paragraphs into it."""

import json

from conflict_eval.plugins.polluted_kb.build import build_polluted_kb, build_report
from conflict_eval.kb.format import load_kb, save_kb
from conflict_eval.testing import scripted_model

from .conftest import builder_reply


def _beir_corpus(hotpot_rows, path, *, drop_text_of=None, drop=None):
    """A BEIR-shaped corpus (``_id``, ``title``, ``text``) with one passage per
    title, from real HotpotQA paragraphs (+ every other record's paragraphs)."""
    seen, lines = set(), []
    for r in hotpot_rows:
        for c in r["contexts"]:
            if c["title"] in seen or c["title"] == drop:
                continue
            seen.add(c["title"])
            text = c["paragraph_text"]
            if c["title"] == drop_text_of:
                text = text + " (BEIR's copy of this article's first paragraph differs.)"
            lines.append(json.dumps({"_id": f"beir{len(lines)}", "title": c["title"], "text": text,
                                     "metadata": {}}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_kb_from_an_index_directory(hotpot_rows, small_source, tmp_path):
    from conflict_eval.cli import main

    corpus = _beir_corpus(hotpot_rows, tmp_path / "corpus.jsonl")
    assert main(["index", "build", str(corpus), "--out", str(tmp_path / "idx"), "--backend", "bm25"]) == 0
    kb = build_polluted_kb(small_source, scripted_model(builder_reply), limit=2, corpus=tmp_path / "idx")
    n_passages = sum(1 for _ in corpus.open())
    assert kb.meta.corpus["kind"] == "index" and kb.meta.corpus["passages"] == n_passages
    assert kb.meta.corpus["supporting_added"] == 0 and kb.meta.corpus["supporting_by_title"] == 0
    clean = kb.corpus("none")
    assert len(clean) == n_passages
    by_id = {d.id: d for d in clean}
    for q, row in zip(kb.questions, hotpot_rows):
        gold_titles = {c["title"] for c in row["contexts"] if c["is_supporting"]}
        assert {by_id[i].title for i in q.supporting_ids} == gold_titles
    # pollution still works on the mapped paragraphs (Type I copies a supporting passage)
    assert any(d.origin == "I" and d.derived_from in by_id for d in kb.documents)
    path = save_kb(kb, tmp_path / "kb.json")
    assert load_kb(path).meta.corpus == kb.meta.corpus


def test_kb_from_a_corpus_file_maps_by_title_and_adds_missing(hotpot_rows, small_source, tmp_path, capsys,
                                                               monkeypatch):
    first = hotpot_rows[0]
    gold = [c["title"] for c in first["contexts"] if c["is_supporting"]]
    corpus = _beir_corpus(hotpot_rows, tmp_path / "corpus.jsonl", drop_text_of=gold[0], drop=gold[1])
    kb = build_polluted_kb(small_source, scripted_model(builder_reply), limit=1, corpus=corpus)
    c = kb.meta.corpus
    assert c["kind"] == "file" and len(c["sha256"]) == 64
    # first question: one gold paragraph found by title (text differs), one absent and added;
    # the other three questions' gold paragraphs are found by text
    n_gold = sum(c_["is_supporting"] for r in hotpot_rows for c_ in r["contexts"])
    assert (c["supporting_by_title"], c["supporting_added"], c["supporting_by_text"]) == (1, 1, n_gold - 2)
    q = kb.questions[0]
    titles = [kb.document(i).title for i in q.supporting_ids]
    assert sorted(titles) == sorted(gold)
    assert build_report(kb)["clean_documents"] == c["passages"] + 1

    from conflict_eval.cli import main
    from conflict_eval.plugins.polluted_kb import build

    real = build.build_polluted_kb
    monkeypatch.setattr(build, "build_polluted_kb",
                        lambda source, model, **kw: real(source, scripted_model(builder_reply), **kw))
    assert main(["build-polluted-kb", "--source", str(small_source), "--corpus", str(corpus), "--limit", "1",
                 "--out", str(tmp_path / "kb2.json")]) == 0
    out = capsys.readouterr().out
    assert f"clean corpus from file corpus.jsonl ({c['passages']} passages)" in out
    assert "by title 1, added 1" in out
