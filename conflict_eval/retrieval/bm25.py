""":class:`BM25Retriever` (``"bm25"``) -- Okapi BM25 via ``bm25s`` (Lucene
  variant, ``k1=1.5``, ``b=0.75`` by default), lower-cased word tokens of two or
  more characters with Unicode accents folded (:func:`fold_accents`, the same
  at index and query time: ``Aschenbrodel`` finds ``Aschenbrödel``), English
  stopwords removed, no stemming.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from conflict_eval.retrieval.base import _as_corpus, _BaseRetriever, fold_accents

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ["BM25Retriever"]


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
