"""Read ``registry.yaml``: the description of what ships with conflict-eval,
and where a run's dataset came from by it (``dataset_record``)."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from conflict_eval.records.download import cache_dir, ids_sha256, sha256_file

SECTIONS = {"method": "methods", "dataset": "datasets", "metric": "metrics", "source": "sources"}


@lru_cache(maxsize=1)
def load_registry() -> dict[str, Any]:
    """The parsed registry file shipped in the package."""
    text = (files("conflict_eval") / "registry.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text) or {}
    for section in SECTIONS.values():
        data.setdefault(section, {})
    return data


def entry(kind: str, name: str) -> dict[str, Any] | None:
    """The registry entry for a built-in component, or None for third-party ones."""
    return load_registry()[SECTIONS[kind]].get(name)


def registry_revision(name: str | None) -> str:
    """Where a registered dataset comes from, as ``registry.yaml`` pins it."""
    if not name:
        return "unknown"
    entry = (load_registry().get("datasets") or {}).get(name)
    if not entry:
        return "not in registry.yaml"
    source, rev = entry.get("source"), entry.get("revision")
    if source in ("bundled", "derived"):
        return f"{source} (conflict-eval {rev or 'package'})"
    return f"{source}@{rev}" if rev else f"{source} (no pinned revision)"


def _shown(file: Path, given: str | None) -> str:
    """A data file's name without any absolute local path: relative to the
    download cache or the package, the path as given when relative, else its
    folder and file name."""
    for root, prefix in ((cache_dir(), "cache:"), (Path(str(files("conflict_eval"))), "conflict_eval/")):
        try:
            return prefix + file.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    if given and not Path(given).is_absolute():
        return Path(given).as_posix()
    return "/".join(file.parts[-2:])


def dataset_record(name: str, samples, path: str | None = None) -> dict:
    """What a run records about its data (task metadata
    ``conflict_eval_provenance["dataset"]``): the file read (never an absolute
    path), its sha256, the upstream revision, and the sha256 of the sample ids."""
    where = path or getattr(samples, "location", None)
    file = Path(where) if where and Path(where).is_file() else None
    ids = [s.id for s in samples]
    return {
        "name": name,
        "file": _shown(file, path) if file else None,
        "sha256": sha256_file(file) if file else None,
        "revision": (f"local file {_shown(file, path)} (registry: {registry_revision(name)})" if path and file
                     else registry_revision(name)),
        "sample_ids_sha256": ids_sha256(ids) if all(i is not None for i in ids) else None,
        "samples": len(ids),
    }
