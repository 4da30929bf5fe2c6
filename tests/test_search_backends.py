"""Search-server backends: a real SPARQL server, and stand-ins where none runs offline.

* SPARQL: a real Oxigraph server (PyPI ``oxigraph``, in the ``dev`` extra)
  started by the ``oxigraph_server`` fixture on an ephemeral loopback port,
  with the test graph loaded.
* Stand-ins (hand-written, on 127.0.0.1), only for servers that cannot run
  here offline: Elasticsearch/OpenSearch (a JVM server, not on PyPI) and the
  ColBERTv2 search server (needs a trained ColBERT checkpoint and index).
  Each implements the subset of the real API the client uses:

  * ColBERTv2 search server (THU-KEG/AtomR ``ColBERT/setup_service_*.py``):
    ``GET /api/search?query=&k=`` -> ``{"query", "topk": [{text, pid, rank, score, prob}]}``,
    passages as ``"title | text"``; ranked here by BM25 (the scores are the stand-in's);
  * Elasticsearch/OpenSearch: ``HEAD/PUT /INDEX``, ``POST /_bulk``, ``POST /INDEX/_refresh``,
    ``GET /INDEX/_count``, ``POST /INDEX/_search`` (``multi_match``), ranked by BM25.

Stand-ins bind 127.0.0.1 on a free port, run in a daemon thread and are shut
down by the fixture. ``fail_first`` makes a server answer 503 to its first N
requests, ``delay`` makes it slow (for timeouts and concurrency);
``max_in_flight`` is the most requests it was serving at once.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conflict_eval.retrieval.servers import (
    ColbertServer,
    ElasticsearchIndex,
    HttpClient,
    SparqlKG,
    bulk_load,
    parse_spec,
    public_url,
    run_sync,
)
from conflict_eval.retrieval.sources import KGSource, SourceError, text_source
from conflict_eval.retrieval import BM25Retriever, Document

PASSAGES = [
    Document("0", "Scott Derrickson is an American director, screenwriter and producer.", "Scott Derrickson"),
    Document("1", "Edward Davis Wood Jr. was an American filmmaker, actor and author.", "Ed Wood"),
    Document("2", "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.", "Eiffel Tower"),
    Document("3", "Paris is the capital and most populous city of France.", "Paris"),
]


class StandIn:
    """A stand-in HTTP server; ``handle(method, path, query, body) -> (status, headers, bytes)``."""

    def __init__(self, handle, fail_first: int = 0, delay: float = 0.0) -> None:
        self.handle, self.fail_first, self.delay = handle, fail_first, delay
        self.requests: list[tuple[str, str]] = []
        self.in_flight = self.max_in_flight = 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _do(self, method):
                parts = urllib.parse.urlsplit(self.path)
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                with lock:
                    outer.requests.append((method, self.path))
                    first = len(outer.requests) <= outer.fail_first
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                try:
                    if first:
                        status, headers, data = 503, {"Content-Type": "application/json"}, b'{"error": "busy"}'
                    else:
                        if outer.delay:
                            time.sleep(outer.delay)
                        status, headers, data = outer.handle(method, parts.path,
                                                             urllib.parse.parse_qs(parts.query), body)
                finally:
                    with lock:
                        outer.in_flight -= 1
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if method != "HEAD":
                    try:
                        self.wfile.write(data)
                    except (BrokenPipeError, ConnectionResetError):
                        pass

            def do_GET(self):
                self._do("GET")

            def do_POST(self):
                self._do("POST")

            def do_PUT(self):
                self._do("PUT")

            def do_HEAD(self):
                self._do("HEAD")

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *a):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def _json(status, obj, extra=None):
    return status, {"Content-Type": "application/json", **(extra or {})}, json.dumps(obj).encode()


# --------------------------------------------------------------------------
# ColBERT


def colbert_handler(passages=PASSAGES):
    r = BM25Retriever()
    r.index(passages)

    def handle(method, path, query, body):
        if method != "GET" or path != "/api/search":
            return _json(404, {"error": "not found"})
        q, k = query["query"][0], min(int(query.get("k", ["10"])[0]), 100)
        hits = r.search(q, k)
        topk = [{"text": f"{h.title} | {h.text}", "pid": int(h.id), "rank": h.rank, "score": h.score,
                 "prob": 1.0 / len(hits)} for h in hits]
        return _json(200, {"query": q, "topk": topk})

    return handle


def test_colbert_server_api_as_atomr_queries_it():
    with StandIn(colbert_handler()) as srv:
        src = text_source(f"colbert+http://127.0.0.1:{srv.port}/api/search")
        hits = src.search("Where in Paris is the Eiffel Tower?", k=2)
        assert [h.id for h in hits] == ["2", "3"]
        assert hits[0].title == "Eiffel Tower"  # "title | text" split at the first '|'
        assert hits[0].text == PASSAGES[2].text
        assert [h.rank for h in hits] == [1, 2]
        method, path = srv.requests[-1]
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
        assert q == {"query": ["Where in Paris is the Eiffel Tower?"], "k": ["2"]}
        d = src.describe()
        assert d == {"endpoint": f"http://127.0.0.1:{srv.port}/api/search", "passages": None,
                     "backend": "colbertv2 server"}


def test_colbert_retries_on_503_then_succeeds():
    with StandIn(colbert_handler(), fail_first=2) as srv:
        c = ColbertServer(f"http://127.0.0.1:{srv.port}", timeout=5, retries=3)  # path defaults to /api/search
        c.http.backoff = 0.01
        assert c.search("Ed Wood filmmaker", k=1)[0].id == "1"
        assert len(srv.requests) == 3


def test_colbert_gives_up_with_a_clear_error_after_timeouts():
    with StandIn(colbert_handler(), delay=1.0) as srv:
        c = ColbertServer(f"http://127.0.0.1:{srv.port}/api/search", timeout=0.2, retries=1)
        c.http.backoff = 0.01
        with pytest.raises(SourceError, match=r"no answer after 2 attempts \(timeout 0.2 s\).*Timeout"):
            c.search("anything", k=1)


def test_colbert_malformed_reply_is_an_error():
    with StandIn(lambda *a: _json(200, {"results": []})) as srv:
        with pytest.raises(SourceError, match="expected {'topk'"):
            ColbertServer(f"http://127.0.0.1:{srv.port}/api/search").search("x", 1)


def test_offline_refuses_remote_hosts(monkeypatch):
    monkeypatch.setenv("CONFLICT_EVAL_OFFLINE", "1")
    with pytest.raises(SourceError, match="network access is disabled"):
        ColbertServer("http://colbert.example.org:8893/api/search")
    with pytest.raises(SourceError, match="network access is disabled"):
        SparqlKG("https://query.wikidata.org/sparql")


def test_specs_and_credentials_are_not_logged():
    assert parse_spec("es+http://h:9200/wiki") == ("elasticsearch", "http://h:9200/wiki")
    assert parse_spec("opensearch+https://h/wiki")[0] == "elasticsearch"
    with pytest.raises(SourceError, match="unknown search server kind"):
        parse_spec("solr+http://h/x")
    with pytest.raises(SourceError, match="expected an http"):
        parse_spec("colbert+ftp://h/x")
    assert public_url("http://user:secret@h:9200/wiki") == "http://h:9200/wiki"


# --------------------------------------------------------------------------
# Elasticsearch / OpenSearch


class FakeElasticsearch:
    """Documents per index, searched with BM25 over the multi_match fields."""

    def __init__(self):
        self.indices: dict[str, dict[str, dict]] = {}
        self.searches: list[dict] = []

    def handle(self, method, path, query, body):
        parts = [p for p in path.split("/") if p]
        hdr = {"X-Elastic-Product": "Elasticsearch"}
        if method == "POST" and parts == ["_bulk"]:
            lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
            items = []
            for action, src in zip(lines[::2], lines[1::2]):
                meta = action["index"]
                self.indices.setdefault(meta["_index"], {})[meta["_id"]] = src
                items.append({"index": {"_index": meta["_index"], "_id": meta["_id"], "status": 201}})
            return _json(200, {"took": 1, "errors": False, "items": items}, hdr)
        if len(parts) == 1 and method == "HEAD":
            return (200 if parts[0] in self.indices else 404), hdr, b""
        if len(parts) == 1 and method == "PUT":
            self.indices.setdefault(parts[0], {})
            return _json(200, {"acknowledged": True, "index": parts[0]}, hdr)
        if len(parts) == 2 and parts[0] not in self.indices:
            return _json(404, {"error": {"type": "index_not_found_exception"}, "status": 404}, hdr)
        if len(parts) == 2 and parts[1] == "_refresh":
            return _json(200, {"_shards": {"total": 1, "successful": 1, "failed": 0}}, hdr)
        if len(parts) == 2 and parts[1] == "_count":
            return _json(200, {"count": len(self.indices[parts[0]])}, hdr)
        if len(parts) == 2 and parts[1] == "_search":
            req = json.loads(body or b"{}")
            self.searches.append(req)
            mm = req["query"]["multi_match"]
            docs = self.indices[parts[0]]
            r = BM25Retriever(include_title=False)
            r.index([{"id": i, "text": " ".join(str(s.get(f) or "") for f in mm["fields"])} for i, s in docs.items()])
            hits = [h for h in r.search(mm["query"], min(req.get("size", 10), len(docs))) if h.score > 0]
            return _json(200, {"took": 1, "timed_out": False,
                               "hits": {"total": {"value": len(hits), "relation": "eq"},
                                        "hits": [{"_index": parts[0], "_id": h.id, "_score": h.score,
                                                  "_source": {f: docs[h.id].get(f) for f in req["_source"]}}
                                                 for h in hits]}}, hdr)
        return _json(404, {"error": f"unsupported {method} {path}"}, hdr)


def test_elasticsearch_bulk_load_count_and_search():
    fake = FakeElasticsearch()
    with StandIn(fake.handle) as srv:
        url = f"http://127.0.0.1:{srv.port}/wiki"
        assert bulk_load(url, PASSAGES) == 4
        src = text_source(f"es+{url}")
        hits = src.search("capital of France", k=2)
        assert hits[0].id == "3" and hits[0].title == "Paris" and hits[0].text == PASSAGES[3].text
        assert fake.searches[-1]["size"] == 2
        assert fake.searches[-1]["query"]["multi_match"]["fields"] == ["text", "title"]
        d = src.describe()
        assert d["endpoint"] == url and d["passages"] == 4
        assert d["backend"].startswith("elasticsearch")


def test_elasticsearch_custom_fields_and_retry():
    fake = FakeElasticsearch()
    fake.indices["docs"] = {"a": {"contents": "Ed Wood made films.", "name": "Ed Wood"}}
    with StandIn(fake.handle, fail_first=1) as srv:
        es = ElasticsearchIndex(f"http://127.0.0.1:{srv.port}/docs?text_field=contents&title_field=name",
                                timeout=5, retries=2)
        hits = es.search("films", k=3)
        assert [(h.id, h.title, h.text) for h in hits] == [("a", "Ed Wood", "Ed Wood made films.")]
        assert len(srv.requests) == 2  # the 503 was retried


def test_elasticsearch_missing_index_is_a_clear_error():
    with StandIn(FakeElasticsearch().handle) as srv:
        es = ElasticsearchIndex(f"http://127.0.0.1:{srv.port}/nope", retries=0)
        with pytest.raises(SourceError, match=r"/nope: search failed"):
            es.search("x", 1)
    with pytest.raises(SourceError, match="one index name"):
        ElasticsearchIndex("http://127.0.0.1:9/")


# --------------------------------------------------------------------------
# SPARQL

TTL = """
@prefix wd: <http://www.wikidata.org/entity/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix wikibase: <http://wikiba.se/ontology#> .
wd:Q90 rdfs:label "Paris"@en , "Paris"@fr ; wdt:P17 wd:Q142 ; wdt:P1082 "2102650" .
wd:Q142 rdfs:label "France"@en ; wdt:P36 wd:Q90 .
wd:Q243 rdfs:label "Eiffel Tower"@en ; wdt:P131 wd:Q90 ; wdt:P571 "1889" .
wd:P17 rdfs:label "country"@en . wd:P17 wikibase:directClaim wdt:P17 .
wd:P36 rdfs:label "capital"@en . wd:P36 wikibase:directClaim wdt:P36 .
wd:P131 rdfs:label "located in the administrative territorial entity"@en . wd:P131 wikibase:directClaim wdt:P131 .
wd:P1082 rdfs:label "population"@en . wd:P1082 wikibase:directClaim wdt:P1082 .
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def oxigraph_binary() -> str:
    """The ``oxigraph`` server binary (PyPI ``oxigraph``, installed with the dev extra)."""
    found = shutil.which("oxigraph") or shutil.which("oxigraph", path=str(Path(sys.executable).parent))
    assert found, "the oxigraph SPARQL server is missing: pip install -e '.[dev]' (PyPI package 'oxigraph')"
    return found


@pytest.fixture(scope="module")
def oxigraph_server(tmp_path_factory):
    """A real SPARQL 1.1 server (Oxigraph) with TTL loaded, read-only, on a free
    loopback port; yields its query endpoint URL and is stopped afterwards."""
    exe = oxigraph_binary()
    root = tmp_path_factory.mktemp("oxigraph")
    (root / "graph.ttl").write_text(TTL, encoding="utf-8")
    subprocess.run([exe, "load", "--location", str(root / "db"), "--file", str(root / "graph.ttl")],
                   check=True, capture_output=True, timeout=60)
    port = free_port()
    proc = subprocess.Popen([exe, "serve-read-only", "--location", str(root / "db"), "--bind", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/query"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"oxigraph did not start: {proc.stderr.read().decode()[-500:]}") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_sparql_kg_entity_lookup_and_one_hop(oxigraph_server):
    kg = KGSource(f"sparql+{oxigraph_server}")
    assert isinstance(kg.backend, SparqlKG)
    kg.backend.predicate_prefix = "http://www.wikidata.org/prop/direct/"  # as for query.wikidata.org
    assert kg.entities_in("What is the population of Paris?") == ["http://www.wikidata.org/entity/Q90"]
    texts = [h.text for h in kg.search("What is the population of Paris?")]
    # the relation matching a query word comes first; then the rest (incoming facts too)
    assert texts[0] == "Paris | population | 2102650"
    assert sorted(texts[1:]) == ["Eiffel Tower | located in the administrative territorial entity | Paris",
                                 "France | capital | Paris", "Paris | country | France"]
    # longest label first: "Eiffel Tower" is one entity, not "Eiffel" + "Tower"
    assert kg.entities_in("When was the Eiffel Tower built?") == ["http://www.wikidata.org/entity/Q243"]
    assert kg.search("Who is Zorblax?") == []
    assert kg.describe() == {"endpoint": oxigraph_server, "passages": None, "backend": "sparql endpoint"}


def test_sparql_errors_are_reported(oxigraph_server):
    kg = SparqlKG(oxigraph_server, retries=0)
    with pytest.raises(SourceError, match="HTTP 400"):  # the real server's answer to a syntax error
        run_sync(kg.query("SELECT ?x WHERE { ?x"))


def test_http_client_retries_connection_refused():
    port = free_port()  # nothing listens there
    c = HttpClient(timeout=0.5, retries=1, backoff=0.01)
    with pytest.raises(SourceError, match="no answer after 2 attempts.*ConnectError"):
        run_sync(c.get_json(f"http://127.0.0.1:{port}/api/search"))
    assert c.requests == 2


def test_search_calls_do_not_block_the_event_loop():
    """Four concurrent searches against a slow server (0.5 s a request): the
    server serves all four at once, and the loop is free meanwhile."""
    with StandIn(colbert_handler(), delay=0.5) as srv:
        c = ColbertServer(f"http://127.0.0.1:{srv.port}/api/search", timeout=5, retries=0)

        async def main():
            ticks = 0

            async def ticker():
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.05)
                    ticks += 1

            t = asyncio.create_task(ticker())
            start = time.monotonic()
            hits = await asyncio.gather(*(c.asearch(q, 1) for q in ("Paris", "Ed Wood", "Eiffel", "Scott")))
            t.cancel()
            return hits, time.monotonic() - start, ticks

        hits, took, ticks = asyncio.run(main())
    assert srv.max_in_flight == 4
    assert [h[0].id for h in hits] == ["3", "1", "2", "0"]
    assert took < 1.9 and ticks >= 3  # not 4 x 0.5 s = 2 s in a row; the loop ran other work meanwhile


# --------------------------------------------------------------------------
# AtomR end to end over the ColBERT API and a SPARQL KG


def test_atomr_runs_over_colbert_and_sparql_and_records_the_endpoints(shared_data, tmp_path, oxigraph_server):
    from inspect_ai import eval as inspect_eval

    from conflict_eval.tasks.atomr.task import atomr
    from conflict_eval.testing import scripted_model

    path = shared_data / "hotpotqa_ircot" / "sample.jsonl"
    with StandIn(colbert_handler()) as col:
        task = atomr(dataset="hotpotqa", path=str(path), method="atomr_standard_rag", limit=1, sources="text,kg",
                     text_corpus=f"colbert+http://127.0.0.1:{col.port}/api/search",
                     kg_triples=f"sparql+{oxigraph_server}")
        log = inspect_eval(task, model=scripted_model(["Answer: Paris"] * 5), display="none",
                           log_dir=str(tmp_path))[0]
        assert log.status == "success", log.error
        assert any(p.startswith("/api/search?") for _, p in col.requests)
    r = log.eval.metadata["retrieval"]
    assert r["source_names"] == ["text", "kg"]
    assert r["pooled_from_dataset"] is False
    assert r["sources"]["text"]["endpoint"] == f"http://127.0.0.1:{col.port}/api/search"
    assert r["sources"]["text"]["backend"] == "colbertv2 server"
    assert r["sources"]["kg"]["backend"] == "sparql endpoint"
    assert "note" not in r


def test_four_concurrent_samples_query_a_slow_server_at_once(shared_data, tmp_path):
    """Inspect runs 4 samples concurrently; each retrieves from a slow ColBERT
    server (0.5 s a request): the server has all 4 requests in flight at once."""
    from inspect_ai import eval as inspect_eval

    from conflict_eval.testing import scripted_model

    path = shared_data / "hotpotqa_ircot" / "sample.jsonl"
    with StandIn(colbert_handler(), delay=0.5) as col:
        [log] = inspect_eval("conflict_eval/atomr", task_args={
            "dataset": "hotpotqa", "path": str(path), "method": "atomr_standard_rag",
            "text_corpus": f"colbert+http://127.0.0.1:{col.port}/api/search"},
            model=scripted_model(lambda prompt: "Answer: Paris"), limit=4, max_samples=4,
            display="none", log_dir=str(tmp_path))
        assert log.status == "success", log.error
    assert len(col.requests) == 4
    assert col.max_in_flight == 4
