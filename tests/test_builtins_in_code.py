"""Built-ins are registered in code (components.manager.DEFAULT_PLUGINS, as
datasette registers its default plugins): a new built-in dataset is a folder
under conflict_eval.plugins plus one line in that list -- no pyproject.toml
entry point, no reinstall -- and it runs through conflict_eval/run."""

import json
import textwrap

import pytest
from inspect_ai import eval as inspect_eval

import conflict_eval.plugins
from conflict_eval.components import manager
from conflict_eval.testing import scripted_model

UNIT_INIT = '''
"""Plugin: a built-in dataset made by tests/test_builtins_in_code.py."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_datasets():
    from .dataset import tiny_qa

    return {"tiny_qa": tiny_qa}
'''

UNIT_DATASET = '''
from pathlib import Path

from conflict_eval.records import ConflictQA, build_dataset, check_file, convert_rows, read_jsonl

DATA = Path(__file__).with_name("tiny_qa.jsonl")


def tiny_qa(path: str | None = None, limit: int | None = None):
    source = check_file(path or str(DATA), "tiny_qa")
    records = convert_rows("tiny_qa", read_jsonl(source),
                           lambda row: ConflictQA(dataset="tiny_qa", **{k: row[k] for k in row}), file=source)
    return build_dataset("tiny_qa", records, location=str(source), limit=limit)
'''

ROWS = [
    {"id": "t1", "question": "Which planet is closest to the Sun?", "options": ["Mercury", "Venus"],
     "answers": ["Mercury"], "gold_option": "A", "evidence": [], "conflict_type": "none",
     "setting": "conflict_free"},
    {"id": "t2", "question": "What is the largest ocean?", "options": ["Atlantic", "Pacific"],
     "answers": ["Pacific"], "gold_option": "B", "evidence": [], "conflict_type": "none",
     "setting": "conflict_free"},
]


def _reset():
    manager._manager, manager._components = None, None
    manager._builtin_cache.clear()


@pytest.fixture
def tiny_unit(tmp_path, monkeypatch):
    unit = tmp_path / "tiny_unit"
    unit.mkdir()
    (unit / "__init__.py").write_text(textwrap.dedent(UNIT_INIT), encoding="utf-8")
    (unit / "dataset.py").write_text(textwrap.dedent(UNIT_DATASET), encoding="utf-8")
    (unit / "tiny_qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    # the folder joins conflict_eval.plugins in place (an editable checkout's plugins/ works the same
    # way): nothing is installed, and no entry point names it
    monkeypatch.setattr(conflict_eval.plugins, "__path__", [*conflict_eval.plugins.__path__, str(tmp_path)])
    monkeypatch.setitem(manager.DEFAULT_PLUGINS, "tiny_unit", "conflict_eval.plugins.tiny_unit")
    _reset()
    yield unit
    monkeypatch.undo()
    _reset()


def test_a_new_builtin_dataset_registered_in_code_runs(tiny_unit, log_dir):
    from importlib.metadata import entry_points

    assert "tiny_unit" not in {ep.name for ep in entry_points(group="conflict_eval")}
    c = manager.get_dataset("tiny_qa")
    assert (c.plugin, c.origin, c.distribution) == ("tiny_unit", "built-in", "conflict-eval")
    model = scripted_model(["<a>A</a>", "<a>A</a>"])
    [log] = inspect_eval("conflict_eval/run", task_args={"dataset": "tiny_qa"}, model=model,
                         log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    assert log.results.total_samples == 2 and len(model.script.calls) == 2
    assert "Which planet is closest to the Sun?" in model.script.calls[0][-1].text


def test_every_default_plugin_is_the_builtin_that_registers_it():
    """registry.yaml is checked against these (tests/test_registry_file.py); here: each
    DEFAULT_PLUGINS line loads and registers under its own name as a built-in."""
    _reset()
    found = manager.components()
    plugins = {c.plugin for kind in found.values() for c in kind.values() if c.origin == "built-in"}
    assert plugins == set(manager.DEFAULT_PLUGINS)
