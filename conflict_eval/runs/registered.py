"""Which Inspect tasks a suite may name: the ``conflict_eval/`` tasks and the
model providers Inspect knows (used by :mod:`conflict_eval.runs.spec`)."""

from __future__ import annotations

import functools
from typing import Any

GENERIC_TASK = "conflict_eval/run"


def registered_tasks() -> dict[str, Any]:
    """Every Inspect task under ``conflict_eval/`` (name -> task function).

    Found through public API only: the Inspect entry point
    (:func:`conflict_eval._registry.task_modules`) imports every
    ``tasks/<name>/task.py`` module and its ``@task`` functions are recognised
    by ``inspect_ai.util.registry_info``. A new task folder joins without an edit.
    """
    from inspect_ai.util import registry_info

    from conflict_eval._registry import task_modules

    found: dict[str, Any] = {}
    for module in task_modules():
        for obj in vars(module).values():
            if not callable(obj):
                continue
            try:
                info = registry_info(obj)
            except (ValueError, AttributeError):
                continue
            if info.type == "task" and info.name.startswith("conflict_eval/"):
                found[info.name] = obj
    return dict(sorted(found.items()))


def registry_yaml_tasks() -> set[str]:
    """Task names listed in ``registry.yaml`` under any method, dataset or metric."""
    from conflict_eval.components.catalog import SECTIONS, load_registry

    data = load_registry()
    names: set[str] = set()
    for section in SECTIONS.values():
        for entry in (data.get(section) or {}).values():
            names.update((entry or {}).get("tasks") or [])
    return names


def paper_tasks(include_generic: bool = False) -> list[str]:
    """Names of the tasks ``registered: paper`` (or ``all``) expands to."""
    names = set(registered_tasks()) | registry_yaml_tasks()
    if not include_generic:
        names.discard(GENERIC_TASK)
    return sorted(names)


@functools.lru_cache(maxsize=None)
def provider_known(provider: str) -> bool:
    """Whether Inspect has a model API named ``provider`` (built-in or from an
    installed package's ``inspect_ai`` entry point), through public API only.

    ``inspect_ai.util.registry_create("modelapi", name)`` raises ``LookupError``
    for an unknown name; for a known one it fails constructing the API without
    a model name (or reports a missing client package), which we take as "known"
    -- nothing is connected or loaded.
    """
    from importlib.metadata import entry_points

    from inspect_ai.util import registry_create

    import inspect_ai.model  # noqa: F401  (registers the built-in providers)

    packages = []
    for ep in entry_points(group="inspect_ai"):
        try:
            ep.load()
        except Exception:  # a broken third-party package must not hide the others
            continue
        packages.append(ep.name)
    for name in [provider, *(f"{p}/{provider}" for p in packages)]:
        try:
            registry_create("modelapi", name)
        except LookupError:
            continue
        except Exception:
            return True
        return True
    return False

