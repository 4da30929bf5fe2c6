"""The retrieval interface: documents, hits, the ``Retriever`` protocol and
the corpus handling, validation and ranking every backend shares.

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
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ["Document", "Hit", "Retriever", "as_document", "fold_accents"]


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
    if text.isascii():  # NFKD leaves ASCII as it is and ASCII has no combining mark: most corpora, at once
        return text
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
