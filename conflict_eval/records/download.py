"""Downloading upstream dataset files at pinned revisions, with a local cache.

Dataset plugins call :func:`github_file` or :func:`hf_dataset_file` with a
pinned commit / revision (listed in ``registry.yaml``); users who are offline
pass ``-T path=LOCAL_FILE`` instead. Files are cached under
``$CONFLICT_EVAL_CACHE/data`` (default ``~/.cache/conflict_eval/data``) and
written atomically.

Set ``CONFLICT_EVAL_OFFLINE=1`` to forbid network access: a download then
fails at once with a message saying which file was wanted and how to pass it
with ``-T path=``. The test suite sets it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path


class DownloadError(RuntimeError):
    """A dataset file could not be fetched; the message says how to supply it."""


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
        raise DownloadError(
            f"{name}: network access is disabled (CONFLICT_EVAL_OFFLINE); "
            f"download {url} yourself and pass it with -T path=FILE"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            shutil.copyfileobj(resp, out)
        if sha256 is not None and sha256_file(tmp) != sha256:
            raise DownloadError(f"{name}: checksum mismatch for {url}")
        os.replace(tmp, dest)
    except DownloadError:
        raise
    except Exception as exc:
        raise DownloadError(
            f"{name}: could not download {url} ({type(exc).__name__}: {exc}); "
            "if you are offline, fetch the file elsewhere and pass it with -T path=FILE"
        ) from exc
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
        raise DownloadError(
            f"{repo_id}/{filename}@{revision}: network access is disabled "
            "(CONFLICT_EVAL_OFFLINE); pass a local copy with -T path=FILE"
        )
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:  # pragma: no cover
        raise DownloadError("install huggingface_hub to download hub datasets") from exc
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
        raise DownloadError(
            f"{repo_id}/{filename}@{revision}: download failed ({type(exc).__name__}: {exc}); "
            "pass a local copy with -T path=FILE"
        ) from exc


def ids_sha256(ids) -> str:
    """sha256 over the sorted sample ids, one per line."""
    return hashlib.sha256("\n".join(sorted(map(str, ids))).encode()).hexdigest()
