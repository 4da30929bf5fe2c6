"""Persistent on-disk passage indexes, and one way to open any corpus setting.

``conflict-eval index build CORPUS --out DIR [--backend bm25|dense] [--exact]``
writes an index directory:

* ``manifest.json`` -- what was indexed and how: the corpus file's name,
  size and sha256, its format, the passage count, the backend and every
  build setting (BM25 parameters and tokenisation; embedding model, vector
  index type and its parameters), library versions and build time;
* ``passages.jsonl`` + ``offsets.npy`` -- the passages (``id``, ``title``,
  ``text``) and their byte offsets, read through ``mmap`` at query time, so
  a hit costs one seek and memory does not grow with the corpus;
* BM25: the ``bm25s`` score matrix (``bm25/``), loaded with ``mmap=True``;
* dense: a FAISS index (``vectors.faiss``) of L2-normalised
  all-MiniLM-L6-v2 embeddings scored by inner product (= cosine): HNSW
  (approximate, the default) or flat (exact, ``--exact``).

:func:`open_index` opens a directory once per process (cache keyed by the
resolved path) and loads the heavy parts on the first search, so every
sample and every task naming the same directory share one copy.

:func:`open_corpus` turns any corpus setting the tasks accept into a
searcher: an index directory, a corpus file (indexed in memory, as before),
or a search-server URL (``es+http://HOST:9200/INDEX``, ``opensearch+...``,
``colbert+http://HOST:PORT/api/search``; see
:mod:`conflict_eval.plugins.knowledge_sources.backends`). Every searcher has
``search(query, k)``, ``search_many(queries, k)`` and ``describe()`` -- the
dict recorded in eval metadata under ``retrieval``.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from conflict_eval.records.download import sha256_file
from conflict_eval.records import DataFileError, not_utf8, read_jsonl
from conflict_eval.retrieval import Document, Hit, fold_accents

__all__ = ["CorpusIndexError", "PersistentIndex", "build_index", "describe_corpus", "is_index_dir",
           "iter_corpus", "open_corpus", "open_index", "read_manifest"]

MANIFEST = "manifest.json"
FORMAT_VERSION = 1
BACKENDS = ("bm25", "dense")
URL_SCHEMES = ("es+", "elasticsearch+", "opensearch+", "colbert+")


class CorpusIndexError(ValueError):
    """An index cannot be built or opened; the message names the file and what is wrong."""


# --------------------------------------------------------------------------
# corpus reading


def _first_record(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8-sig") as f:
            head = f.read(1)
            while head and head.isspace():
                head = f.read(1)
            if head == "[":
                return "array"
            f.seek(0)
            for n, line in enumerate(f, start=1):
                if line.strip():
                    try:
                        return json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise CorpusIndexError(f"{path}: line {n}: invalid JSON ({exc.msg})") from None
    except UnicodeDecodeError:
        raise CorpusIndexError(str(not_utf8(path))) from None
    raise CorpusIndexError(f"{path}: the corpus file is empty")


def iter_corpus(path: str | Path, fmt: str = "auto", stats: dict | None = None) -> Iterator[Document]:
    """The passages of a corpus file, in file order.

    ``stats`` (a dict, if given) receives ``duplicates_skipped``: the exact
    repeats skipped (same title and text; for ``pages``, repeated pages), and
    ``duplicate_unit`` (``passages`` or ``pages``).

    ``fmt``:

    * ``jsonl`` -- one ``{"id"?, "title"?, "text"}`` object per line,
      streamed (constant memory). A missing id becomes ``p<N>`` (N = passage
      number from 0); ids must be unique; exact repeats of (title, text) are
      indexed once, as in the in-memory path.
    * ``passages`` -- the upstream formats the ``text`` source reads
      (IRCoT/HotpotQA ``contexts``, MuSiQue ``paragraphs``, BlendQA
      ``long_answer``; see ``knowledge_sources.read_passages``).
    * ``pages`` -- the web formats the ``web`` source reads (CRAG
      ``search_results``, or ``url``/``title``/``text`` pages; ``read_pages``).
    * ``auto`` -- ``jsonl`` when the first record is a plain passage,
      otherwise ``passages`` (``search_results`` rows: ``pages``).
    """
    path = Path(path)
    if not path.is_file():
        raise CorpusIndexError(f"no such corpus file {path}")
    if fmt == "auto":
        fmt = detect_format(path)
    stats = {} if stats is None else stats
    stats.update(duplicates_skipped=0, duplicate_unit="pages" if fmt == "pages" else "passages")
    if fmt == "passages":
        from conflict_eval.plugins.knowledge_sources.sources import read_passages

        yield from read_passages(path, stats)
        return
    if fmt == "pages":
        from conflict_eval.plugins.knowledge_sources.sources import read_pages

        yield from read_pages(path, stats=stats)
        return
    if fmt != "jsonl":
        raise CorpusIndexError(f"unknown corpus format {fmt!r}; expected auto, jsonl, passages or pages")
    ids: set[str] = set()
    seen: set[bytes] = set()
    try:
        for line, row in read_jsonl(path):
            if isinstance(row, Exception):
                raise CorpusIndexError(f"{path}: {line}: invalid JSON ({getattr(row, 'msg', row)})")
            if not isinstance(row, dict):
                raise CorpusIndexError(f"{path}: {line}: expected a JSON object, got {type(row).__name__}")
            text, title = row.get("text"), row.get("title")
            rid = row.get("id")
            where = f"{path}: record {rid!r} ({line})" if rid is not None else f"{path}: {line}"
            if not isinstance(text, str) or not text.strip():
                raise CorpusIndexError(f"{where} field 'text': expected a non-empty string, got {text!r:.60}")
            if title is not None and not isinstance(title, str):
                raise CorpusIndexError(f"{where} field 'title': expected a string or null, got {title!r:.60}")
            key = hashlib.blake2b(f"{title}\x00{text}".encode(), digest_size=12).digest()
            if key in seen:
                stats["duplicates_skipped"] += 1
                continue
            seen.add(key)
            doc_id = str(rid) if rid is not None else f"p{len(ids)}"
            if doc_id in ids:
                raise CorpusIndexError(f"{where} field 'id': duplicate passage id {doc_id!r}")
            ids.add(doc_id)
            yield Document(doc_id, text, title)
    except DataFileError as exc:  # empty or not UTF-8: one error type for index users
        raise CorpusIndexError(str(exc)) from None


def detect_format(path: Path) -> str:
    first = _first_record(path)
    if first == "array":
        return "passages"
    if not isinstance(first, dict):
        raise CorpusIndexError(f"{path}: line 1: expected a JSON object")
    if "search_results" in first:
        return "pages"
    if any(k in first for k in ("contexts", "paragraphs", "long_answer")):
        return "passages"
    if "text" in first:
        return "jsonl"
    raise CorpusIndexError(f"{path}: line 1: no passages (expected 'text', or the upstream 'contexts', "
                      f"'paragraphs', 'long_answer' or 'search_results'); keys {sorted(first)}")


# --------------------------------------------------------------------------
# building


def _progress(total: int | None, description: str, enabled: bool):
    """A rich progress bar (a no-op when disabled)."""
    if not enabled:
        class _Null:
            def __enter__(self):
                return self

            def __exit__(self, *a):
                return False

            def advance(self, n: int) -> None:
                pass

        return _Null()
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    class _Bar:
        def __enter__(self):
            self.p = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                              TimeElapsedColumn(), TimeRemainingColumn(), transient=False)
            self.p.__enter__()
            self.t = self.p.add_task(description, total=total)
            return self

        def __exit__(self, *a):
            return self.p.__exit__(*a)

        def advance(self, n: int) -> None:
            self.p.advance(self.t, n)

    return _Bar()


def _count_lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))


def _write_passages(docs: Iterator[Document], out: Path, total: int | None, progress: bool) -> int:
    import numpy as np

    offsets = [0]
    pos = 0
    with open(out / "passages.jsonl", "wb") as f, _progress(total, "reading passages", progress) as bar:
        for d in docs:
            line = (json.dumps({"id": d.id, "title": d.title, "text": d.text}, ensure_ascii=False) + "\n").encode()
            f.write(line)
            pos += len(line)
            offsets.append(pos)
            bar.advance(1)
    np.save(out / "offsets.npy", np.asarray(offsets, dtype=np.int64))
    return len(offsets) - 1


def _iter_store(out: Path) -> Iterator[Document]:
    with open(out / "passages.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            yield Document(row["id"], row["text"], row["title"])


TOKEN_PATTERN = r"(?u)\b\w\w+\b"  # bm25s' default, as the in-memory BM25Retriever uses


def _index_text(d: Document, include_title: bool) -> str:
    return f"{d.title}\n{d.text}" if include_title and d.title else d.text


def _build_bm25(out: Path, n: int, settings: dict, progress: bool, chunk: int = 20000) -> None:
    """Tokenise in chunks into one vocabulary (as ``bm25s.tokenize`` would:
    accents folded, lower case, ``\\w\\w+`` tokens, English stopwords removed), then index
    and save the score matrix."""
    import bm25s
    import numpy as np
    from bm25s.stopwords import STOPWORDS_EN

    stop = set(STOPWORDS_EN) if settings["stopwords"] == "en" else set()
    pattern = re.compile(TOKEN_PATTERN)
    vocab: dict[str, int] = {}
    ids: list[Any] = []
    with _progress(n, "tokenising (bm25)", progress) as bar:
        for d in _iter_store(out):
            text = _index_text(d, settings["include_title"])
            if settings.get("fold_accents"):
                text = fold_accents(text)
            toks = [t for t in pattern.findall(text.lower()) if t not in stop]
            ids.append(np.fromiter((vocab.setdefault(t, len(vocab)) for t in toks), dtype=np.int32))
            bar.advance(1)
    model = bm25s.BM25(k1=settings["k1"], b=settings["b"], method=settings["method"])
    if progress:
        print(f"building the BM25 score matrix ({n} passages, {len(vocab)} terms) ...", flush=True)
    model.index((ids, vocab), show_progress=False)
    del ids
    model.save(str(out / "bm25"), show_progress=False)


def _build_dense(out: Path, n: int, settings: dict, progress: bool) -> None:
    import faiss
    import numpy as np

    from conflict_eval.retrieval import DenseRetriever

    enc = DenseRetriever(model_path=settings.get("model_path"), batch_size=settings["batch_size"])
    model = enc.model
    dim_fn = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dim = int(dim_fn())
    settings["dim"] = dim
    if settings["exact"]:
        index = faiss.IndexFlatIP(dim)
    else:
        index = faiss.IndexHNSWFlat(dim, settings["hnsw_m"], faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = settings["ef_construction"]
    block: list[str] = []
    chunk = max(settings["batch_size"] * 16, 256)
    with _progress(n, "embedding + indexing (dense)", progress) as bar:
        def flush():
            emb = np.ascontiguousarray(enc.encode(block), dtype=np.float32)
            index.add(emb)
            bar.advance(len(block))
            block.clear()

        for d in _iter_store(out):
            block.append(_index_text(d, settings["include_title"]))
            if len(block) >= chunk:
                flush()
        if block:
            flush()
    faiss.write_index(index, str(out / "vectors.faiss"))


def _versions(names: Sequence[str]) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def build_index(
    corpus: str | Path,
    out: str | Path,
    *,
    backend: str = "bm25",
    fmt: str = "auto",
    exact: bool = False,
    include_title: bool = True,
    k1: float = 1.5,
    b: float = 0.75,
    method: str = "lucene",
    model_path: str | None = None,
    batch_size: int = 64,
    hnsw_m: int = 32,
    ef_construction: int = 80,
    ef_search: int = 128,
    overwrite: bool = False,
    progress: bool = True,
) -> dict:
    """Build an index of ``corpus`` in directory ``out``; returns the manifest.

    ``exact`` (dense only) stores a flat index searched exhaustively instead of
    HNSW. ``ef_search`` is recorded and used at query time (HNSW only).
    """
    if backend not in BACKENDS:
        raise CorpusIndexError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if exact and backend != "dense":
        raise CorpusIndexError("--exact applies to the dense backend only (BM25 search is always exact)")
    corpus, out = Path(corpus), Path(out)
    if not corpus.is_file():
        raise CorpusIndexError(f"no such corpus file {corpus}")
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise CorpusIndexError(f"{out} exists and is not empty; pass --overwrite to replace it")
        if not (out / MANIFEST).is_file():
            raise CorpusIndexError(f"{out} is not an index directory (no {MANIFEST}); refusing to overwrite it")
        import shutil

        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    fmt = detect_format(corpus) if fmt == "auto" else fmt
    total = _count_lines(corpus) if fmt == "jsonl" else None
    try:
        stats: dict[str, Any] = {}
        n = _write_passages(iter_corpus(corpus, fmt, stats), out, total, progress)
        if backend == "bm25":
            settings: dict[str, Any] = {"k1": k1, "b": b, "method": method, "stopwords": "en",
                                        "token_pattern": TOKEN_PATTERN, "lowercase": True,
                                        "fold_accents": True, "stemmer": None,
                                        "include_title": include_title, "library": "bm25s", "mmap": True}
            _build_bm25(out, n, settings, progress)
        else:
            from conflict_eval.retrieval import default_dense_model_path

            mp = Path(model_path) if model_path else default_dense_model_path()
            settings = {"model": mp.parent.name if mp.name == "model" else mp.name,
                        "model_path": str(mp), "normalize": True, "metric": "inner_product (cosine)",
                        "batch_size": batch_size, "include_title": include_title, "library": "faiss",
                        "exact": exact, "index_type": "IndexFlatIP" if exact else "IndexHNSWFlat"}
            if not exact:
                settings.update(hnsw_m=hnsw_m, ef_construction=ef_construction, ef_search=ef_search)
            _build_dense(out, n, settings, progress)
            settings.pop("model_path")
            settings["model"] = "all-MiniLM-L6-v2" if "minilm" in settings["model"].replace("_", "-") \
                .lower() else settings["model"]
    except BaseException:
        for p in out.iterdir():  # leave no half-built index behind
            if p.is_file():
                p.unlink()
        raise
    manifest = {
        "format_version": FORMAT_VERSION,
        "backend": backend,
        "corpus": {"file": corpus.name, "path": str(corpus), "sha256": sha256_file(corpus),
                   "bytes": corpus.stat().st_size, "format": fmt},
        "passages": n,
        "duplicates_skipped": stats.get("duplicates_skipped", 0),
        "duplicate_unit": stats.get("duplicate_unit", "passages"),
        "settings": settings,
        "versions": _versions(["conflict-eval", "bm25s", "faiss-cpu", "sentence-transformers", "numpy"]),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "build_seconds": round(time.perf_counter() - started, 2),
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


# --------------------------------------------------------------------------
# opening


def is_index_dir(path: Any) -> bool:
    return isinstance(path, (str, os.PathLike)) and Path(path).is_dir() and (Path(path) / MANIFEST).is_file()


def read_manifest(path: str | Path) -> dict:
    path = Path(path)
    mf = path / MANIFEST
    if not mf.is_file():
        raise CorpusIndexError(f"{path} is not an index directory (no {MANIFEST}); build one with "
                          "`conflict-eval index build CORPUS --out DIR`")
    try:
        manifest = json.loads(mf.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CorpusIndexError(f"{mf}: invalid JSON ({exc.msg})") from None
    for key in ("format_version", "backend", "passages", "settings", "corpus"):
        if key not in manifest:
            raise CorpusIndexError(f"{mf}: field {key!r} is missing")
    if manifest["format_version"] != FORMAT_VERSION:
        raise CorpusIndexError(f"{mf}: format_version {manifest['format_version']} is not supported "
                          f"(expected {FORMAT_VERSION}); rebuild the index")
    if manifest["backend"] not in BACKENDS:
        raise CorpusIndexError(f"{mf}: field 'backend': unknown backend {manifest['backend']!r}")
    return manifest


def _topk(scores: Any, k: int) -> list[int]:
    """Indices of the ``k`` best scores, best first; ties by corpus order."""
    import numpy as np

    n = len(scores)
    k = min(k, n)
    if k >= n:
        return np.argsort(-scores, kind="stable").tolist()
    kth = np.partition(scores, n - k)[n - k]
    cand = np.nonzero(scores >= kth)[0]
    order = np.lexsort((cand, -scores[cand]))
    return cand[order[:k]].tolist()


class PersistentIndex:
    """A built index directory: ``search``/``search_many`` like a Retriever.

    Opened through :func:`open_index`; the score matrix or vector index is
    loaded on the first search (thread-safe) and kept for the process.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).resolve()
        self.manifest = read_manifest(self.path)
        self.name = self.manifest["backend"]
        self._lock = threading.Lock()
        self._loaded = False
        self._mm: Any = None
        self._offsets: Any = None
        self._engine: Any = None

    def __len__(self) -> int:
        return int(self.manifest["passages"])

    @property
    def size(self) -> int:
        return len(self)

    def _load(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            import numpy as np

            for name in ("passages.jsonl", "offsets.npy"):
                if not (self.path / name).is_file():
                    raise CorpusIndexError(f"{self.path}: {name} is missing; rebuild the index")
            self._offsets = np.load(self.path / "offsets.npy", mmap_mode="r")
            if len(self._offsets) != len(self) + 1:
                raise CorpusIndexError(f"{self.path}: offsets.npy has {len(self._offsets) - 1} passages, "
                                  f"the manifest says {len(self)}; rebuild the index")
            f = open(self.path / "passages.jsonl", "rb")
            self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            f.close()
            if self.name == "bm25":
                import bm25s

                self._engine = bm25s.BM25.load(str(self.path / "bm25"), mmap=True, show_progress=False)
            else:
                import faiss

                index_file = self.path / "vectors.faiss"
                if not index_file.is_file():
                    raise CorpusIndexError(f"{self.path}: vectors.faiss is missing; rebuild the index")
                flat = self.manifest["settings"].get("exact")
                # a flat index is memory-mapped; HNSW graphs are read into memory
                self._engine = faiss.read_index(str(index_file), faiss.IO_FLAG_MMAP if flat else 0)
                if not flat:
                    self._engine.hnsw.efSearch = int(self.manifest["settings"].get("ef_search", 128))
                from conflict_eval.retrieval import DenseRetriever

                self._encoder = DenseRetriever(batch_size=int(self.manifest["settings"].get("batch_size", 64)))
            self._loaded = True

    def document(self, i: int) -> Document:
        self._load()
        start, end = int(self._offsets[i]), int(self._offsets[i + 1])
        row = json.loads(self._mm[start:end])
        return Document(row["id"], row["text"], row["title"])

    def _hits(self, pairs: list[tuple[int, float]]) -> list[Hit]:
        hits = []
        for rank, (i, score) in enumerate(pairs, start=1):
            d = self.document(i)
            hits.append(Hit(id=d.id, text=d.text, title=d.title, score=float(score), rank=rank))
        return hits

    def search(self, query: str, k: int = 5) -> list[Hit]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        from conflict_eval.retrieval import _check_k, _check_query

        if isinstance(queries, str):
            raise TypeError("queries must be a sequence of strings; use search() for one query")
        queries = [_check_query(q) for q in queries]
        k = _check_k(k)
        if not queries:
            return []
        self._load()
        if self.name == "bm25":
            return [self._search_bm25(q, k) for q in queries]
        import numpy as np

        emb = np.ascontiguousarray(self._encoder.encode(queries), dtype=np.float32)
        scores, idx = self._engine.search(emb, min(k, len(self)))
        return [self._hits([(int(i), float(s)) for i, s in zip(ri, rs) if i >= 0]) for ri, rs in zip(idx, scores)]

    def _search_bm25(self, query: str, k: int) -> list[Hit]:
        import numpy as np

        stop = None
        if self.manifest["settings"].get("stopwords") == "en":
            from bm25s.stopwords import STOPWORDS_EN

            stop = set(STOPWORDS_EN)
        if self.manifest["settings"].get("fold_accents"):  # as the index was built (older indexes: no folding)
            query = fold_accents(query)
        toks = [t for t in re.findall(TOKEN_PATTERN, query.lower()) if not stop or t not in stop]
        known = [t for t in toks if t in self._engine.vocab_dict]
        if not known:  # no query term in the corpus: no hits (never the first passages)
            return []
        scores = np.asarray(self._engine.get_scores(known), dtype=np.float64)
        return self._hits([(i, scores[i]) for i in _topk(scores, k) if scores[i] > 0])

    def describe(self) -> dict:
        m = self.manifest
        return {"corpus": str(self.path), "corpus_file": m["corpus"].get("file"),
                "corpus_sha256": m["corpus"].get("sha256"), "passages": len(self),
                "backend": f"{m['backend']} index" + (" (exact)" if m["settings"].get("exact") else
                                                      " (HNSW)" if m["backend"] == "dense" else ""),
                "settings": m["settings"]}


_INDEXES: dict[str, PersistentIndex] = {}
_INDEX_LOCK = threading.Lock()


def open_index(path: str | Path) -> PersistentIndex:
    """The index in directory ``path``, opened once per process (keyed by the resolved path)."""
    key = str(Path(path).resolve())
    with _INDEX_LOCK:
        index = _INDEXES.get(key)
        if index is None:
            index = _INDEXES[key] = PersistentIndex(key)
        return index


# --------------------------------------------------------------------------
# one entry point for every corpus setting


class InMemoryCorpus:
    """A corpus file indexed in memory (today's path), with ``describe()``."""

    def __init__(self, path: str | Path | list, retriever: str = "bm25", fmt: str = "passages",
                 pooled_from_dataset: bool = False) -> None:
        from conflict_eval.retrieval import make_retriever

        if fmt == "pages":
            from conflict_eval.plugins.knowledge_sources.sources import read_pages as read
        else:
            from conflict_eval.plugins.knowledge_sources.sources import read_passages as read
        docs = read(path)
        self.retriever = make_retriever(retriever)
        self.retriever.index(docs)
        self.size = len(docs)
        self.backend = retriever
        self.path = path
        self.pooled_from_dataset = pooled_from_dataset

    def __len__(self) -> int:
        return self.size

    def search(self, query: str, k: int = 5) -> list[Hit]:
        return self.retriever.search(query, k)

    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        return self.retriever.search_many(queries, k)

    def describe(self) -> dict:
        files = self.path if isinstance(self.path, (list, tuple)) else [self.path]
        return {"corpus": ", ".join(str(p) for p in files), "passages": self.size,
                "backend": f"{self.backend} (in memory)"}


def is_url_spec(spec: Any) -> bool:
    return isinstance(spec, str) and spec.startswith(URL_SCHEMES)


_CORPORA: dict[tuple, Any] = {}
_CORPUS_LOCK = threading.Lock()


def open_corpus(spec: Any, retriever: str = "bm25", fmt: str = "passages") -> Any:
    """A searcher for ``spec``: an index directory, a search-server URL or a
    corpus file (or list of files) indexed in memory with ``retriever``.

    Cached per process: the same spec (and, for files, retriever) gives the
    same object. ``retriever`` is ignored for index directories (their
    backend is fixed when built) and servers.
    """
    if is_index_dir(spec):
        return open_index(spec)
    if isinstance(spec, (str, os.PathLike)) and Path(spec).is_dir():
        raise CorpusIndexError(f"{spec} is a directory but not an index (no {MANIFEST}); build one with "
                          "`conflict-eval index build CORPUS --out DIR`")
    if is_url_spec(spec):
        from conflict_eval.plugins.knowledge_sources.backends import open_search_server

        key: tuple = ("url", spec)
        factory = lambda: open_search_server(spec)  # noqa: E731
    else:
        files = tuple(str(p) for p in spec) if isinstance(spec, (list, tuple)) else (str(spec),)
        key = ("file", files, retriever, fmt)
        factory = lambda: InMemoryCorpus(list(files) if len(files) > 1 else files[0], retriever, fmt)  # noqa: E731
    with _CORPUS_LOCK:
        if key not in _CORPORA:
            _CORPORA[key] = factory()
        return _CORPORA[key]


def describe_corpus(spec: Any, retriever: str = "bm25") -> dict:
    """What :func:`open_corpus` would search, without building anything:
    ``{corpus|endpoint, passages (None if unknown), backend}``."""
    if is_index_dir(spec):
        return open_index(spec).describe()
    if is_url_spec(spec):
        from conflict_eval.plugins.knowledge_sources.backends import parse_spec

        kind, url = parse_spec(spec)
        return {"endpoint": url, "passages": None, "backend": kind}
    return {"corpus": str(spec), "passages": None, "backend": f"{retriever} (in memory)"}


# --------------------------------------------------------------------------
# the `retrieval` block of eval metadata

COMPARABILITY = (
    "pooled_from_dataset=true: the corpus is built from the evaluated file itself (gold paragraphs "
    "included), so scores are NOT comparable with papers that retrieve from a full corpus "
    "(e.g. AtomR Tables 2-4: ColBERTv2 over Wikipedia dumps). See README 'Retrieval settings'."
)


def describe_source(source: Any) -> dict:
    """``describe()`` of a knowledge source or searcher, with a fallback."""
    fn = getattr(source, "describe", None)
    if fn is not None:
        return dict(fn())
    return {"corpus": None, "passages": getattr(source, "size", None), "backend": type(source).__name__}


def _same_file(corpus: Any, desc: dict, dataset_files: list[str]) -> bool:
    """Is the corpus (a file, or an index built from one) one of the dataset files?"""
    if not dataset_files:
        return False
    shas = {sha256_file(f) for f in dataset_files if Path(f).is_file()}
    if desc.get("corpus_sha256"):
        return desc["corpus_sha256"] in shas
    files = corpus if isinstance(corpus, (list, tuple)) else [corpus]
    return any(isinstance(f, (str, os.PathLike)) and Path(f).is_file() and sha256_file(f) in shas for f in files)


def retrieval_block(sources: dict[str, Any], pooled: dict[str, bool], *,
                    specs: dict[str, Any] | None = None, dataset_files: Sequence[str] = (),
                    **extra: Any) -> dict:
    """``{"source_names", "sources": {name: {corpus|endpoint, passages, backend,
    pooled_from_dataset}}, "pooled_from_dataset", "note"}`` for eval metadata.

    ``sources`` maps a name to a built source (anything with ``describe()``)
    or to a ready description dict. A source also counts as pooled from the
    dataset when its corpus file -- or the file an index was built from
    (manifest sha256) -- is one of ``dataset_files``, whatever the option.
    """
    out: dict[str, Any] = {}
    for name, src in sources.items():
        d = dict(src) if isinstance(src, dict) else describe_source(src)
        d["pooled_from_dataset"] = bool(pooled.get(name, False)) or _same_file(
            (specs or {}).get(name), d, [str(f) for f in dataset_files])
        out[name] = d
    any_pooled = any(d["pooled_from_dataset"] for d in out.values())
    block = {"source_names": list(out), "sources": out, "pooled_from_dataset": any_pooled, **extra}
    if any_pooled and "note" not in block:
        block["note"] = COMPARABILITY
    return block
