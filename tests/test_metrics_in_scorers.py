"""Every metric's scorer code lives in scorers/ (CONTRIBUTING: a metric goes in
``scorers/<metric or paper>/``; a plugin or task that needs one imports it).

An AST walk over the folders that setup.py maps into ``conflict_eval`` finds
every function decorated with Inspect's ``@scorer`` or ``@metric`` (under any
local name, nested too) and every ``conflict_eval_register_metrics`` hook implementation; none
may sit outside ``scorers/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DECORATORS = {"scorer", "metric"}
HOOK = "conflict_eval_register_metrics"


def _folders() -> dict[str, str]:
    """setup.py's FOLDERS (package -> folder), read without running setup()."""
    for node in ast.parse((ROOT / "setup.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "FOLDERS":
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no FOLDERS")


def _inspect_names(tree: ast.Module) -> tuple[dict[str, str], set[str]]:
    """Local names bound to ``inspect_ai.scorer.scorer`` / ``.metric``, and names bound
    to the ``inspect_ai.scorer`` module itself."""
    names, modules = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "inspect_ai.scorer":
            for a in node.names:
                if a.name in DECORATORS:
                    names[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module == "inspect_ai":
            modules.update(a.asname or a.name for a in node.names if a.name == "scorer")
        elif isinstance(node, ast.Import):
            modules.update(a.asname for a in node.names if a.name == "inspect_ai.scorer" and a.asname)
    return names, modules


def _decorator_kind(dec: ast.expr, names: dict[str, str], modules: set[str]) -> str | None:
    target = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(target, ast.Name):
        return names.get(target.id)
    if isinstance(target, ast.Attribute) and target.attr in DECORATORS:
        owner = ast.unparse(target.value)
        if owner in modules or owner == "inspect_ai.scorer":
            return target.attr
    return None


def metric_code(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` for each ``@scorer`` / ``@metric`` function and metric hook in ``source``."""
    tree = ast.parse(source)
    names, modules = _inspect_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == HOOK and any(ast.unparse(d).endswith("hookimpl") for d in node.decorator_list):
                found.append((node.lineno, f"{HOOK}()"))  # an implementation (hookspecs.py holds the spec)
            for dec in node.decorator_list:
                kind = _decorator_kind(dec, names, modules)
                if kind:
                    found.append((node.lineno, f"@{kind} {node.name}"))
    return found


def outside_scorers(root: Path = ROOT) -> list[str]:
    out = []
    for package, folder in _folders().items():  # the package's folders, as setup.py maps them
        if package == "conflict_eval.scorers":
            continue
        for path in sorted((root / folder).rglob("*.py")):
            for line, what in metric_code(path.read_text(encoding="utf-8")):
                out.append(f"{path.relative_to(root)}:{line}: {what}")
    return out


def test_no_metric_code_outside_scorers():
    assert outside_scorers() == [], "metric code belongs in scorers/<metric or paper>/"


def test_the_scorers_folder_is_where_the_metrics_are():
    """The walk sees the scorers it must: the moved metrics are found in scorers/."""
    found = {what for path in (ROOT / "scorers").rglob("*.py")
             for _, what in metric_code(path.read_text(encoding="utf-8"))}
    for name in ("@scorer overrationalization", "@scorer microact_trajectory", "@scorer atomr_qa",
                 "@scorer ramdocs_strict_em", "@scorer memorization_ratio", "@scorer yes_no_accuracy",
                 "@scorer knowledge_recall", "@scorer triplet_parsing", "@scorer conflict_detection",
                 "@scorer truthfulqa_settings", "@metric regeneration_effect", "@metric m"):
        assert name in found, name


def test_the_walk_finds_scorer_code_in_any_shape():
    source = '''
import inspect_ai.scorer as isc
from inspect_ai import scorer as scorer_module
from inspect_ai.scorer import metric as m, scorer

@scorer(metrics=[])
def plain(): ...

@isc.scorer(metrics=[])
def through_module(): ...

@scorer_module.metric
def through_package(): ...

def factory(name):
    @m(name=name)
    def nested(): ...
    return nested

@hookimpl
def conflict_eval_register_metrics():
    return {}

@hookspec
def conflict_eval_register_metrics():
    """the spec itself is not a metric"""

@other.scorer
def not_inspect(): ...
'''
    assert sorted(what for _, what in metric_code(source)) == sorted([
        "@scorer plain", "@scorer through_module", "@metric through_package", "@metric nested",
        "conflict_eval_register_metrics()"])


def test_a_scorer_in_a_plugin_is_reported(tmp_path, monkeypatch):
    for folder in _folders().values():
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / "plugins" / "unit").mkdir()
    (tmp_path / "plugins" / "unit" / "scorer.py").write_text(
        "from inspect_ai.scorer import scorer\n\n\n@scorer(metrics=[])\ndef stray():\n    ...\n", encoding="utf-8")
    (tmp_path / "scorers" / "ok.py").write_text(
        "from inspect_ai.scorer import metric\n\n\n@metric\ndef fine():\n    ...\n", encoding="utf-8")
    assert outside_scorers(tmp_path) == ["plugins/unit/scorer.py:5: @scorer stray"]
