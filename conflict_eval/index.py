"""Deprecated: use :mod:`conflict_eval.retrieval` (``corpus``, ``index``, ``settings``); kept for one release."""

import warnings

from conflict_eval.retrieval.corpus import CorpusIndexError, _first_record, detect_format, iter_corpus  # noqa: F401
from conflict_eval.retrieval.index import (  # noqa: F401
    BACKENDS, FORMAT_VERSION, MANIFEST, TOKEN_PATTERN, PersistentIndex, build_index, is_index_dir, open_index,
    read_manifest)
from conflict_eval.retrieval.settings import (  # noqa: F401
    COMPARABILITY, URL_SCHEMES, InMemoryCorpus, describe_corpus, describe_source, is_url_spec, open_corpus,
    retrieval_block)

__all__ = ["CorpusIndexError", "PersistentIndex", "build_index", "describe_corpus", "is_index_dir",
           "iter_corpus", "open_corpus", "open_index", "read_manifest"]

warnings.warn("conflict_eval.index is deprecated; import from conflict_eval.retrieval",
              DeprecationWarning, stacklevel=2)
