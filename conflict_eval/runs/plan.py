"""Many machines through Inspect's own worker protocol (inspect_ai 0.3.285).

``conflict-eval suite plan SUITE --out DIR --workers N`` writes:

* ``DIR/tasks.py`` -- the suite as an Inspect task file, one ``@task`` per cell
  (model x task x seed, the model bound to the task), so that a plain
  ``inspect eval-set tasks.py`` runs exactly the suite's cells;
* ``DIR/capture.json`` -- Inspect's capture manifest of it
  (``INSPECT_EVAL_SET_CAPTURE``: one entry per cell, with the ``identifier``
  workers are given, the sample count and the epochs);
* ``DIR/workers/worker-I.json`` -- one Inspect selection document per worker
  (``INSPECT_EVAL_SET_SELECTION``: the identifiers it runs), the cells dealt
  out so that every worker gets about the same estimated cost;
* ``DIR/plan.json`` -- the suite, the shared log folder, the eval set id, and
  per worker its cells, estimated cost and share of the budget.

``conflict-eval suite worker DIR/workers/worker-I.json`` runs one worker: the
selected tasks only, into the one shared flat log folder, with no eval-set
bookkeeping (Inspect's selection mode), under its share of the budget. Run
again after a crash or a kill, it skips its finished tasks and resumes the
unfinished ones from their logs (the selection's ``resume``), then removes the
log it resumed from. The plain Inspect command that does the same work is
recorded in ``plan.json`` (``plain_command``)::

    cd DIR && INSPECT_EVAL_SET_SELECTION=workers/worker-1.json inspect eval-set tasks.py --log-dir LOG

Capture and selection documents are Inspect's versioned wire formats
(``EVAL_SET_CAPTURE_VERSION`` 3 and ``EVAL_SET_SELECTION_VERSION`` 7 in
0.3.285); this module writes and reads them as JSON, without importing
Inspect's private modules. A task's identifier includes its task file's path
relative to the working directory, so the plan, the workers and a plain
``inspect eval-set`` all run from ``DIR``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import uuid
from pathlib import Path
from typing import Any

from conflict_eval.pricing import PriceTable
from conflict_eval.runs.spec import ModelSpec, Suite, SuiteError, load_suite
from conflict_eval.records.config_files import read_json

PLAN_FILE = "plan.json"
TASKS_FILE = "tasks.py"
CAPTURE_FILE = "capture.json"
# Inspect's selection schema: version 5 added the pruning facets (registry_name, args_hash),
# 6 the identity-neutral overrides (sample_id, ...); 7 is the newest inspect_ai 0.3.285 reads
SELECTION_VERSION = 7
# eval-set options that enter Inspect's task identifier: the plain command must repeat them
IDENTITY_FLAGS = ("message_limit", "token_limit", "time_limit", "working_limit", "cost_limit")


def _cell_name(i: int) -> str:
    return f"cell_{i:03d}"


# --------------------------------------------------------------------------
# the task file's side: one Task per cell, built from plan.json


def read_plan_file(plan_path: str | Path) -> dict[str, Any]:
    """``plan.json``'s content; a file that is not JSON is an error naming it and the line."""
    try:
        return read_json(plan_path)
    except ValueError as e:  # records.config_files: "FILE, line L, column C: invalid JSON (...)"
        raise SuiteError(f"{plan_path}: not a plan file ({str(e).removeprefix(str(plan_path) + ', ')}); "
                         "make the plan again") from None


@functools.lru_cache(maxsize=64)
def _plan_cell(plan_path: str, name: str):
    """The Inspect ``Task`` of one planned cell, built alone: only its model, its task entry and
    seed, so a worker loads only its own cells' datasets (the selection's pruning facets skip
    the other ``@task`` bodies of ``tasks.py`` before they run)."""
    from conflict_eval.runs.run import build_cells

    plan = read_plan_file(plan_path)
    cell = next((c for c in plan["cells"] if c["name"] == name), None)
    suite = load_suite(plan["suite"])
    gone = SuiteError(f"{plan_path}: cell {name} is no longer in suite {plan['suite']} (or the plan was made by "
                      "an older conflict-eval); make the plan again")
    index = (cell or {}).get("task_index")
    if not isinstance(index, int) or not 0 <= index < len(suite.tasks):
        raise gone
    spec = suite.tasks[index]
    m = next(m for m in plan["models"] if m["model"] == cell["model"])
    model = ModelSpec(m["model"], m.get("max_connections"), m.get("args") or {}, m.get("batch"))
    one = dataclasses.replace(suite, tasks=[dataclasses.replace(spec, seeds=(cell.get("seed"),))])
    home = Path(plan.get("cwd") or Path(plan_path).parent)  # relative data paths in task args resolve here
    with _cwd(home if home.is_dir() else Path(plan_path).parent):
        built = build_cells(one, models=[model], limit=plan.get("limit"),
                            prices=PriceTable.load((plan.get("options") or {}).get("model_cost_config")))
    if len(built) != 1 or built[0].label != cell["label"]:
        raise gone
    return built[0].task


def cell_task(task_file: str, name: str):
    """The Inspect ``Task`` of one planned cell (called by the generated ``tasks.py``), named
    after the cell: Inspect's task identifier holds the task's name and arguments but not its
    dataset, so two cells differing only in their data (a limit, a data option routed to the
    dataset) would otherwise be one task to Inspect. The leaderboard and ``suite status``
    label it from its ``suite`` metadata, as in a ``suite run``."""
    from inspect_ai import task_with

    return task_with(_plan_cell(str(Path(task_file).resolve().parent / PLAN_FILE), name), name=name)


def _tasks_py(suite: Suite, cells: list[dict]) -> str:
    lines = [f'"""Suite {suite.name!r} as Inspect tasks, one per cell (generated by `conflict-eval suite plan`;',
             'make the plan again rather than editing). Each task reads plan.json next to this file."""',
             "", "from inspect_ai import task", "", "from conflict_eval.runs.plan import cell_task", ""]
    for c in cells:
        lines += ["", "@task", f"def {c['name']}():",
                  f"    # {c['model']}  {c['label']}".replace('"', "'"),
                  f"    return cell_task(__file__, {c['name']!r})", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------
# making a plan


@contextlib.contextmanager
def _env(name: str, value: str | None):
    old = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


@contextlib.contextmanager
def _cwd(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def eval_set_options(suite: Suite, plan: dict[str, Any] | None = None) -> dict[str, Any]:
    """The suite's ``eval:`` options as ``eval_set`` takes them (the model cost config registered),
    with the plan's model roles (the judges, ``suite plan --model-role``)."""
    options = dict(suite.eval)
    if plan and plan.get("model_roles"):
        options["model_roles"] = dict(plan["model_roles"])
    prices = PriceTable.load(options.get("model_cost_config"))
    if prices.config:  # Inspect's format; models Inspect does not know are added to its database
        options["model_cost_config"] = prices.register_with_inspect()
    return options


def _deal(cells: list[dict], workers: int) -> list[list[dict]]:
    """Cells to workers by estimated wall time (:mod:`conflict_eval.runs.walltime`), longest first,
    each to the worker with the least time so far (greedy longest-processing-time; ties to the
    worker with fewer cells). Cells keep their plan order within a worker."""
    shares: list[list[dict]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for c in sorted(cells, key=lambda c: -c["estimated_s"]):
        i = min(range(workers), key=lambda j: (load[j], len(shares[j])))
        shares[i].append(c)
        load[i] += c["estimated_s"]
    order = {c["name"]: k for k, c in enumerate(cells)}
    return [sorted(share, key=lambda c: order[c["name"]]) for share in shares]


def make_plan(suite_source: str, out_dir: str | Path, *, workers: int, log_dir: str | None = None,
              models: list[ModelSpec] | None = None, limit: int | None = None,
              budget: float | None = None, latency: dict[str, float] | None = None,
              model_roles: dict[str, str] | None = None, shards: int = 1) -> dict[str, Any]:
    """Write the plan (see the module docstring) and return ``plan.json``'s content. ``shards`` > 1
    splits every cell into that many shards in Inspect's shard layout, one worker each
    (:mod:`conflict_eval.runs.shards`)."""
    from inspect_ai import eval_set

    from conflict_eval.runs.run import build_cells
    from conflict_eval.runs.walltime import seconds_for

    if workers < 1:
        raise SuiteError(f"--workers must be at least 1, got {workers}")
    if shards < 1:
        raise SuiteError(f"--shards must be at least 1, got {shards}")
    if shards > 1 and workers > 1:
        raise SuiteError("give --workers or --shards, not both: with --shards every shard of every cell is one worker")
    suite = load_suite(suite_source)
    specs = models or suite.models
    if not specs:
        raise SuiteError(f"suite {suite.name!r} names no models; give --model")
    out = Path(out_dir).resolve()
    (out / "workers").mkdir(parents=True, exist_ok=True)
    log = log_dir or str(out / "logs")
    if "://" not in log:
        log = str(Path(log).resolve())
    prices = PriceTable.load(suite.eval.get("model_cost_config"))  # parsed once, here
    built = build_cells(suite, models=specs, limit=limit, connect=False, prices=prices)
    if (budget if budget is not None else suite.budget) is not None:
        unpriced = [m.model for m in specs if prices.price(m.model).cost is None]
        if unpriced:
            raise SuiteError(f"a budget needs prices for every model; none known for {', '.join(unpriced)} "
                             "(give eval: model_cost_config in the suite, Inspect's format)")
    entries = {spec.label + (f" seed={seed}" if seed is not None else ""): (k, seed)
               for k, spec in enumerate(suite.tasks) for seed in spec.seeds}
    cells, sample_ids = [], {}
    for i, c in enumerate(built, 1):
        # at the batch price where batched (the list price where no discount is published: the
        # budget's shares are dealt by it, so never below what the cell may cost)
        usd = prices.batch_usd(c.model.model, c.estimate.cost_usd, c.model.batch, upper_bound=True)
        listed = c.estimate.cost_usd
        est = c.estimate
        seconds = seconds_for(c.model.model, calls=est.calls, output_tokens=est.output_tokens, samples=est.samples,
                              max_connections=c.model.max_connections, args=c.model.args,
                              latency=(latency or {}).get(c.model.model))
        task_index, seed = entries[c.label]
        if shards > 1:
            sample_ids[_cell_name(i)] = [sample.id for sample in c.task.dataset]
        cells.append({"name": _cell_name(i), "model": c.model.model, "label": c.label,
                      "task_index": task_index, "seed": seed,
                      "samples": c.estimate.samples, "estimated_usd": usd, "estimated_s": round(seconds, 3),
                      "list_usd_per_call": listed / c.estimate.calls if listed and c.estimate.calls else None})
    plan: dict[str, Any] = {
        "version": 1, "suite": str(Path(suite.path).resolve()), "suite_name": suite.name,
        "eval_set_id": f"{suite.name}-{uuid.uuid4().hex[:10]}", "log_dir": log, "limit": limit,
        "cwd": str(Path.cwd()),
        "models": [{"model": m.model, "max_connections": m.max_connections, "args": m.args, "batch": m.batch}
                   for m in specs],
        "options": {k: v for k, v in suite.eval.items()}, "budget_usd": budget if budget is not None else suite.budget,
        "model_roles": dict(model_roles or {}), "cells": cells}
    (out / PLAN_FILE).write_text(json.dumps(plan, indent=2) + "\n", encoding="utf-8")
    (out / TASKS_FILE).write_text(_tasks_py(suite, cells), encoding="utf-8")
    _plan_cell.cache_clear()
    # Inspect's capture mode: resolve the tasks, write the manifest, exit (SystemExit(0))
    capture = out / CAPTURE_FILE
    capture.unlink(missing_ok=True)
    with _cwd(out), _env("INSPECT_EVAL_SET_CAPTURE", str(capture)), _env("INSPECT_EVAL_SET_SELECTION", None):
        try:
            eval_set(TASKS_FILE, log_dir=log, eval_set_id=plan["eval_set_id"], display="none",
                     **eval_set_options(suite, plan))
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise
    manifest = read_json(capture)
    by_name = {t.get("registry_name") or t["name"]: t for t in manifest["tasks"]}
    for c in cells:
        entry = by_name.get(c["name"])
        if entry is None:
            raise SuiteError(f"Inspect's capture of {out / TASKS_FILE} has no task {c['name']}")
        c["identifier"] = entry["identifier"]
        # the pruning facets: a worker skips the other cells' @task bodies (and their datasets)
        c["registry_name"], c["args_hash"] = entry.get("registry_name"), entry["args_hash"]
        c["samples"] = int(entry["samples"]) * int(entry.get("epochs") or 1)
    ids = [c["identifier"] for c in cells]
    if len(set(ids)) != len(ids):
        raise SuiteError(f"two cells of the plan have the same Inspect task identifier: {sorted(ids)}")
    _record_cells(log, plan["eval_set_id"], built, cells)
    total = sum(c["estimated_usd"] or 0.0 for c in cells)
    plan["workers"] = []
    if shards > 1:
        _shard_workers(out, plan, cells, sample_ids, shards, total)
    for i, share in enumerate([] if shards > 1 else _deal(cells, min(workers, len(cells))), 1):
        est = sum(c["estimated_usd"] or 0.0 for c in share)
        seconds = sum(c["estimated_s"] for c in share)
        part = None  # no budget, or only cells whose models cost nothing (their estimate is $0)
        if plan["budget_usd"] is not None and (est > 0 or total == 0):
            part = plan["budget_usd"] * (est / total if total > 0 else len(share) / len(cells))
        selection = out / "workers" / f"worker-{i}.json"
        selection.write_text(json.dumps({"version": SELECTION_VERSION, "eval_set_id": plan["eval_set_id"],
                                         "tasks": [selection_task(c) for c in share]}, indent=2)
                             + "\n", encoding="utf-8")
        plan["workers"].append({"worker": i, "selection": f"workers/worker-{i}.json",
                                "cells": [c["name"] for c in share], "estimated_usd": est,
                                "estimated_s": round(seconds, 3), "budget_usd": part})
    flags = "".join(f" --{k.replace('_', '-')} {suite.eval[k]}" for k in IDENTITY_FLAGS if suite.eval.get(k))
    if suite.eval.get("model_cost_config"):
        flags += f" --model-cost-config {suite.eval['model_cost_config']}"
    if plan["model_roles"]:
        flags += "".join(f" --model-role {r}={m}" for r, m in plan["model_roles"].items())
    plan["plain_command"] = (f"cd {out} && INSPECT_EVAL_SET_SELECTION=workers/worker-I.json "
                             f"inspect eval-set {TASKS_FILE} --log-dir {log}{flags}")
    plan["worker_command"] = f"conflict-eval suite worker {out}/workers/worker-I.json"
    (out / PLAN_FILE).write_text(json.dumps(plan, indent=2) + "\n", encoding="utf-8")
    _write_hawk(out, plan, suite, built)
    return plan


def _record_cells(log_dir: str, eval_set_id: str, built: list, cells: list[dict]) -> None:
    """``suite-cells.json`` in the shared log folder (:mod:`conflict_eval.report.manifest`): workers
    in Inspect's selection mode write no ``eval-set.json``, so without it a cell no worker started
    would be missing from ``suite status LOG`` and the leaderboard. Each cell as ``suite run``
    records it, with its total as Inspect captured it, the task name its log will carry
    (``log_task``) and the plan's ``eval_set_id``. Not on object storage (the record is a local file)."""
    from conflict_eval.report.manifest import write_cells
    from conflict_eval.runs.run import cell_records

    if "://" in log_dir:
        return
    write_cells(log_dir, [{**rec, "total": c["samples"], "log_task": c["name"], "eval_set_id": eval_set_id}
                          for rec, c in zip(cell_records(built), cells, strict=True)])


def _shard_workers(out: Path, plan: dict[str, Any], cells: list[dict], sample_ids: dict[str, list],
                   shards: int, total: float) -> None:
    """One worker per shard of every cell: its selection names the cell with Inspect's per-worker
    overrides, the shard's ``sample_id``s and its ``log_dir`` ``LOG/<cell>.shards/<k>``."""
    from conflict_eval.runs.shards import shard_dir, split_ids

    i = 0
    for c in cells:
        ids = sample_ids[c["name"]]
        for k, part in enumerate(split_ids(ids, shards), 1):
            i += 1
            frac = len(part) / len(ids)
            est = (c["estimated_usd"] or 0.0) * frac
            part_budget = None
            if plan["budget_usd"] is not None and (est > 0 or total == 0):
                part_budget = plan["budget_usd"] * (est / total if total > 0 else frac / len(cells))
            log = str(shard_dir(plan["log_dir"], c["name"], k)) if "://" not in plan["log_dir"] else \
                f"{plan['log_dir'].rstrip('/')}/{c['name']}.shards/{k}"
            selection = out / "workers" / f"worker-{i}.json"
            selection.write_text(json.dumps({"version": SELECTION_VERSION, "eval_set_id": plan["eval_set_id"],
                                             "tasks": [selection_task(c)],
                                             "overrides": {"log_dir": log, "sample_id": part}}, indent=2)
                                 + "\n", encoding="utf-8")
            plan["workers"].append({"worker": i, "selection": f"workers/worker-{i}.json", "cells": [c["name"]],
                                    "shard": k, "sample_ids": part, "log_dir": log, "estimated_usd": est,
                                    "estimated_s": round(c["estimated_s"] * frac, 3), "budget_usd": part_budget})


def _write_hawk(out: Path, plan: dict[str, Any], suite: Suite, built: list) -> None:
    """``hawk.yaml``: the plan as a Hawk eval set (:mod:`conflict_eval.runs.hawk`)."""
    import yaml

    from conflict_eval.runs.hawk import HAWK_FILE, hawk_config

    ids: dict[int, list] = {}
    for cell, b in zip(plan["cells"], built):
        ids.setdefault(cell["task_index"], [])
        ids[cell["task_index"]] += [s.id for s in b.task.dataset if s.id not in ids[cell["task_index"]]]
    text = yaml.safe_dump(hawk_config(plan, suite, ids), sort_keys=False, allow_unicode=True)
    (out / HAWK_FILE).write_text("# Suite " + plan["suite_name"] + " as a Hawk eval set (hawk 3.7.2 EvalSetConfig; "
                                 "written by `conflict-eval suite plan`)\n" + text, encoding="utf-8")


def selection_task(cell: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A cell as an entry of an Inspect selection: its identifier and, when the capture recorded
    them, the pruning facets."""
    entry = {"identifier": cell["identifier"], **extra}
    if cell.get("registry_name"):
        entry.update(registry_name=cell["registry_name"], args_hash=cell["args_hash"])
    return entry


def find_plan(path: str | Path) -> Path | None:
    """``plan.json`` for a plan folder, a selection file in it, or the plan file itself."""
    p = Path(path).resolve()
    for candidate in (p, p / PLAN_FILE, p.parent / PLAN_FILE, p.parent.parent / PLAN_FILE):
        if candidate.name == PLAN_FILE and candidate.is_file():
            return candidate
    return None


def read_plan(path: str | Path) -> tuple[Path, dict[str, Any]]:
    found = find_plan(path)
    if found is None:
        raise SuiteError(f"no {PLAN_FILE} for {path} (make one with `conflict-eval suite plan SUITE --out DIR`)")
    return found, read_plan_file(found)  # a corrupt plan names its file
