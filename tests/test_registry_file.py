"""registry.yaml and the registered built-in plugins must agree."""

import inspect

import pytest

from conflict_eval.components.manager import components
from conflict_eval.components.catalog import SECTIONS, load_registry


def _builtins(kind):
    return {n: c for n, c in components()[kind].items() if c.distribution == "conflict-eval"}


@pytest.mark.parametrize("kind", list(SECTIONS))
def test_registry_lists_exactly_the_builtins(kind):
    listed = load_registry()[SECTIONS[kind]]
    registered = _builtins(kind)
    assert sorted(listed) == sorted(registered), (
        f"registry.yaml {SECTIONS[kind]} and registered built-in {kind}s differ: "
        f"only in yaml {sorted(set(listed) - set(registered))}, "
        f"only registered {sorted(set(registered) - set(listed))}"
    )
    for name, entry in listed.items():
        assert entry["plugin"] == registered[name].plugin, f"{kind} {name}: plugin differs"


@pytest.mark.parametrize("kind", list(SECTIONS))
def test_registry_defaults_match_factories(kind):
    for name, entry in load_registry()[SECTIONS[kind]].items():
        factory = components()[kind][name].factory
        params = inspect.signature(factory).parameters
        for key, value in (entry.get("defaults") or {}).items():
            assert key in params, f"{kind} {name}: registry default {key!r} is not a parameter"
            assert params[key].default == value, (
                f"{kind} {name}: registry says {key}={value!r}, factory default is "
                f"{params[key].default!r}")


def test_registry_entries_are_complete():
    reg = load_registry()
    for section in SECTIONS.values():
        for name, entry in reg[section].items():
            for key in ("plugin", "paper", "reference", "tasks"):
                assert key in entry, f"{section}.{name} lacks {key!r}"
            if entry["paper"] is not None:
                assert entry["paper"] in reg["papers"], f"{section}.{name}: unknown paper"
            for t in entry["tasks"]:
                assert t.startswith("conflict_eval/")
    for name, entry in reg["datasets"].items():
        assert "revision" in entry and "source" in entry, f"datasets.{name} lacks source/revision"
        if entry["source"] not in ("bundled", "derived") and entry["source"] is not None:
            assert entry["revision"], f"datasets.{name}: download source needs a pinned revision"


def test_registry_tasks_resolve():
    from conflict_eval.runs import registered_tasks

    registered = registered_tasks()
    reg = load_registry()
    for section in SECTIONS.values():
        for name, entry in reg[section].items():
            for t in entry["tasks"]:
                assert t in registered, f"{section}.{name}: task {t} not found"
