"""No solver under scorers/ or tasks/ (CONTRIBUTING: a method's ``@solver``
factories live in ``plugins/<unit>/``; a task imports them from there, and a
scorer never holds one).

An AST walk over ``scorers/`` and ``tasks/`` finds every function decorated
with Inspect's ``@solver`` (under any local name, through the module, with or
without arguments, nested too) and every registration by call
(``solver(fn)``, ``solver(name="x")(fn)``); none may be there.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("scorers", "tasks")


def _solver_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Local names bound to ``inspect_ai.solver.solver`` (or ``inspect_ai.solver``'s
    ``solver`` re-export), and names bound to the ``inspect_ai.solver`` module."""
    names, modules = set(), {"inspect_ai.solver"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("inspect_ai.solver", "inspect_ai"):
            for a in node.names:
                if a.name == "solver":
                    (names if node.module == "inspect_ai.solver" else modules).add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            modules.update(a.asname for a in node.names if a.name == "inspect_ai.solver" and a.asname)
    return names, modules


def _is_solver(expr: ast.expr, names: set[str], modules: set[str]) -> bool:
    """``solver``, ``solver(...)``, ``module.solver`` or ``module.solver(...)``."""
    target = expr.func if isinstance(expr, ast.Call) else expr
    if isinstance(target, ast.Name):
        return target.id in names
    return isinstance(target, ast.Attribute) and target.attr == "solver" and ast.unparse(target.value) in modules


def solver_code(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` for each ``@solver`` function and ``solver(...)`` registration in ``source``."""
    tree = ast.parse(source)
    names, modules = _solver_names(tree)
    found, decorators = [], set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                if _is_solver(dec, names, modules):
                    found.append((node.lineno, f"@solver {node.name}"))
                    decorators.add(id(dec))
    for node in ast.walk(tree):
        # the call of ``solver`` itself (``solver(name="y")(fn)`` counts once, at its inner call)
        if (isinstance(node, ast.Call) and id(node) not in decorators and not isinstance(node.func, ast.Call)
                and _is_solver(node.func, names, modules)):
            found.append((node.lineno, f"solver({ast.unparse(node.args[0]) if node.args else '...'}) registration"))
    return sorted(found)


def solvers_in(root: Path = ROOT) -> list[str]:
    return [f"{path.relative_to(root).as_posix()}:{line}: {what}"
            for folder in FOLDERS for path in sorted((root / folder).rglob("*.py"))
            for line, what in solver_code(path.read_text(encoding="utf-8"))]


def test_no_solver_under_scorers_or_tasks():
    assert solvers_in() == [], "a @solver belongs in plugins/<unit>/ (the method's own folder)"


def test_the_walk_sees_the_solvers_that_moved_to_plugins():
    found = {what for path in (ROOT / "plugins" / "conflictscore").rglob("*.py")
             for _, what in solver_code(path.read_text(encoding="utf-8"))}
    assert found == {"@solver conflict_regenerate", "@solver write_report", "@solver rag_answer",
                     "@solver control_rag_answer"}


def test_the_walk_finds_solver_code_in_any_shape():
    source = '''
import inspect_ai.solver as isv
from inspect_ai import solver as solver_module
from inspect_ai.solver import solver as make_solver, generate

@make_solver
def plain(): ...

@isv.solver(name="x")
def through_module(): ...

@solver_module.solver
def through_package(): ...

def factory():
    @make_solver()
    def nested(): ...
    return nested

def by_call(): ...

registered = make_solver(by_call)
named = isv.solver(name="y")(by_call)

@other.solver
def not_inspect(): ...

@generate
def not_a_registration(): ...
'''
    assert [what for _, what in solver_code(source)] == [
        "@solver plain", "@solver through_module", "@solver through_package", "@solver nested",
        "solver(by_call) registration", "solver(...) registration"]


def test_a_solver_in_a_scorer_or_task_is_reported(tmp_path):
    for folder in FOLDERS:
        (tmp_path / folder / "unit").mkdir(parents=True)
    (tmp_path / "scorers" / "unit" / "regen.py").write_text(
        "from inspect_ai.solver import solver\n\n\n@solver\ndef stray():\n    ...\n", encoding="utf-8")
    (tmp_path / "tasks" / "unit" / "task.py").write_text(
        "from inspect_ai import solver\n\n\ndef answer():\n    ...\n\n\nanswer = solver.solver(answer)\n",
        encoding="utf-8")
    assert solvers_in(tmp_path) == ["scorers/unit/regen.py:5: @solver stray",
                                    "tasks/unit/task.py:8: solver(answer) registration"]
