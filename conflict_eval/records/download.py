"""Downloading upstream dataset files at pinned revisions, with a local cache.

Dataset plugins call :func:`github_file` or :func:`hf_dataset_file` with a
pinned commit / revision (listed in ``registry.yaml``); users who are offline
give a local file as the task's ``path`` instead (``-T path=LOCAL_FILE``). Files are cached under
``$CONFLICT_EVAL_CACHE/data`` (default ``~/.cache/conflict_eval/data``) and
written atomically.

Set ``CONFLICT_EVAL_OFFLINE=1`` to forbid network access: a download then
fails at once with a :class:`DownloadError` (a
:class:`~conflict_eval.records.errors.DataNeeded`) saying which file was wanted and
how to give it. The test suite sets it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path

from conflict_eval.records.errors import DataNeeded


class DownloadError(DataNeeded):
    """A dataset file could not be fetched (``kind`` ``offline`` or ``download failed``);
    the message says how to supply it."""


def cache_root() -> Path:
    """Root of conflict-eval's on-disk cache: ``$CONFLICT_EVAL_CACHE`` if set,
    else ``~/.cache/conflict_eval``."""
    env = os.environ.get("CONFLICT_EVAL_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "conflict_eval"


def cache_dir() -> Path:
    """Where downloaded dataset files are cached: ``<cache_root()>/data``."""
    path = cache_root() / "data"
    path.mkdir(parents=True, exist_ok=True)
    return path


def offline() -> bool:
    return os.environ.get("CONFLICT_EVAL_OFFLINE", "").lower() in ("1", "true", "yes")


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks (constant memory)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def fetch_url(url: str, name: str, *, sha256: str | None = None, timeout: float = 60) -> Path:
    """Download ``url`` into the cache as ``name`` (once) and return the path.

    ``file://`` URLs are copied, so the same code path is testable offline.
    With ``sha256`` the file is verified after download.
    """
    dest = cache_dir() / name
    if dest.is_file():
        return dest
    if offline() and not url.startswith("file://"):
        raise DownloadError(None, "offline", f"fetch {url} elsewhere", file=name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            shutil.copyfileobj(resp, out)
        if sha256 is not None and sha256_file(tmp) != sha256:
            raise DownloadError(None, "download failed", f"checksum mismatch for {url}", file=name)
        os.replace(tmp, dest)
    except DownloadError:
        raise
    except Exception as exc:
        raise DownloadError(None, "download failed", f"{url} ({type(exc).__name__}: {exc})",
                            file=name) from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest


def github_file(repo: str, commit: str, path: str, *, sha256: str | None = None) -> Path:
    """A file of a GitHub repository at a pinned commit (40 hex digits)."""
    if len(commit) != 40:
        raise ValueError(f"pin {repo} to a full commit hash, got {commit!r}")
    url = f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"
    name = f"github/{repo}/{commit}/{path}"
    return fetch_url(url, name, sha256=sha256)


def hf_dataset_file(repo_id: str, filename: str, revision: str) -> Path:
    """A file of a Hugging Face dataset repository at a pinned revision."""
    if offline():
        raise DownloadError(None, "offline", file=f"{repo_id}/{filename}@{revision}")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:  # pragma: no cover
        raise DownloadError(None, "download failed", "install huggingface_hub to download hub datasets",
                            file=f"{repo_id}/{filename}@{revision}") from exc
    try:
        return Path(
            hf_hub_download(
                repo_id=repo_id,
                filename=filename,
                revision=revision,
                repo_type="dataset",
                cache_dir=str(cache_dir() / "hf"),
            )
        )
    except Exception as exc:
        raise DownloadError(None, "download failed", f"{type(exc).__name__}: {exc}",
                            file=f"{repo_id}/{filename}@{revision}") from exc


def ids_sha256(ids) -> str:
    """sha256 over the sorted sample ids, one per line."""
    return hashlib.sha256("\n".join(sorted(map(str, ids))).encode()).hexdigest()
