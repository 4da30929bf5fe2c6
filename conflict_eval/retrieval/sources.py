"""Knowledge sources behind one interface: Text, KG and Web (AtomR §3.3.1), with
the upstream corpus formats they read (:func:`read_passages`, :func:`read_pages`).
The ``knowledge_sources`` plugin registers :func:`text_source`, :func:`kg_source`
and :func:`web_source` under those names; methods search a source with
:func:`search_async`.

Every source has a ``name`` (``text``, ``kg``, ``web``), a ``label`` used as
the heading of its passages in prompts (AtomR Figures 8-10: "Wikipedia
Passages", "Google Results", and "Wikidata" for the KG), and
``search(query, k) -> list[Hit]`` (:class:`conflict_eval.retrieval.Hit`).

* :class:`TextSource` -- BM25 or dense retrieval (``conflict_eval.retrieval``)
  over a local passage corpus, read from an IRCoT/HotpotQA file
  (``contexts``), a MuSiQue file (``paragraphs``), BlendQA (``long_answer``
  NQ paragraphs) or a passage JSONL (``id``, ``text``, optional ``title``).
  Paragraphs repeated across records are indexed once.
* :class:`KGSource` -- a knowledge graph queried by entity lookup and one-hop
  relations through a :class:`KGBackend`. :class:`TripleStore` is the offline
  backend, built from BlendQA's ``sub_source`` triples or a triples JSONL
  (``head``, ``relation``, ``tail``). A SPARQL endpoint or a Wikidata dump
  replaces it by implementing the two methods of :class:`KGBackend`. As in
  AtomR, the KG returns the full list of matching facts, not a top-k.
* :class:`WebPagesSource` -- offline web search over pre-fetched pages
  (CRAG's ``search_results``: snippet plus the page text in ~100-word
  chunks; or a pages JSONL with ``url``, ``title``, ``text``), ranked by BM25.
* :class:`SerpApiSource` -- a live web-search adapter configured by
  environment variables (``CONFLICT_EVAL_WEB_SEARCH_URL``, default
  ``https://serpapi.com/search.json``, and ``CONFLICT_EVAL_WEB_SEARCH_KEY``),
  reading SerpAPI's Google ``organic_results``. Refused when
  ``CONFLICT_EVAL_OFFLINE`` is set, unless the URL is on localhost.

Sources are cached per process by their options (:func:`cached_source`), so
many samples share one index.
"""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.parse
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from conflict_eval.records import TaskArgument
from conflict_eval.retrieval import Document, Hit
from conflict_eval.retrieval.servers import SourceAdvice, SourceError

CORPUS_VALUES = "FILE|INDEX_DIR|es+URL|colbert+URL"  # what -T text_corpus= takes

__all__ = [
    "KGBackend", "KGSource", "KnowledgeSource", "SerpApiSource", "SourceError", "TextSource",
    "TripleStore", "WebPagesSource", "cached_source", "html_to_text", "read_passages", "search_async",
]


@runtime_checkable
class KnowledgeSource(Protocol):
    """``search`` (synchronous); a source that queries a server also has
    ``async asearch(query, k)``, which async callers use (:func:`search_async`)."""

    name: str
    label: str

    def search(self, query: str, k: int = 3) -> list[Hit]:
        ...


async def search_async(source: Any, query: str, k: int = 3) -> list[Hit]:
    """``await source.asearch(query, k)`` when the source has it (a search
    server: the event loop keeps running other samples meanwhile), else
    ``source.search(query, k)`` (in-memory and on-disk indexes: CPU work)."""
    asearch = getattr(source, "asearch", None)
    if asearch is not None:
        return await asearch(query, k)
    return source.search(query, k)


# --------------------------------------------------------------------------
# helpers


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "noscript"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style", "noscript") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and data.strip():
            self.parts.append(data.strip())


def html_to_text(html: str) -> str:
    """Visible text of an HTML page or snippet, whitespace collapsed.

    >>> html_to_text("<P> The show is broadcast from <b>Studio 3</b> . </P><script>x()</script>")
    'The show is broadcast from Studio 3 .'
    """
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return " ".join(" ".join(parser.parts).split())


def _rows(path: Path) -> Iterator[tuple[int, dict]]:
    text = path.read_text(encoding="utf-8-sig")
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SourceError(f"{path}: invalid JSON ({exc.msg}, line {exc.lineno})") from None
        yield from enumerate(data, start=1)
        return
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as exc:
                raise SourceError(f"{path}: line {n}: invalid JSON ({exc.msg})") from None


def _field(path: Path, n: int, row: dict, key: str, kind: type = str):
    value = row.get(key)
    if not isinstance(value, kind) or (kind is str and not value.strip()):
        rid = row.get("id") or row.get("question_id") or row.get("interaction_id") or f"line {n}"
        raise SourceError(f"{path}: record {rid!r} (line {n}) field {key!r}: expected a non-empty "
                          f"{kind.__name__}, got {value!r:.60}")
    return value


def _paths(path: str | Path | list) -> list[Path]:
    paths = [Path(p) for p in (path if isinstance(path, (list, tuple)) else [path])]
    for p in paths:
        if not p.is_file():
            raise SourceError(f"no such file {p}")
    return paths


def read_passages(path: str | Path | list, stats: dict | None = None) -> list[Document]:
    """The passages of corpus file(s) (see :class:`TextSource` for the formats),
    de-duplicated by (title, text), in file order; ``stats["duplicates_skipped"]``
    counts the repeats skipped."""
    seen: dict[tuple[str | None, str], Document] = {}
    stats = {} if stats is None else stats
    stats.setdefault("duplicates_skipped", 0)

    def add(title: str | None, text: str) -> None:
        key = (title, text)
        if key not in seen:
            seen[key] = Document(f"p{len(seen)}", text, title)
        else:
            stats["duplicates_skipped"] += 1

    files = _paths(path)
    for path, (n, row) in ((p, r) for p in files for r in _rows(p)):
        if not isinstance(row, dict):
            raise SourceError(f"{path}: line {n}: expected an object")
        if "contexts" in row:  # IRCoT HotpotQA / 2Wiki format
            for c in _field(path, n, row, "contexts", list):
                add(c.get("title"), _field(path, n, c, "paragraph_text"))
        elif "paragraphs" in row:  # MuSiQue
            for p in _field(path, n, row, "paragraphs", list):
                add(p.get("title"), _field(path, n, p, "paragraph_text"))
        elif "long_answer" in row:  # BlendQA: NQ long answers (Wikipedia paragraphs)
            if row["long_answer"]:
                url = next((row.get(k) for k in ("sub_source1", "sub_source2")
                            if isinstance(row.get(k), str) and "wikipedia.org" in row[k]), None)
                title = urllib.parse.unquote(url.rsplit("/", 1)[-1]).replace("_", " ") if url else None
                add(title, html_to_text(row["long_answer"]))
        elif "text" in row:
            add(row.get("title"), _field(path, n, row, "text"))
        else:
            raise SourceError(f"{path}: line {n}: no passages (expected 'contexts', 'paragraphs', "
                              "'long_answer' or 'text')")
    if not seen:
        raise SourceError(f"{', '.join(map(str, files))}: the corpus has no passages")
    return list(seen.values())


# --------------------------------------------------------------------------
# text


class _SearcherSource:
    """A knowledge source that searches one opened corpus (``self.searcher``)."""

    searcher: Any

    def search(self, query: str, k: int = 3) -> list[Hit]:
        return self.searcher.search(query, k)

    async def asearch(self, query: str, k: int = 3) -> list[Hit]:
        return await search_async(self.searcher, query, k)

    def describe(self) -> dict:
        return self.searcher.describe()


class TextSource(_SearcherSource):
    """Passage retrieval over a corpus (AtomR's Wikipedia source): a corpus
    file indexed in memory, an index directory (``conflict-eval index
    build``) or a search server (``es+http://...``, ``colbert+http://...``);
    see :func:`conflict_eval.retrieval.open_corpus`."""

    name = "text"
    label = "Wikipedia Passages"

    def __init__(self, corpus: str | Path | list, retriever: str = "bm25") -> None:
        from conflict_eval.retrieval import open_corpus

        self.corpus = corpus
        self.searcher = open_corpus(corpus, retriever)
        self.size = getattr(self.searcher, "size", None)



# --------------------------------------------------------------------------
# knowledge graph


@runtime_checkable
class KGBackend(Protocol):
    """What :class:`KGSource` needs from a knowledge graph."""

    def find_entities(self, name: str) -> list[str]:
        """Ids of entities whose label is ``name`` (case-insensitive)."""
        ...

    def label(self, entity_id: str) -> str:
        ...

    def one_hop(self, entity_id: str) -> list[tuple[str, str, str]]:
        """All ``(head_id, relation, tail_id)`` facts with the entity as head or tail."""
        ...

    def labels(self) -> Iterable[str]:
        """Every known entity label (for finding entity names in a query)."""
        ...


class TripleStore:
    """An in-memory triple store with labels: the offline KG backend."""

    def __init__(self) -> None:
        self.triples: set[tuple[str, str, str]] = set()
        self._labels: dict[str, str] = {}
        self._by_label: dict[str, set[str]] = {}
        self._by_entity: dict[str, set[tuple[str, str, str]]] = {}

    def add_label(self, entity_id: str, label: str) -> None:
        self._labels.setdefault(entity_id, label)
        self._by_label.setdefault(label.lower(), set()).add(entity_id)

    def add(self, head: str, relation: str, tail: str) -> None:
        t = (head, relation, tail)
        if t not in self.triples:
            self.triples.add(t)
            self._by_entity.setdefault(head, set()).add(t)
            self._by_entity.setdefault(tail, set()).add(t)

    def find_entities(self, name: str) -> list[str]:
        return sorted(self._by_label.get(name.strip().lower(), ()))

    def label(self, entity_id: str) -> str:
        return self._labels.get(entity_id, entity_id)

    def one_hop(self, entity_id: str) -> list[tuple[str, str, str]]:
        return sorted(self._by_entity.get(entity_id, ()))

    def labels(self) -> Iterable[str]:
        return self._by_label.keys()

    @classmethod
    def from_file(cls, path: str | Path | list) -> TripleStore:
        """Read BlendQA records (``sub_source1``/``sub_source2`` objects with
        ``triples`` ``[head, relation, tail, direction]`` and ``concepts``;
        ``entity``/``entity_id`` label the bridging entity) or a triples JSONL
        (``head``, ``relation``, ``tail``, optional ``head_label``/``tail_label``).

        BlendQA's direction ``forward`` means ``head --relation--> tail``;
        ``backward`` means ``tail --relation--> head``. The concepts become
        ``instance of`` facts of the bridging entity; attribute facts
        ``[entity, attribute, {"type", "value"}]`` get the value as tail. BlendQA only labels the
        bridging entity, so the other end of a triple is shown by its Wikidata
        id (no label is invented).
        """
        store = cls()
        for path, (n, row) in ((p, r) for p in _paths(path) for r in _rows(p)):
            if "head" in row and "relation" in row and "tail" in row:
                h, r, t = (_field(path, n, row, k) for k in ("head", "relation", "tail"))
                store.add(h, r, t)
                for end, key in ((h, "head_label"), (t, "tail_label")):
                    store.add_label(end, row.get(key) or end)
                continue
            found = False
            for key in ("sub_source1", "sub_source2"):
                src = row.get(key)
                if not isinstance(src, dict):
                    continue
                found = True
                triples = src.get("triples")
                if not isinstance(triples, list):
                    raise SourceError(f"{path}: line {n} field {key}.triples: expected a list")
                for tr in triples:
                    if tr == []:  # one BlendQA record has an empty triple: nothing to add
                        continue
                    if isinstance(tr, list) and len(tr) == 3 and isinstance(tr[2], dict) and "value" in tr[2]:
                        # attribute fact: [entity, attribute, {"type": ..., "value": ...}]
                        literal = str(tr[2]["value"])
                        store.add(tr[0], tr[1], f"literal:{literal}")
                        store.add_label(f"literal:{literal}", literal)
                        continue
                    if not (isinstance(tr, list) and len(tr) == 4 and tr[3] in ("forward", "backward")):
                        raise SourceError(f"{path}: line {n} field {key}.triples: bad triple {tr!r}; "
                                          "expected [head, relation, tail, forward|backward] or "
                                          "[entity, attribute, {type, value}]")
                    h, r, t, d = tr
                    store.add(*((h, r, t) if d == "forward" else (t, r, h)))
                if row.get("entity_id") and row.get("entity"):
                    store.add_label(row["entity_id"], row["entity"])
                    for concept in src.get("concepts") or []:
                        store.add(row["entity_id"], "instance of", f"concept:{concept}")
                        store.add_label(f"concept:{concept}", concept)
            if not found and "sub_source1" not in row and "head" not in row:
                raise SourceError(f"{path}: line {n}: neither BlendQA sub_source triples nor head/relation/tail")
        if not store.triples:
            raise SourceError(f"{path}: no triples found")
        return store


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


class KGSource:
    """Entity lookup + one-hop relations over a :class:`KGBackend` (AtomR's Wikidata source).

    ``search(query)`` finds the entities whose label occurs in the query
    (longest labels first, as whole words), then returns their one-hop facts
    as ``head | relation | tail`` passages. Facts whose relation shares a
    word with the rest of the query come first; all facts are returned (the
    KG gives the full answer list, AtomR §3.3.1), so ``k`` is ignored.
    An unknown entity gives no facts.
    """

    name = "kg"
    label = "Wikidata"

    def __init__(self, backend: KGBackend | str | Path | list) -> None:
        self.spec = backend
        if isinstance(backend, str) and backend.startswith("sparql+"):
            from conflict_eval.retrieval.servers import SparqlKG, parse_spec

            self.backend = SparqlKG(parse_spec(backend)[1])
        else:
            self.backend = backend if isinstance(backend, KGBackend) else TripleStore.from_file(backend)

    def describe(self) -> dict:
        if hasattr(self.backend, "describe"):
            return self.backend.describe()
        files = self.spec if isinstance(self.spec, (list, tuple)) else [self.spec]
        n = len(getattr(self.backend, "triples", ()))
        return {"corpus": ", ".join(map(str, files)), "passages": n or None,
                "backend": "triple store (in memory)", "unit": "triples"}

    def entities_in(self, query: str) -> list[str]:
        """Ids of the entities whose label occurs in ``query`` (whole words, longest first)."""
        from conflict_eval.retrieval.servers import run_sync

        return run_sync(self.aentities_in(query))

    async def aentities_in(self, query: str) -> list[str]:
        from conflict_eval.retrieval.servers import maybe_await

        q = f" {_norm(query)} "
        ids: list[str] = []
        spot = getattr(self.backend, "labels_in", None)  # a remote KG finds the labels in the query itself
        labels = await maybe_await(spot(query)) if spot else self.backend.labels()
        for lab in sorted(labels, key=len, reverse=True):
            n = _norm(lab)
            if n and f" {n} " in q:
                ids += [i for i in await maybe_await(self.backend.find_entities(lab)) if i not in ids]
                q = q.replace(f" {n} ", " | ")
        return ids

    def search(self, query: str, k: int = 3) -> list[Hit]:
        from conflict_eval.retrieval.servers import run_sync

        return run_sync(self.asearch(query, k))

    async def asearch(self, query: str, k: int = 3) -> list[Hit]:
        """The facts (see the class docstring); backend methods may be coroutines (SPARQL)."""
        from bm25s.stopwords import STOPWORDS_EN

        from conflict_eval.retrieval.servers import maybe_await

        ids = await self.aentities_in(query)
        qwords = _words(query) - set(STOPWORDS_EN)  # "the", "of" ... say nothing about the relation
        facts: list[tuple[int, tuple[str, str, str]]] = []
        seen = set()
        for eid in ids:
            for fact in await maybe_await(self.backend.one_hop(eid)):
                if fact not in seen:
                    seen.add(fact)
                    facts.append((0 if _words(fact[1]) & qwords else 1, fact))
        facts.sort(key=lambda x: x[0])  # stable: relation matches first
        hits = []
        for rank, (_, (h, r, t)) in enumerate(facts, start=1):
            text = (f"{await maybe_await(self.backend.label(h))} | {r} | "
                    f"{await maybe_await(self.backend.label(t))}")
            hits.append(Hit(id=f"{h}|{r}|{t}", text=text, title=None, score=1.0, rank=rank))
        return hits


# --------------------------------------------------------------------------
# web


def read_pages(path: str | Path | list, chunk_words: int = 100, max_chunks: int = 20,
               stats: dict | None = None) -> list[Document]:
    """Passages of pre-fetched web pages: CRAG records (``search_results`` with
    ``page_name``, ``page_url``, ``page_snippet``, ``page_result`` HTML) or a
    pages JSONL (``url``, ``title``, ``text``). Each page gives its snippet and
    up to ``max_chunks`` chunks of ``chunk_words`` words of its visible text.
    Pages repeated across (or within) records are indexed once
    (``stats["duplicates_skipped"]`` counts the repeated pages)."""
    docs: list[Document] = []
    seen_pages: set[str] = set()
    files = _paths(path)
    stats = {} if stats is None else stats
    stats.setdefault("duplicates_skipped", 0)

    def add_page(url: str, title: str | None, snippet: str | None, text: str) -> None:
        if url in seen_pages:
            stats["duplicates_skipped"] += 1
            return
        seen_pages.add(url)
        if snippet and snippet.strip():
            docs.append(Document(f"w{len(docs)}", html_to_text(snippet), title))
        words = text.split()
        for i in range(0, min(len(words), chunk_words * max_chunks), chunk_words):
            docs.append(Document(f"w{len(docs)}", " ".join(words[i:i + chunk_words]), title))

    for path, (n, row) in ((p, r) for p in files for r in _rows(p)):
        if "search_results" in row:
            for page in _field(path, n, row, "search_results", list):
                url = page.get("page_url") or f"{n}:{page.get('page_name')}"
                add_page(url, page.get("page_name"), page.get("page_snippet"),
                         html_to_text(page.get("page_result") or ""))
        elif "text" in row:
            add_page(row.get("url") or f"line {n}", row.get("title"), None, _field(path, n, row, "text"))
        else:
            raise SourceError(f"{path}: line {n}: no pages (expected 'search_results' or 'text')")
    if not docs:
        raise SourceError(f"{', '.join(map(str, files))}: no web page text found")
    return docs


class WebPagesSource(_SearcherSource):
    """Offline web search: BM25 over pre-fetched pages (AtomR's Google source,
    offline); ``pages`` may also be an index directory or a search server."""

    name = "web"
    label = "Google Results"

    def __init__(self, pages: str | Path, retriever: str = "bm25") -> None:
        from conflict_eval.retrieval import open_corpus

        self.searcher = open_corpus(pages, retriever, fmt="pages")
        self.size = getattr(self.searcher, "size", None)



class SerpApiSource:
    """Live Google results through a SerpAPI-compatible endpoint (AtomR §4.1.4).

    Configured by ``CONFLICT_EVAL_WEB_SEARCH_URL`` (default
    ``https://serpapi.com/search.json``) and ``CONFLICT_EVAL_WEB_SEARCH_KEY``.
    """

    name = "web"
    label = "Google Results"
    DEFAULT_URL = "https://serpapi.com/search.json"

    def __init__(self, url: str | None = None, key: str | None = None, timeout: float = 30) -> None:
        self.url = url or os.environ.get("CONFLICT_EVAL_WEB_SEARCH_URL") or self.DEFAULT_URL
        self.key = key or os.environ.get("CONFLICT_EVAL_WEB_SEARCH_KEY")
        self.timeout = timeout
        host = urllib.parse.urlparse(self.url).hostname or ""
        if not self.key:
            raise SourceError("web search API: set CONFLICT_EVAL_WEB_SEARCH_KEY (and optionally "
                              "CONFLICT_EVAL_WEB_SEARCH_URL), or use offline pages with web_pages=FILE")
        if os.environ.get("CONFLICT_EVAL_OFFLINE", "").lower() in ("1", "true", "yes") \
                and host not in ("localhost", "127.0.0.1"):
            raise SourceError(f"web search API {self.url}: network access is disabled "
                              "(CONFLICT_EVAL_OFFLINE); use offline pages with web_pages=FILE")

    def describe(self) -> dict:
        return {"endpoint": self.url, "passages": None, "backend": "web search API (SerpAPI-compatible)"}

    def search(self, query: str, k: int = 3) -> list[Hit]:
        from conflict_eval.retrieval.servers import run_sync

        return run_sync(self.asearch(query, k))

    async def asearch(self, query: str, k: int = 3) -> list[Hit]:
        from conflict_eval.retrieval.servers import HttpClient

        data = await HttpClient(self.timeout).get_json(
            self.url, params={"q": query, "api_key": self.key, "engine": "google", "num": k})
        if not isinstance(data, dict):
            raise SourceError(f"web search API {self.url}: expected a JSON object, got {str(data)[:200]!r}")
        if "error" in data:
            raise SourceError(f"web search API error: {data['error']}")
        results = data.get("organic_results") or []
        hits = []
        for r in results[:k]:
            text = r.get("snippet") or ""
            if text:
                hits.append(Hit(id=r.get("link") or str(len(hits)), text=text, title=r.get("title"),
                                score=1.0, rank=len(hits) + 1))
        return hits


# --------------------------------------------------------------------------
# factories (the plugin's registered names) and a per-process cache

_cache: dict[tuple, Any] = {}
_lock = threading.Lock()


def cached_source(kind: str, factory, **options) -> Any:
    """Build a source once per process for the same options."""
    key = (kind, tuple(sorted((k, str(v)) for k, v in options.items())))
    with _lock:
        if key not in _cache:
            _cache[key] = factory(**options)
        return _cache[key]


def text_source(corpus: str | None = None, retriever: str = "bm25") -> TextSource:
    """Text source over ``corpus``: a file (BM25 or dense in memory), an index
    directory, or a search server URL (``es+http://...``, ``colbert+http://...``)."""
    if not corpus:
        raise SourceAdvice("text source needs a corpus: pass ", TaskArgument("text_corpus", CORPUS_VALUES),
                           in_sample=True)
    if retriever not in ("bm25", "dense"):
        raise SourceError(f"unknown retriever {retriever!r}; expected bm25 or dense")
    return cached_source("text", TextSource, corpus=corpus, retriever=retriever)


def kg_source(triples: str | None = None) -> KGSource:
    """KG source over a triples file (BlendQA records or head/relation/tail JSONL)
    or a SPARQL endpoint (``sparql+https://query.wikidata.org/sparql``)."""
    if not triples:
        raise SourceAdvice("kg source needs triples: pass ", TaskArgument("kg_triples"), " or ",
                           TaskArgument("kg_triples", "sparql+URL"), in_sample=True)
    return cached_source("kg", KGSource, backend=triples)


def web_source(pages: str | None = None, api: bool = False) -> WebPagesSource | SerpApiSource:
    """Offline pages (``pages=FILE``) or the live search API (``api=True``)."""
    if pages:
        return cached_source("web", WebPagesSource, pages=pages)
    if api:
        return SerpApiSource()
    raise SourceAdvice("web source needs pre-fetched pages (", TaskArgument("web_pages"), ") or the search API (",
                       TaskArgument("web_api", "true"), " with CONFLICT_EVAL_WEB_SEARCH_KEY set); or run without "
                       "it: ", TaskArgument("sources", "text"), " with ", TaskArgument("text_corpus", CORPUS_VALUES),
                       in_sample=True)
