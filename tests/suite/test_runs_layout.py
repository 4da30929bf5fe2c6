"""conflict_eval/runs/: modules stay small, and nothing in it imports plugins or tasks or imports in a cycle."""

import ast
from pathlib import Path

import pytest

RUNS = Path(__file__).resolve().parents[2] / "conflict_eval" / "runs"


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


@pytest.mark.parametrize("path", sorted(RUNS.glob("*.py")), ids=lambda p: p.name)
def test_module_is_small_and_imports_no_plugin_or_task(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 400
    bad = {m for m in _imports(path) if m.split(".")[:2] in (["conflict_eval", "plugins"],
                                                             ["conflict_eval", "tasks"], ["conflict_eval", "scorers"])}
    assert not bad


def test_no_import_cycle_inside_runs():
    graph = {p.stem: {m.rsplit(".", 1)[-1] for m in _imports(p) if m.startswith("conflict_eval.runs.")}
             for p in RUNS.glob("*.py") if p.stem != "__init__"}

    def reaches(start, goal, seen=()):
        return any(n == goal or (n not in seen and reaches(n, goal, (*seen, n))) for n in graph.get(start, ()))

    assert not [m for m in graph if reaches(m, m)]
