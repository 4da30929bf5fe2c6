"""The tasks a log directory was set out to hold, logged or not: one reader for
``suite status`` (:mod:`conflict_eval.runs.status`) and the leaderboard (:mod:`.build`).

``eval_set`` writes its manifest, ``eval-set.json``, before any task starts: one
entry per task and model, with the ``task_id`` its logs will carry. A task
interrupted before it started is an entry there with no log. The manifest does
not say how many samples a task has, nor the name a suite gave it, so
``suite run`` writes them beside it, before ``eval_set`` starts:
``suite-cells.json`` (:data:`CELLS_FILE`), one cell per task in the order
``eval_set`` was given them (the manifest's ``sequence``). A manifest entry
takes a cell's label and total when model, sequence and task name agree (or,
failing the sequence, when exactly one cell has its model and task name);
otherwise its total is unknown (``None``, shown ``?``, never 0) and its name
is the canonical one every logged cell of that task and arguments gets.

A run of ``suite plan`` and ``suite worker`` (:mod:`conflict_eval.runs.plan`)
has no manifest: its workers run in Inspect's selection mode, which writes
none (the runner is to keep the folder's bookkeeping). ``suite plan`` writes
``suite-cells.json`` into the shared log folder instead, each cell also with
``log_task``, the task name its log will carry (``cell_001``), and the plan's
``eval_set_id``. A folder with that record and no manifest lists its cells
as the planned tasks; a log is their cell's when its eval set id, task name
and model agree (:func:`log_keys`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conflict_eval.records.config_files import json_or_none

from .grouping import canonical_task_name

MANIFEST_FILE = "eval-set.json"
CELLS_FILE = "suite-cells.json"


@dataclass(frozen=True)
class PlannedTask:
    """One task and model a log directory's manifest lists."""

    model: str
    task_id: str | None
    name: str  # the canonical task name (:func:`manifest_label`)
    label: str  # as ``suite status`` names it: the suite's label (with its seed), else ``name``
    board_label: str  # as the leaderboard names a cell: the suite's label without the seed, else ``name``
    total: int | None  # samples it sets out to run (epochs included); None: unknown
    key: tuple = ()  # what its log is matched by: one of :func:`log_keys`


def log_keys(model: str, task_id: Any, eval_set_id: Any = None, task: Any = None) -> set[tuple]:
    """The keys a log (its model, ``task_id``, eval set id and task name) is matched to a planned
    task by: ``(task_id, model)`` for a manifest's entry, ``(eval_set_id, task, model)`` for a
    plan's cell (a worker's ``task_id`` is its own, the manifest-less plan cannot know it)."""
    return {(task_id, model), (eval_set_id, task, model)}


def manifest(log_dir: str | Path) -> list[dict[str, Any]]:
    """The task entries ``eval_set`` recorded in ``LOG_DIR/eval-set.json`` (and
    in every sub-directory holding one, e.g. shards); [] when there is none."""
    return [entry for _, entries in _manifests(log_dir) for entry in entries]


def _manifests(log_dir: str | Path) -> list[tuple[Path, list[dict[str, Any]]]]:
    out = []
    for path in sorted(Path(log_dir).rglob(MANIFEST_FILE)):
        data = json_or_none(path)
        if isinstance(data, dict):
            out.append((path.parent, [t for t in (data.get("tasks") or []) if isinstance(t, dict)]))
    return out


def manifest_label(entry: dict) -> str:
    """The canonical name of a manifest entry's task: the one its log's cell gets
    (:func:`.grouping.canonical_task_name`; a composed task as ``method/dataset(...)``)."""
    args = dict(entry.get("task_args") or {})
    meta = None
    if "method" in args and "dataset" in args:  # a composed task: name it as the leaderboard does
        meta = {"method": args.pop("method"), "dataset": args.pop("dataset"), "options": args}
    return canonical_task_name(str(entry.get("name")), dict(entry.get("task_args") or {}), meta)


def write_cells(log_dir: str | Path, cells: list[dict[str, Any]]) -> Path:
    """Record a suite's cells before it runs (:data:`CELLS_FILE`): each a dict with
    ``model``, ``task`` and ``args`` (the registered task and its arguments),
    ``label`` (with the seed), ``suite_label`` (without) and ``total``, in the
    order they are given to ``eval_set``; a plan's cells also ``log_task`` and
    ``eval_set_id`` (the module docstring)."""
    path = Path(log_dir) / CELLS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells}, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def _cells(folder: Path) -> list[dict[str, Any]]:
    data = json_or_none(folder / CELLS_FILE)
    cells = data.get("cells") if isinstance(data, dict) else None
    return [c for c in cells or [] if isinstance(c, dict)]


def _cell_of(entry: dict, name: str, cells: list[dict[str, Any]], names: list[str]) -> dict | None:
    seq = entry.get("sequence")
    if isinstance(seq, int) and 0 <= seq < len(cells) and cells[seq].get("model") == entry.get("model") \
            and names[seq] == name:
        return cells[seq]
    same = [c for c, n in zip(cells, names) if c.get("model") == entry.get("model") and n == name]
    return same[0] if len(same) == 1 else None


def _planned(model: str, task_id: Any, name: str, cell: dict | None, key: tuple) -> PlannedTask:
    total = cell.get("total") if cell else None
    return PlannedTask(
        model=model, task_id=task_id, name=name,
        label=str(cell.get("label") or name) if cell else name,
        board_label=str(cell.get("suite_label") or name) if cell else name,
        total=total if isinstance(total, int) and not isinstance(total, bool) and total >= 0 else None, key=key)


def planned_tasks(log_dir: str | Path) -> list[PlannedTask]:
    """Every task and model the manifests under ``log_dir`` list, and the cells of every
    plan's record under it with no manifest beside it, named and counted as the module
    docstring says."""
    out = []
    manifests = _manifests(log_dir)
    for folder, entries in manifests:
        cells = _cells(folder)
        # a plan's cell (log_task) is named cell_NNN to Inspect: the name its manifest entry has
        names = [str(c["log_task"]) if c.get("log_task") else
                 canonical_task_name(str(c.get("task")), c.get("args") or {}) for c in cells]
        for entry in entries:
            name = manifest_label(entry)
            model = str(entry.get("model"))
            out.append(_planned(model, entry.get("task_id"), name, _cell_of(entry, name, cells, names),
                                (entry.get("task_id"), model)))
    with_manifest = {folder for folder, _ in manifests}
    for path in sorted(Path(log_dir).rglob(CELLS_FILE)):
        if path.parent in with_manifest:
            continue
        for c in _cells(path.parent):
            if c.get("log_task") and c.get("eval_set_id"):  # a plan's cell (a suite run's waits for its manifest)
                model = str(c.get("model"))
                name = canonical_task_name(str(c.get("task")), c.get("args") or {})
                out.append(_planned(model, None, name, c, (c["eval_set_id"], c["log_task"], model)))
    return out


def not_started(log_dirs: list[str | Path], logged: set[tuple]) -> dict[tuple[str, str], list[PlannedTask]]:
    """The planned tasks under ``log_dirs`` that have no log, by leaderboard cell
    (model, :attr:`PlannedTask.board_label`); ``logged``: the :func:`log_keys` of
    every log read. A task is matched to its logs by its key, so a started
    task is never also counted as not started."""
    out: dict[tuple[str, str], list[PlannedTask]] = {}
    seen = set(logged)  # a manifest reached twice (a folder and its parent both given) counts once
    for log_dir in log_dirs:
        for p in planned_tasks(log_dir):
            if p.key not in seen:
                seen.add(p.key)
                out.setdefault((p.model, p.board_label), []).append(p)
    return out
