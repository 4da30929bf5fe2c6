"""Knowledge sources on real records (../shared/data) and the web API adapter on localhost."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from conflict_eval.retrieval.sources import (
    KGSource, SerpApiSource, SourceError, TextSource, TripleStore, WebPagesSource, html_to_text,
    kg_source, read_passages, text_source, web_source,
)


def first(path):
    return json.loads(path.open(encoding="utf-8").readline())


def test_text_source_over_all_hotpotqa_paragraphs(shared_data):
    path = shared_data / "hotpotqa_ircot" / "sample.jsonl"
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    distinct = {(c["title"], c["paragraph_text"]) for r in rows for c in r["contexts"]}
    docs = read_passages(path)
    assert len(docs) == len(distinct)  # every record's paragraphs, repeated ones once
    src = TextSource(path)
    row = rows[0]  # "What science fantasy young adult series ...?" -> Animorphs
    hits = src.search(row["question_text"], k=3)
    assert len(hits) == 3 and hits[0].title == "Animorphs"
    assert [h.rank for h in hits] == [1, 2, 3]


def test_text_source_musique_and_blendqa_long_answers(shared_data):
    mus = shared_data / "musique_hipporag" / "sample.jsonl"
    row = first(mus)
    support = [p for p in row["paragraphs"] if p["is_supporting"]][0]
    hits = TextSource(mus).search(support["title"] + " " + support["paragraph_text"][:200], k=1)
    assert hits[0].text == support["paragraph_text"]
    blend = TextSource(shared_data / "blendqa" / "sample.jsonl")
    [hit] = blend.search("where is the rachel maddow show broadcast from", k=1)
    assert hit.title == "The Rachel Maddow Show"
    assert hit.text.startswith("The Rachel Maddow Show is broadcast from Studio 3 - A at the NBC Studios")


def test_kg_source_from_blendqa_triples(shared_data):
    path = shared_data / "blendqa" / "sample.jsonl"
    kg = KGSource(path)
    # record type2_w2k 60: ["Q98382515", "stepparent", "Q10853588", "forward"], entity Kamala Harris
    hits = kg.search("Kamala Harris stepparent")
    assert hits[0].text == "Q98382515 | stepparent | Kamala Harris"  # relation match ranked first
    assert "Kamala Harris | instance of | human" in [h.text for h in hits]  # concepts
    # backward triple: ["Q555", "presenter", "Q3522402", "backward"] -> show --presenter--> Q555
    assert "the rachel maddow show | presenter | Q555" in [h.text for h in kg.search("The Rachel Maddow Show presenter")]
    # attribute fact: ["Q1316", "date of birth", {"type": "date", "value": "1937/4/28"}]
    assert "Saddam Hussein | date of birth | 1937/4/28" in [h.text for h in kg.search("Saddam Hussein date of birth")]
    assert kg.search("Nobody Known") == []
    assert kg_source(str(path)) is kg_source(str(path))  # cached per process


def test_triple_store_jsonl_and_bad_triples(tmp_path):
    # hand-written triples JSONL
    f = tmp_path / "kg.jsonl"
    f.write_text('{"head": "Q76", "relation": "child", "tail": "Q15070044", '
                 '"head_label": "Barack Obama", "tail_label": "Malia Obama"}\n')
    store = TripleStore.from_file(f)
    assert store.find_entities("barack obama") == ["Q76"]
    assert [h.text for h in KGSource(store).search("Barack Obama child")] == ["Barack Obama | child | Malia Obama"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"index": 0, "sub_source1": {"triples": [["Q1", "r", "Q2", "sideways"]], "concepts": []}}\n')
    with pytest.raises(SourceError, match=r"bad.jsonl: line 1 field sub_source1.triples: bad triple"):
        TripleStore.from_file(bad)


def test_web_pages_from_crag_search_results(shared_data):
    path = shared_data / "crag_example" / "sample.jsonl"
    src = WebPagesSource(path)
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    snippet = html_to_text(rows[1]["search_results"][2]["page_snippet"])
    [hit] = src.search(snippet, k=1)
    assert hit.text == snippet and hit.title == rows[1]["search_results"][2]["page_name"]
    assert web_source(pages=str(path)) is web_source(pages=str(path))


def test_source_factories_need_their_files():
    with pytest.raises(SourceError, match="text_corpus"):
        text_source(None)
    with pytest.raises(SourceError, match="kg_triples"):
        kg_source(None)
    with pytest.raises(SourceError, match="web_pages"):
        web_source()
    with pytest.raises(SourceError, match="no such file"):
        text_source("/nonexistent/corpus.jsonl")


class _Serp(BaseHTTPRequestHandler):
    def do_GET(self):  # SerpAPI-shaped reply
        body = json.dumps({"organic_results": [
            {"title": "Shakira - Wikipedia", "link": "https://x/1", "snippet": "Shakira is a Colombian singer."},
            {"title": "No snippet", "link": "https://x/2"},
            {"title": "Albums", "link": "https://x/3", "snippet": "Laundry Service (2001)."}]})
        self.server.paths.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


def test_serpapi_adapter_on_localhost(monkeypatch):
    server = HTTPServer(("127.0.0.1", 0), _Serp)
    server.paths = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("CONFLICT_EVAL_WEB_SEARCH_URL", f"http://127.0.0.1:{server.server_port}/search.json")
        monkeypatch.setenv("CONFLICT_EVAL_WEB_SEARCH_KEY", "test-key")
        src = web_source(api=True)
        hits = src.search("Shakira albums", k=3)
        assert [(h.title, h.text, h.rank) for h in hits] == [
            ("Shakira - Wikipedia", "Shakira is a Colombian singer.", 1), ("Albums", "Laundry Service (2001).", 2)]
        assert "q=Shakira+albums" in server.paths[0] and "api_key=test-key" in server.paths[0]
    finally:
        server.shutdown()


def test_serpapi_adapter_refuses_without_key_or_offline(monkeypatch):
    monkeypatch.delenv("CONFLICT_EVAL_WEB_SEARCH_KEY", raising=False)
    with pytest.raises(SourceError, match="CONFLICT_EVAL_WEB_SEARCH_KEY"):
        SerpApiSource()
    monkeypatch.setenv("CONFLICT_EVAL_WEB_SEARCH_KEY", "k")
    monkeypatch.delenv("CONFLICT_EVAL_WEB_SEARCH_URL", raising=False)
    with pytest.raises(SourceError, match="network access is disabled"):
        SerpApiSource()


async def test_a_query_matching_nothing_retrieves_nothing_and_the_operator_is_told(shared_data):
    """All-zero BM25 scores: no passages (before: the corpus's first 3 paragraphs)."""
    from conflict_eval.plugins.atomr.executor import Executor
    from conflict_eval.plugins.atomr.parse import parse_tree
    from conflict_eval.testing import scripted_model

    path = shared_data / "hotpotqa_ircot" / "sample.jsonl"
    src = TextSource(path)
    assert src.search("Zqxjv Wkrpt", k=3) == []
    unknown = "So the answer is: (1) Paraphrase Answer: Unknown; (2) Answer List: []"
    model = scripted_model([unknown, unknown])  # Search says Unknown; then Direct RAG (Figure 9)
    ex = Executor(model, {"text": src})
    await ex.run(parse_tree('{"Who is Zqxjv?": "Search(\\"Zqxjv\\", \\"Wkrpt\\")"}'))
    for call in model.script.calls:
        assert "(no knowledge retrieved)" in call[-1].text
    assert ex.records[0]["passages"] == {"text": []}


def test_bm25_folds_accents_in_a_real_corpus(shared_data):
    """A query without accents finds the passage written with them, and back."""
    path = shared_data / "hotpotqa_ircot" / "sample.jsonl"
    docs = read_passages(path)
    accented = next(d for d in docs if any(c in d.title for c in "éèöüáíñ") if d.title)
    import unicodedata

    plain = "".join(c for c in unicodedata.normalize("NFKD", accented.title) if not unicodedata.combining(c))
    assert plain != accented.title
    hits = TextSource(path).search(plain, k=3)
    assert accented.title in [h.title for h in hits]


def test_crag_default_web_source_without_pages_names_the_text_alternative(shared_data):
    """AtomR's CRAG file has no search results: the default ``web`` source
    cannot be built, and the error says how to run with ``-T sources=text``."""
    from conflict_eval.tasks.atomr.task import atomr

    with pytest.raises(SourceError, match=r"-T sources=text with -T text_corpus="):
        atomr(dataset="crag", path=str(shared_data / "crag_atomr" / "sample.jsonl"), limit=1)
