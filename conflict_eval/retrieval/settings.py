"""The one way to open any corpus setting, and the ``retrieval`` block of eval metadata.

:func:`open_corpus` turns any corpus setting the tasks accept into a
searcher: an index directory, a corpus file (indexed in memory, as before),
or a search-server URL (``es+http://HOST:9200/INDEX``, ``opensearch+...``,
``colbert+http://HOST:PORT/api/search``; see
:mod:`conflict_eval.retrieval.servers`). Every searcher has
``search(query, k)``, ``search_many(queries, k)`` and ``describe()`` -- the
dict recorded in eval metadata under ``retrieval``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conflict_eval.records.download import sha256_file
from conflict_eval.retrieval.backends import make_retriever
from conflict_eval.retrieval.base import Hit
from conflict_eval.retrieval.corpus import CorpusIndexError
from conflict_eval.retrieval.index import MANIFEST, is_index_dir, open_index

__all__ = ["describe_corpus", "describe_source", "open_corpus", "retrieval_block"]

URL_SCHEMES = ("es+", "elasticsearch+", "opensearch+", "colbert+")


# --------------------------------------------------------------------------
# one entry point for every corpus setting


class InMemoryCorpus:
    """A corpus file indexed in memory (today's path), with ``describe()``."""

    def __init__(self, path: str | Path | list, retriever: str = "bm25", fmt: str = "passages",
                 pooled_from_dataset: bool = False) -> None:
        if fmt == "pages":
            from conflict_eval.retrieval.sources import read_pages as read
        else:
            from conflict_eval.retrieval.sources import read_passages as read
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
        from conflict_eval.retrieval.servers import open_search_server

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
        from conflict_eval.retrieval.servers import parse_spec

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
