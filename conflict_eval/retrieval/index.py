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
"""

from __future__ import annotations

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
from conflict_eval.retrieval.base import Document, Hit, _check_k, _check_query, fold_accents
from conflict_eval.retrieval.corpus import CorpusIndexError, detect_format, iter_corpus

__all__ = ["PersistentIndex", "build_index", "is_index_dir", "open_index", "read_manifest"]

MANIFEST = "manifest.json"
FORMAT_VERSION = 1
BACKENDS = ("bm25", "dense")


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

    from conflict_eval.retrieval.dense import DenseRetriever

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
            from conflict_eval.retrieval.dense import default_dense_model_path

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
                from conflict_eval.retrieval.dense import DenseRetriever

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
