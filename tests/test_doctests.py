"""Every docstring example (``>>>``) in the installed package runs.

The equivalent of ``pytest --doctest-modules`` for the installed layout:
``setup.py`` maps ``plugins/``, ``scorers/`` and ``tasks/`` into
``conflict_eval.*``, so the modules are found by walking the installed
package, and a module is imported only when its source holds an example
(nothing else gets imported, so no heavy optional dependency is pulled in).
A docstring that does not parse as a doctest fails here too.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

PACKAGES = ("conflict_eval", "conflict_eval.plugins", "conflict_eval.scorers", "conflict_eval.tasks")


def _modules_with_examples() -> list[str]:
    names: set[str] = set()
    for package in PACKAGES:
        path = importlib.import_module(package).__path__
        for info in pkgutil.walk_packages(path, package + ".", onerror=lambda name: None):
            spec = importlib.util.find_spec(info.name)
            origin = spec.origin if spec is not None else None
            if origin and origin.endswith(".py"):
                with open(origin, encoding="utf-8") as handle:
                    if ">>>" in handle.read():
                        names.add(info.name)
    return sorted(names)


MODULES = _modules_with_examples()


def test_modules_with_examples_are_found():
    # the walk reaches the core and the mapped plugins/scorers/tasks alike
    assert "conflict_eval.answers.choice" in MODULES
    assert "conflict_eval.plugins.user_needs.generator" in MODULES
    assert any(name.startswith("conflict_eval.scorers.") for name in MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in finder.find(module, name):  # a malformed docstring raises ValueError here
        runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, "".join(report)
