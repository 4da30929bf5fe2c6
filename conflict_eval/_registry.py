"""Inspect entry point (``[project.entry-points.inspect_ai]``).

Imports what Inspect must see by name: every task module under
``conflict_eval.tasks`` (``tasks/<name>/task.py``) and the model APIs.
Task modules import only Inspect, the core and scorers, so nothing here
imports torch; plugins load when a task is built. A scorer Inspect must
find by name on existing logs (``inspect score --scorer
conflict_eval/overrationalization``) is imported by the task module that
uses it (``tasks/microact/task.py``), so this file names no unit but the
tasks package: the one import from the core into the units that
``pyproject.toml``'s contract ignores (``docs/layout.md``).
"""

import importlib
import pkgutil

import conflict_eval.tasks as _tasks
from conflict_eval.local_model import conflict_eval_local  # noqa: F401
from conflict_eval.testing import _scripted_api



def task_modules() -> list:
    """Every ``conflict_eval.tasks.<name>.task`` module, imported (a new task
    folder joins without an edit). The one place the core reaches the tasks."""
    return [importlib.import_module(f"conflict_eval.tasks.{m.name}.task")
            for m in pkgutil.iter_modules(_tasks.__path__) if m.ispkg]


task_modules()

_scripted_api()
