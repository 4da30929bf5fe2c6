"""Search servers as corpus backends: Elasticsearch/OpenSearch, the ColBERTv2
search-server API, and a SPARQL endpoint for the ``kg`` source.

Each is named by a URL wherever a corpus file is accepted (``-T
text_corpus=``, ``-T web_pages=``, ``-T corpus=``, ``-T kg_triples=``):

* ``es+http://HOST:9200/INDEX`` (also ``elasticsearch+`` / ``opensearch+``,
  ``https`` works): a ``multi_match`` query over the ``text`` and ``title``
  fields (``?text_field=...&title_field=...`` to rename them), scores as the
  server computes them (BM25 by default). Client: ``opensearch-py``.
* ``colbert+http://HOST:PORT/api/search``: the ColBERTv2 server the AtomR
  authors run (THU-KEG/AtomR ``ColBERT/setup_service_*.py``): ``GET
  /api/search?query=Q&k=K`` returning ``{"query", "topk": [{"text", "pid",
  "rank", "score", "prob"}]}``; passages are ``"title | text"`` (split at the
  first ``|``, as AtomR does). Client: ``httpx``.
* ``sparql+https://query.wikidata.org/sparql`` (any SPARQL 1.1 endpoint):
  entity lookup by ``rdfs:label`` and one-hop facts, see :class:`SparqlKG`.
  Client: ``httpx`` with the SPARQL protocol (GET, ``query=``, JSON results).

Async: every backend's ``asearch`` is a coroutine on an async client
(``httpx.AsyncClient``; ``opensearch-py``'s ``AsyncOpenSearch``, which needs
``aiohttp``: the ``search`` extra), so concurrent samples query a server
concurrently and a slow or dead endpoint stalls only the samples waiting on
it. ``search`` (the synchronous interface of every searcher, for index
building and dataset preparation) runs the same coroutine to completion.

Timeouts and retries: every request has a timeout (default 30 s,
``CONFLICT_EVAL_HTTP_TIMEOUT``) and is retried on connection errors,
timeouts and HTTP 429/502/503/504 (default 3 retries,
``CONFLICT_EVAL_HTTP_RETRIES``): through ``tenacity`` (exponential back-off
from 0.5 s, at most 8 s) for httpx; ``opensearch-py``'s own retry for
Elasticsearch. After the last attempt a :class:`SourceError` says how many
attempts were made and what the last failure was. With
``CONFLICT_EVAL_OFFLINE=1`` only localhost endpoints are allowed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import os
import re
import threading
import urllib.parse
from collections.abc import Awaitable, Iterable, Sequence
from typing import Any, TypeVar

from conflict_eval.records import ArgumentError, TaskArgument
from conflict_eval.retrieval import Hit


class SourceError(ValueError):
    """A knowledge source cannot be built or queried; the message says why."""


class SourceAdvice(ArgumentError, SourceError):
    """A :class:`SourceError` whose fix is a task argument (``text_corpus``,
    ``kg_triples``, ...): an :class:`~conflict_eval.records.errors.ArgumentError`.
    Sources are built inside a running sample (from its record's files), so
    these are raised with ``in_sample=True``: ``str()`` gives both forms."""


__all__ = ["ColbertServer", "ElasticsearchIndex", "HttpClient", "SparqlKG", "open_search_server",
           "parse_spec", "public_url", "run_sync"]

KINDS = {"es": "elasticsearch", "elasticsearch": "elasticsearch", "opensearch": "elasticsearch",
         "colbert": "colbert", "sparql": "sparql"}
RETRY_STATUS = (429, 502, 503, 504)


def parse_spec(spec: str) -> tuple[str, str]:
    """``"es+http://h:9200/i"`` -> ``("elasticsearch", "http://h:9200/i")``."""
    if "+" not in spec:
        raise SourceError(f"{spec!r}: expected KIND+URL with KIND one of {', '.join(sorted(KINDS))}")
    prefix, url = spec.split("+", 1)
    if prefix not in KINDS:
        raise SourceError(f"{spec!r}: unknown search server kind {prefix!r}; expected one of "
                          f"{', '.join(sorted(KINDS))}")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SourceError(f"{spec!r}: expected an http(s) URL after {prefix}+")
    return KINDS[prefix], url


def public_url(url: str) -> str:
    """``url`` without user:password (safe to record in logs)."""
    p = urllib.parse.urlsplit(url)
    if p.username or p.password:
        netloc = p.hostname + (f":{p.port}" if p.port else "")
        p = p._replace(netloc=netloc)
    return urllib.parse.urlunsplit(p)


def _check_offline(url: str) -> None:
    host = urllib.parse.urlsplit(url).hostname or ""
    if os.environ.get("CONFLICT_EVAL_OFFLINE", "").lower() in ("1", "true", "yes") \
            and host not in ("localhost", "127.0.0.1", "::1"):
        raise SourceError(f"{public_url(url)}: network access is disabled (CONFLICT_EVAL_OFFLINE); "
                          "use a local index or a localhost server")


def _default_timeout() -> float:
    return float(os.environ.get("CONFLICT_EVAL_HTTP_TIMEOUT", "30"))


def _default_retries() -> int:
    return int(os.environ.get("CONFLICT_EVAL_HTTP_RETRIES", "3"))


T = TypeVar("T")


def run_sync(coro: Awaitable[T]) -> T:
    """Run ``coro`` to completion from synchronous code: in this thread when no
    event loop runs here, otherwise in a worker thread with its own loop (a
    synchronous caller inside async code blocks its loop either way; async
    callers use ``asearch``)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()  # type: ignore[arg-type]


async def maybe_await(value: Any) -> Any:
    """``await value`` if it is awaitable (an async backend method), else ``value``."""
    return await value if inspect.isawaitable(value) else value


class _Transient(Exception):
    """A failure worth another attempt (connection error, timeout, 429/502/503/504)."""


class HttpClient:
    """JSON over HTTP with ``httpx.AsyncClient``: a timeout per request and
    bounded retries with exponential back-off (``tenacity``).

    A client is opened per request, so one searcher serves any number of
    event loops (Inspect runs each eval in its own loop); ``requests``
    counts the HTTP requests sent, retries included."""

    def __init__(self, timeout: float | None = None, retries: int | None = None, backoff: float = 0.5) -> None:
        self.timeout = _default_timeout() if timeout is None else float(timeout)
        self.retries = _default_retries() if retries is None else int(retries)
        self.backoff = backoff
        self.requests = 0

    async def get_json(self, url: str, params: dict | None = None, headers: dict | None = None) -> Any:
        import httpx
        from tenacity import (AsyncRetrying, RetryError, retry_if_exception_type, stop_after_attempt,
                              wait_exponential)

        async def attempt(client: httpx.AsyncClient) -> httpx.Response:
            self.requests += 1
            try:
                resp = await client.get(url, params=params, headers=headers)
            except httpx.TransportError as exc:  # connect errors, timeouts, broken connections
                raise _Transient(f"{type(exc).__name__}: {exc}") from exc
            if resp.status_code in RETRY_STATUS:
                raise _Transient(f"HTTP {resp.status_code}")
            return resp

        retrying = AsyncRetrying(stop=stop_after_attempt(self.retries + 1),
                                 wait=wait_exponential(multiplier=self.backoff, max=8.0),
                                 retry=retry_if_exception_type(_Transient))
        async with httpx.AsyncClient(timeout=httpx.Timeout(self.timeout), follow_redirects=True,
                                     headers={"User-Agent": "conflict-eval (retrieval backend)"}) as client:
            try:
                resp = await retrying(attempt, client)
            except RetryError as exc:
                last = exc.last_attempt.exception()
                raise SourceError(f"{public_url(url)}: no answer after {self.retries + 1} attempts "
                                  f"(timeout {self.timeout:g} s): {last}") from None
        if resp.status_code >= 400:
            raise SourceError(f"{public_url(url)}: HTTP {resp.status_code}: {resp.text[:200]}")
        try:
            return resp.json()
        except ValueError:
            raise SourceError(f"{public_url(url)}: the reply is not JSON: {resp.text[:200]!r}") from None


# --------------------------------------------------------------------------
# ColBERTv2 search server (AtomR)


class ColbertServer:
    """A ColBERTv2 search server: ``GET URL?query=Q&k=K``."""

    def __init__(self, url: str, timeout: float | None = None, retries: int | None = None) -> None:
        _check_offline(url)
        parts = urllib.parse.urlsplit(url)
        if parts.path in ("", "/"):
            url = urllib.parse.urlunsplit(parts._replace(path="/api/search"))
        self.url = url
        self.http = HttpClient(timeout, retries)
        self.size = None  # the API does not report its collection size

    def search(self, query: str, k: int = 5) -> list[Hit]:
        return run_sync(self.asearch(query, k))

    async def asearch(self, query: str, k: int = 5) -> list[Hit]:
        data = await self.http.get_json(self.url, params={"query": query, "k": k})
        topk = data.get("topk") if isinstance(data, dict) else None
        if not isinstance(topk, list):
            raise SourceError(f"{public_url(self.url)}: expected {{'topk': [...]}} in the reply, "
                              f"got {str(data)[:200]!r}")
        hits = []
        for n, entry in enumerate(topk[:k], start=1):
            if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
                raise SourceError(f"{public_url(self.url)}: topk[{n - 1}]: expected an object with 'text'")
            raw = entry["text"]
            title, sep, text = raw.partition("|")  # "title | section: text" (AtomR splits at the first '|')
            title, text = (title.strip(), text.strip()) if sep else (None, raw.strip())
            hits.append(Hit(id=str(entry.get("pid", n - 1)), text=text, title=title or None,
                            score=float(entry.get("score", 0.0)), rank=n))
        return hits

    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]

    def describe(self) -> dict:
        return {"endpoint": public_url(self.url), "passages": None, "backend": "colbertv2 server"}


# --------------------------------------------------------------------------
# Elasticsearch / OpenSearch


class ElasticsearchIndex:
    """An Elasticsearch or OpenSearch index searched with ``multi_match``.

    ``url`` is ``http(s)://HOST:PORT/INDEX[?text_field=text&title_field=title]``.
    """

    def __init__(self, url: str, timeout: float | None = None, retries: int | None = None) -> None:
        _check_offline(url)
        parts = urllib.parse.urlsplit(url)
        index = parts.path.strip("/")
        if not index or "/" in index:
            raise SourceError(f"{public_url(url)}: expected http(s)://HOST:PORT/INDEX (one index name)")
        opts = dict(urllib.parse.parse_qsl(parts.query))
        self.index = index
        self.text_field = opts.get("text_field", "text")
        self.title_field = opts.get("title_field", "title")
        self.url = urllib.parse.urlunsplit(parts._replace(path="", query=""))
        self.timeout = _default_timeout() if timeout is None else float(timeout)
        self.retries = _default_retries() if retries is None else int(retries)
        self._options = dict(hosts=[self.url], timeout=self.timeout, max_retries=self.retries,
                             retry_on_timeout=True, retry_on_status=RETRY_STATUS)
        self._size: int | None = None

    def sync_client(self) -> Any:
        """A synchronous ``OpenSearch`` client (for :func:`bulk_load`)."""
        from opensearchpy import OpenSearch

        return OpenSearch(**self._options)

    async def _call(self, what: str, method: str, **kwargs) -> Any:
        """``AsyncOpenSearch.<method>(**kwargs)`` on a client opened for this call
        (a client is bound to the event loop it was opened in)."""
        try:
            from opensearchpy import AsyncOpenSearch
            from opensearchpy.exceptions import OpenSearchException
        except ImportError as exc:  # aiohttp missing
            raise SourceError(f"the Elasticsearch/OpenSearch backend needs opensearch-py's async client: "
                              f"pip install 'conflict-eval[search]' ({exc})") from None
        client = AsyncOpenSearch(**self._options)
        try:
            return await getattr(client, method)(**kwargs)
        except OpenSearchException as exc:
            raise SourceError(f"{public_url(self.url)}/{self.index}: {what} failed "
                              f"(timeout {self.timeout:g} s, {self.retries} retries): {exc}") from None
        finally:
            await client.close()

    @property
    def size(self) -> int:
        if self._size is None:
            self._size = int(run_sync(self._call("count", "count", index=self.index))["count"])
        return self._size

    def search(self, query: str, k: int = 5) -> list[Hit]:
        return run_sync(self.asearch(query, k))

    async def asearch(self, query: str, k: int = 5) -> list[Hit]:
        body = {"size": k, "query": {"multi_match": {"query": query,
                                                      "fields": [self.text_field, self.title_field]}},
                "_source": [self.text_field, self.title_field]}
        data = await self._call("search", "search", index=self.index, body=body)
        hits = []
        for n, h in enumerate(data.get("hits", {}).get("hits", [])[:k], start=1):
            src = h.get("_source") or {}
            text = src.get(self.text_field)
            if not isinstance(text, str):
                raise SourceError(f"{public_url(self.url)}/{self.index}: hit {h.get('_id')!r} has no "
                                  f"string field {self.text_field!r} (set ?text_field=...)")
            hits.append(Hit(id=str(h.get("_id")), text=text, title=src.get(self.title_field),
                            score=float(h.get("_score") or 0.0), rank=n))
        return hits

    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]

    def describe(self) -> dict:
        try:
            size: int | None = self.size
        except SourceError:
            size = None
        return {"endpoint": f"{public_url(self.url)}/{self.index}", "passages": size,
                "backend": "elasticsearch/opensearch (server-side scoring)"}


def bulk_load(url: str, documents: Iterable[Any], *, chunk: int = 1000, create: bool = True) -> int:
    """Index passages into an Elasticsearch/OpenSearch index (``_bulk``); returns the count.

    Creates the index with ``text``/``title`` as ``text`` fields when ``create``.
    """
    from opensearchpy import helpers

    es = ElasticsearchIndex(url)
    client = es.sync_client()
    if create and not client.indices.exists(index=es.index):
        client.indices.create(index=es.index, body={"mappings": {"properties": {
            es.text_field: {"type": "text"}, es.title_field: {"type": "text"}}}})
    actions = ({"_index": es.index, "_id": d.id, "_source": {es.text_field: d.text, es.title_field: d.title}}
               for d in documents)
    ok, errors = helpers.bulk(client, actions, chunk_size=chunk, raise_on_error=False)
    if errors:
        raise SourceError(f"{public_url(es.url)}/{es.index}: {len(errors)} passages failed to index, "
                          f"first: {errors[0]}")
    client.indices.refresh(index=es.index)
    return ok


# --------------------------------------------------------------------------
# SPARQL endpoint (the kg source)

_WORD = re.compile(r"[\w'’.-]+", re.UNICODE)
WIKIDATA_DIRECT = "http://www.wikidata.org/prop/direct/"


def _sparql_literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


class SparqlKG:
    """A :class:`~.sources.KGBackend` over a SPARQL 1.1 endpoint.

    * entities: found by exact ``rdfs:label`` match (language ``lang``, default
      ``en``) of the query's word n-grams (up to ``max_ngram`` words), in one
      ``VALUES`` query per search;
    * facts: one-hop ``(entity, p, o)`` and ``(s, p, entity)`` triples, at most
      ``max_facts`` per entity (Wikidata entities can have thousands);
      predicates restricted to ``predicate_prefix`` when set (default for
      query.wikidata.org: ``wdt:`` direct claims);
    * labels: ``rdfs:label`` in ``lang`` (for Wikidata properties, the label of
      the property entity via ``wikibase:directClaim``); an IRI without one is
      shown by its last path segment; literals are shown as they are.
    """

    def __init__(self, url: str, *, lang: str = "en", max_ngram: int = 5, max_facts: int = 200,
                 predicate_prefix: str | None = None, timeout: float | None = None,
                 retries: int | None = None) -> None:
        _check_offline(url)
        self.url = url
        self.lang = lang
        self.max_ngram = max_ngram
        self.max_facts = max_facts
        host = urllib.parse.urlsplit(url).hostname or ""
        self.predicate_prefix = predicate_prefix if predicate_prefix is not None else (
            WIKIDATA_DIRECT if host == "query.wikidata.org" else None)
        self.http = HttpClient(timeout, retries)
        self._labels: dict[str, str] = {}
        self._by_label: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    async def query(self, sparql: str) -> list[dict[str, dict]]:
        data = await self.http.get_json(self.url, params={"query": sparql},
                                  headers={"Accept": "application/sparql-results+json"})
        try:
            return data["results"]["bindings"]
        except (KeyError, TypeError):
            raise SourceError(f"{public_url(self.url)}: not a SPARQL JSON result: {str(data)[:200]!r}") from None

    # KGBackend -------------------------------------------------------------

    def candidate_labels(self, query: str) -> list[str]:
        words = _WORD.findall(query)
        words = [w.strip(".'’-") for w in words]
        words = [w for w in words if w]
        grams = {" ".join(words[i:i + n]) for n in range(1, self.max_ngram + 1) for i in range(len(words) - n + 1)}
        return sorted(grams, key=lambda g: (-len(g), g))

    async def labels_in(self, query: str) -> list[str]:
        """Labels of entities that occur in ``query`` (cached with their ids)."""
        grams = self.candidate_labels(query)
        if not grams:
            return []
        values = " ".join(f"{_sparql_literal(g)}@{self.lang}" for g in grams)
        # properties (Wikidata property entities, rdf:Property) are relations, not entities
        rows = await self.query("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
                          "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n"
                          "PREFIX wikibase: <http://wikiba.se/ontology#>\n"
                          f"SELECT ?e ?label WHERE {{ VALUES ?label {{ {values} }} ?e rdfs:label ?label . "
                          "FILTER(isIRI(?e)) FILTER NOT EXISTS { ?e wikibase:directClaim ?d } "
                          "FILTER NOT EXISTS { ?e a rdf:Property } }")
        found: dict[str, list[str]] = {}
        for r in rows:
            lab, e = r["label"]["value"], r["e"]["value"]
            found.setdefault(lab, [])
            if e not in found[lab]:
                found[lab].append(e)
        with self._lock:
            for lab, ids in found.items():
                self._by_label[lab.lower()] = sorted(ids)
                for e in ids:
                    self._labels.setdefault(e, lab)
        return list(found)

    def labels(self) -> Iterable[str]:
        return list(self._by_label)

    async def find_entities(self, name: str) -> list[str]:
        key = name.strip().lower()
        if key not in self._by_label:
            await self.labels_in(name)
        return list(self._by_label.get(key, []))

    async def label(self, entity_id: str) -> str:
        if entity_id.startswith("literal:"):
            return entity_id[len("literal:"):]
        if entity_id not in self._labels:
            await self._fetch_labels([entity_id])
        return self._labels.get(entity_id) or re.split(r"[/#]", entity_id.rstrip("/"))[-1]

    async def _fetch_labels(self, iris: list[str]) -> None:
        iris = [i for i in dict.fromkeys(iris) if i not in self._labels and not i.startswith("literal:")]
        for start in range(0, len(iris), 200):
            batch = iris[start:start + 200]
            values = " ".join(f"<{i}>" for i in batch)
            rows = await self.query(
                "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
                "PREFIX wikibase: <http://wikiba.se/ontology#>\n"
                f"SELECT ?x ?l WHERE {{ VALUES ?x {{ {values} }} "
                "{ ?x rdfs:label ?l } UNION { ?prop wikibase:directClaim ?x . ?prop rdfs:label ?l } "
                f'FILTER(lang(?l) = "{self.lang}" || lang(?l) = "") }}')
            with self._lock:
                for r in rows:
                    self._labels.setdefault(r["x"]["value"], r["l"]["value"])
                for i in batch:  # remember misses too (shown by their IRI's last segment)
                    self._labels.setdefault(i, "")

    async def one_hop(self, entity_id: str) -> list[tuple[str, str, str]]:
        e = f"<{entity_id}>"
        pfilter = f'FILTER(STRSTARTS(STR(?p), "{self.predicate_prefix}"))' if self.predicate_prefix else \
            "FILTER(?p != rdfs:label)"
        rows = await self.query(
            "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
            f"SELECT ?s ?p ?o WHERE {{ {{ {e} ?p ?o . BIND({e} AS ?s) "
            f'FILTER(isIRI(?o) || lang(?o) = "" || langMatches(lang(?o), "{self.lang}")) }} '
            f"UNION {{ ?s ?p {e} . BIND({e} AS ?o) FILTER(isIRI(?s)) }} {pfilter} }} LIMIT {self.max_facts}")
        facts = []
        for r in rows:
            def term(b: dict) -> str:
                return b["value"] if b.get("type") == "uri" else f"literal:{b['value']}"

            facts.append((term(r["s"]), r["p"]["value"], term(r["o"])))
        await self._fetch_labels([x for f in facts for x in f])
        # relations are shown by their label
        return sorted({(h, await self.label(p), t) for h, p, t in facts})

    def describe(self) -> dict:
        return {"endpoint": public_url(self.url), "passages": None, "backend": "sparql endpoint"}


def open_search_server(spec: str) -> Any:
    """The passage searcher for ``es+...`` / ``colbert+...`` specs."""
    kind, url = parse_spec(spec)
    if kind == "elasticsearch":
        return ElasticsearchIndex(url)
    if kind == "colbert":
        return ColbertServer(url)
    raise SourceAdvice(f"{spec!r}: a {kind} endpoint is not a passage corpus (use it as ",
                       TaskArgument("kg_triples", spec), ")", in_sample=True)
