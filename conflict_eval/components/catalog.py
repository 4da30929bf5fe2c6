"""Read ``registry.yaml``: the description of what ships with conflict-eval."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

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
