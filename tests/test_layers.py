"""The map of CONTRIBUTING.md is a test: the import-linter contracts in
pyproject.toml ([tool.importlinter]) hold, and an import against the map breaks them.

lint-imports reads a package from its folder, but setup.py maps plugins/, scorers/
and tasks/ into conflict_eval.*; so each test lays the installed layout out in a
temporary folder (copies of the .py files) and runs lint-imports on it.
"""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _folders() -> dict[str, str]:
    """setup.py's FOLDERS (package -> folder), read without running setup()."""
    for node in ast.parse((ROOT / "setup.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "FOLDERS":
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no FOLDERS")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    for package, folder in _folders().items():
        for src in (ROOT / folder).rglob("*.py"):
            dst = site / package.replace(".", "/") / src.relative_to(ROOT / folder)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    shutil.copyfile(ROOT / "pyproject.toml", site / "pyproject.toml")
    return site


@pytest.fixture
def site(installed, tmp_path) -> Path:
    """A copy of the laid-out package that a test may add a module to."""
    return Path(shutil.copytree(installed, tmp_path / "site"))


def lint(site: Path, *contracts: str) -> subprocess.CompletedProcess:
    args = ["--config", str(site / "pyproject.toml"), "--no-cache"]
    for c in contracts:
        args += ["--contract", c]
    code = "import sys; from importlinter.cli import lint_imports_command; sys.argv[1:] = %r; lint_imports_command()"
    env = {**os.environ, "PYTHONPATH": str(site), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-c", code % args], cwd=site, env=env, capture_output=True,
                          text=True, timeout=120)


def add_module(site: Path, path: str, text: str) -> None:
    f = site / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text, encoding="utf-8")


def test_the_contracts_hold(installed):
    out = lint(installed)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 5 kept, 0 broken." in out.stdout
    assert "Analyzed" in out.stdout and "conflict_eval.plugins" not in out.stderr


def test_report_importing_cli_breaks_the_layers(site):
    assert lint(site, "core-layers").returncode == 0
    add_module(site, "conflict_eval/report/reach_up.py", "from conflict_eval.cli import main\n")
    out = lint(site, "core-layers")
    assert out.returncode == 1, out.stdout
    assert "BROKEN" in out.stdout and "conflict_eval.report.reach_up -> conflict_eval.cli.main" in out.stdout


def test_a_plugin_importing_another_plugin_breaks_independence(site):
    assert lint(site, "plugins-independent").returncode == 0
    add_module(site, "conflict_eval/plugins/kre/borrow.py", "from conflict_eval.plugins.conflictqa import dataset\n")
    out = lint(site, "plugins-independent")
    assert out.returncode == 1, out.stdout
    assert "conflict_eval.plugins.kre is not allowed to import conflict_eval.plugins.conflictqa" in out.stdout


def test_a_scorer_importing_a_plugin_breaks_the_unit_layers(site):
    """The user_needs plugin <-> scorer circle is broken: the plugin uses its metric, not the reverse."""
    assert lint(site, "units-layers").returncode == 0
    add_module(site, "conflict_eval/scorers/user_needs/borrow.py", "from conflict_eval.plugins.user_needs import grid\n")
    out = lint(site, "units-layers")
    assert out.returncode == 1, out.stdout
    assert "conflict_eval.scorers is not allowed to import conflict_eval.plugins" in out.stdout


@pytest.mark.parametrize("module, borrow", [
    ("conflict_eval/scorers/choice_accuracy/values.py", "from .scorer import choice_accuracy\n"),
    ("conflict_eval/scorers/conflictscore/panel.py", "from .pipeline import label_prompt\n"),
], ids=["choice_accuracy", "conflictscore"])
def test_a_circle_inside_choice_accuracy_or_conflictscore_breaks_acyclic(site, module, borrow):
    """The two circles are gone (what both modules needed sits below both) and stay gone,
    a lazy import inside a function included."""
    assert lint(site, "scorer-units-acyclic").returncode == 0
    f = site / module
    f.write_text(f.read_text(encoding="utf-8") + "\n\ndef _reach():\n    " + borrow, encoding="utf-8")
    out = lint(site, "scorer-units-acyclic")
    assert out.returncode == 1, out.stdout
    assert "No cycles are allowed in conflict_eval.scorers." + module.split("/")[2] in out.stdout


def test_the_core_importing_a_plugin_breaks_the_core_contract(site):
    add_module(site, "conflict_eval/runs/borrow.py", "from conflict_eval.scorers.text_match import scorer\n")
    out = lint(site, "core-reaches-units-through-the-manager")
    assert out.returncode == 1, out.stdout
    assert "conflict_eval.runs is not allowed to import conflict_eval.scorers" in out.stdout


def test_no_root_module_is_a_reexport():
    """The restructure's aliases are gone: each name is imported from the part that owns it."""
    roots = sorted(p.name for p in (ROOT / "conflict_eval").glob("*.py"))
    assert roots == ["__init__.py", "_registry.py", "local_model.py", "model_file.py", "testing.py"]
    import importlib.util

    for old in ("compose", "download", "text_metrics", "parser_registry", "index", "hookspecs", "suite",
                "leaderboard"):
        assert importlib.util.find_spec(f"conflict_eval.{old}") is None, old


def test_plugins_share_code_only_through_the_core():
    """No plugin -> plugin reach is excused: what two plugins share lives in the core
    (kb.answer, kb.documents, components.stores, retrieval.sources / servers)."""
    import tomllib

    contracts = {c["id"]: c for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]}
    assert "ignore_imports" not in contracts["plugins-independent"]
    reaches = contracts["core-reaches-units-through-the-manager"]["ignore_imports"]
    assert not [r for r in reaches if "knowledge_sources" in r or r.startswith("conflict_eval.retrieval")]


def test_the_core_names_units_only_through_the_manager_and_inspects_entry_point():
    """Issue 47: one ignored import between the core and the units (Inspect's entry point
    importing the tasks package, docs/layout.md), and the lists that once named units by
    module string (the parser fuzz list, the lm-eval export, the CLI) name none: units
    declare their readers, exports and commands through hooks."""
    import re
    import tomllib

    contracts = {c["id"]: c for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]}
    assert contracts["core-reaches-units-through-the-manager"]["ignore_imports"] == [
        "conflict_eval._registry -> conflict_eval.tasks"]
    unit = re.compile(r"conflict_eval\.(plugins|scorers|tasks)\b")
    for path in ("conflict_eval/answers/fuzz.py", "conflict_eval/answers/readers.py", "conflict_eval/lmeval/utils.py",
                 "conflict_eval/cli/main.py", "conflict_eval/_registry.py"):
        text = (ROOT / path).read_text(encoding="utf-8")
        named = [m.group(0) for m in unit.finditer(text) if m.group(0) != "conflict_eval.tasks" or "_registry" not in path]
        assert not named, f"{path} names a unit module: {named}"
