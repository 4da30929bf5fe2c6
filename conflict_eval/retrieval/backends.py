"""The retrieval backends by name: :data:`RETRIEVERS` and :func:`make_retriever`.

A new backend is a module of this package with a :class:`~conflict_eval.retrieval.base._BaseRetriever`
subclass, added to :data:`RETRIEVERS` here.
"""

from __future__ import annotations

from typing import Any

from conflict_eval.retrieval.base import Retriever, _BaseRetriever
from conflict_eval.retrieval.bm25 import BM25Retriever
from conflict_eval.retrieval.dense import DenseRetriever

__all__ = ["RETRIEVERS", "make_retriever"]

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
