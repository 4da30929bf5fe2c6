"""Suites: a YAML file naming tasks (with their parameters) and the models to compare.

    conflict-eval suite run suites/tiny.yaml                  # offline, demo data
    conflict-eval suite run default --model openai/gpt-4o-mini --limit 100

A suite runs through ``inspect_ai.eval_set``, so retries, resumption after a
crash (re-run the same command with the same log directory) and concurrency
come from Inspect. Format::

    name: my-suite                      # required
    description: free text              # optional
    models:                             # required unless --model is given
      - openai/gpt-4o-mini              # a model string, or
      - model: conflict_eval/smollm2    # a mapping with connection limit / args
        max_connections: 1
        args: {instances: 2}            # and batch: true / a size / BatchConfig fields
    defaults: {limit: 20, seeds: [0]}   # optional; any task key except task/name/args
    eval: {max_tasks: 2, cost_limit: 0.05, model_cost_config: costs.yaml}
                                        # optional; options for inspect eval_set (limits
                                        # and the cost config pass through to Inspect)
    budget: 25                          # optional; suite-wide US dollars (runs/budget.py)
    batch_timeout: 93600                # optional; seconds a provider batch may wait before its
                                        # samples end as errors (default 26 h; runs/batch_stop.py)
    tasks:
      - task: conflict_eval/run         # a registered Inspect task
        name: e2e-demo-temporal         # optional label (default: task + args)
        args: {method: end_to_end, dataset: demo, conflict_type: temporal}
        limit: 4                        # first N samples of the dataset
        seeds: [0, 1]                   # one run per generation seed
        epochs: 1
        config: {max_tokens: 64}        # GenerateConfig overrides
      - registered: paper               # every registered paper task, defaults

Choices (documented in suites/README.md):

* ``seeds`` are *generation* seeds (``GenerateConfig.seed``); each seed is a
  separate Inspect task and the leaderboard pools them like epochs. A
  dataset's own shuffle seed is an ordinary task argument.
* ``limit`` keeps the first N samples. To split one task's samples across
  machines, ``suite plan --shards K`` (:mod:`conflict_eval.runs.shards`).
* ``registered: paper`` expands to every task registered under
  ``conflict_eval/`` (task modules in ``tasks/`` and every task named in
  ``registry.yaml``) except the generic composer ``conflict_eval/run``, each
  with its factory defaults; ``registered: all`` includes ``conflict_eval/run``.

Every problem in a suite file is reported with the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from conflict_eval.records.config_files import ConfigFileError, compose_yaml, construct_yaml
from conflict_eval.runs.batching import batch_problem
from conflict_eval.runs.registered import paper_tasks, registered_tasks
from conflict_eval.runs.spec_checks import (check_config, check_task_args, default_label, folder_name_problem,
                                            label_problem, line_index, model_arg_problem, model_problem, positive_int,
                                            positive_number_problem)

# the checks live in runs.spec_checks; these names stay importable from here
__all__ = ["EVAL_KEYS", "LIMIT_NUMBERS", "MODEL_KEYS", "SUITE_KEYS", "TASK_KEYS", "ModelSpec", "Suite", "SuiteError",
           "TaskSpec", "folder_name_problem", "label_problem", "load_suite", "model_arg_problem", "model_problem",
           "positive_number_problem", "resolve_suite_path"]


SUITE_KEYS = {"name", "description", "models", "defaults", "eval", "tasks", "budget", "batch_timeout"}
TASK_KEYS = {"task", "name", "args", "limit", "seeds", "epochs", "config"}
MODEL_KEYS = {"model", "max_connections", "args", "batch"}
EVAL_KEYS = {
    "max_tasks", "max_samples", "retry_attempts", "retry_wait", "retry_connections",
    "fail_on_error", "continue_on_fail", "retry_on_error", "time_limit", "message_limit",
    "token_limit", "log_format", "log_samples", "cost_limit", "working_limit", "model_cost_config",
}

# eval: options that are numbers Inspect compares against (a NaN limit is never reached)
LIMIT_NUMBERS = {"cost_limit", "time_limit", "working_limit", "token_limit", "message_limit"}


class SuiteError(ValueError):
    """A suite file is invalid; the message names the file and line of each problem."""


@dataclass(frozen=True)
class ModelSpec:
    model: str
    max_connections: int | None = None
    args: dict[str, Any] = field(default_factory=dict)
    batch: bool | int | dict[str, Any] | None = None  # GenerateConfig.batch as written (runs/batching.py)


@dataclass(frozen=True)
class TaskSpec:
    task: str
    label: str
    args: dict[str, Any] = field(default_factory=dict)
    limit: int | None = None
    seeds: tuple[int | None, ...] = (None,)
    epochs: int | None = None
    config: dict[str, Any] = field(default_factory=dict)
    line: int | None = None


@dataclass(frozen=True)
class Suite:
    name: str
    models: list[ModelSpec]
    tasks: list[TaskSpec]
    eval: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    path: str | None = None
    budget: float | None = None
    batch_timeout: float | None = None  # seconds; None: runs.batch_stop.BATCH_TIMEOUT

# --------------------------------------------------------------------------
# parsing with line numbers


class _Problems:
    def __init__(self, file: str, lines: dict[tuple, int]):
        self.file, self.lines, self.items = file, lines, []

    def add(self, path: tuple, message: str) -> None:
        p = path
        while p and p not in self.lines:
            p = p[:-1]
        where = ".".join(str(x) if not isinstance(x, int) else f"[{x}]" for x in path)
        where = where.replace(".[", "[")
        self.items.append((self.lines.get(p, 1), f"{where or '(top level)'}: {message}"))

    def raise_if_any(self) -> None:
        if len(self.items) == 1:  # one problem: one line
            n, m = self.items[0]
            raise SuiteError(f"suite file {self.file}, line {n}: {m}")
        if self.items:
            shown = "\n".join(f"  {self.file}, line {n}: {m}" for n, m in sorted(self.items))
            raise SuiteError(f"{len(self.items)} problem(s) in suite file {self.file}:\n{shown}")


def resolve_suite_path(name_or_path: str | Path) -> Path:
    """A path, or the name of a suite shipped with the package (``default``, ``tiny``)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    shipped = files("conflict_eval.suites") / f"{name_or_path}.yaml"
    if shipped.is_file():
        return Path(str(shipped))
    known = sorted(p.name[:-5] for p in files("conflict_eval.suites").iterdir()
                   if p.name.endswith(".yaml"))
    raise SuiteError(f"no such suite file {name_or_path!r} (shipped suites: {', '.join(known)})")


def load_suite(source: str | Path, *, text: str | None = None) -> Suite:
    """Parse and validate a suite file (or ``text``); raises :class:`SuiteError`."""
    path = resolve_suite_path(source) if text is None else Path(str(source))
    text = path.read_text(encoding="utf-8") if text is None else text
    file = str(path)
    try:  # duplicate keys and alias bombs refused (records.config_files)
        node = compose_yaml(text, file)
        data = construct_yaml(node)
    except ConfigFileError as exc:
        raise SuiteError(f"suite file {exc}") from None
    problems = _Problems(file, line_index(node) if node is not None else {})
    if not isinstance(data, dict):
        problems.add((), "a suite file must be a mapping with 'name', 'models' and 'tasks'")
        problems.raise_if_any()
    for key in data:
        if key not in SUITE_KEYS:
            problems.add((key,), f"unknown key {key!r} (allowed: {', '.join(sorted(SUITE_KEYS))})")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.add(("name",), "'name' must be a non-empty string")
    elif bad := folder_name_problem(name):
        problems.add(("name",), f"suite name {name!r} {bad}: it names the suite's folder under the log folder")
    models = _parse_models(data.get("models"), problems)
    eval_opts = data.get("eval") or {}
    if not isinstance(eval_opts, dict):
        problems.add(("eval",), "'eval' must be a mapping")
        eval_opts = {}
    for key in eval_opts:
        if key not in EVAL_KEYS:
            problems.add(("eval", key), f"unknown eval option {key!r} (allowed: {', '.join(sorted(EVAL_KEYS))})")
        elif key in LIMIT_NUMBERS and eval_opts[key] is not None and (bad := positive_number_problem(eval_opts[key])):
            problems.add(("eval", key), f"{key} {bad}")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        problems.add(("defaults",), "'defaults' must be a mapping")
        defaults = {}
    for key in defaults:
        if key not in TASK_KEYS - {"task", "name", "args"}:
            problems.add(("defaults", key), f"unknown default {key!r} (allowed: config, epochs, limit, seeds)")
    tasks = _parse_tasks(data.get("tasks"), defaults, problems)
    budget = data.get("budget")
    if budget is not None and (bad := positive_number_problem(budget)):
        problems.add(("budget",), f"budget {bad} (US dollars)")
    batch_timeout = data.get("batch_timeout")
    if batch_timeout is not None and (bad := positive_number_problem(batch_timeout)):
        problems.add(("batch_timeout",), f"batch_timeout {bad} (seconds)")
    mcc = eval_opts.get("model_cost_config")
    if isinstance(mcc, str) and not Path(mcc).is_absolute():  # relative to the suite file
        eval_opts = {**eval_opts, "model_cost_config": str(Path(file).parent / mcc)}
    problems.raise_if_any()
    return Suite(name=name, models=models, tasks=tasks, eval=dict(eval_opts),
                 description=str(data.get("description") or ""), path=file,
                 budget=float(budget) if budget is not None else None,
                 batch_timeout=float(batch_timeout) if batch_timeout is not None else None)


def _parse_models(raw, problems: _Problems) -> list[ModelSpec]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        problems.add(("models",), "'models' must be a list")
        return []
    out = []
    for i, item in enumerate(raw):
        where = ("models", i)
        if isinstance(item, str):
            item = {"model": item}
        if not isinstance(item, dict):
            problems.add(where, "a model is a string or a mapping with 'model'")
            continue
        for key in item:
            if key not in MODEL_KEYS:
                problems.add(where + (key,), f"unknown model key {key!r} (allowed: {', '.join(sorted(MODEL_KEYS))})")
        model = item.get("model")
        problem = model_problem(model)
        if problem:
            problems.add(where + ("model",), problem)
            continue
        mc = item.get("max_connections")
        if mc is not None and (isinstance(mc, bool) or not isinstance(mc, int) or mc < 1):
            problems.add(where + ("max_connections",), f"max_connections must be a positive integer, got {mc!r}")
        args = item.get("args") or {}
        if not isinstance(args, dict):
            problems.add(where + ("args",), "model args must be a mapping")
            args = {}
        if bad := batch_problem(item.get("batch")):  # a problem fails the whole file below
            problems.add(where + ("batch",), bad)
        out.append(ModelSpec(model, mc, dict(args), item.get("batch")))
    return out


def _parse_tasks(raw, defaults: dict, problems: _Problems) -> list[TaskSpec]:
    if not isinstance(raw, list) or not raw:
        problems.add(("tasks",), "'tasks' must be a non-empty list")
        return []
    registered = registered_tasks()
    out: list[TaskSpec] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(raw):
        where = ("tasks", i)
        line = problems.lines.get(where)
        if isinstance(item, dict) and "registered" in item:
            which = item["registered"]
            if which not in ("paper", "all") or len(item) != 1:
                problems.add(where, "'registered' takes 'paper' or 'all' and no other keys")
                continue
            for name in paper_tasks(include_generic=which == "all"):
                if name not in registered:
                    problems.add(where, f"task {name!r} is named in registry.yaml but not registered with Inspect")
                    continue
                entry = {"task": name, **defaults}
                spec = _task_spec(entry, where, registered, problems, line)
                if spec is not None:
                    out.append(spec)
            continue
        if isinstance(item, str):
            item = {"task": item}
        if not isinstance(item, dict):
            problems.add(where, "a task entry is a task name, a mapping with 'task', or {registered: paper}")
            continue
        for key in item:
            if key not in TASK_KEYS:
                problems.add(where + (key,), f"unknown task key {key!r} (allowed: {', '.join(sorted(TASK_KEYS))})")
        spec = _task_spec({**defaults, **item}, where, registered, problems, line)
        if spec is not None:
            out.append(spec)
    for spec in out:
        if spec.label in seen:
            problems.add(("tasks",), f"task label {spec.label!r} appears twice (lines {seen[spec.label]} "
                                     f"and {spec.line}); give one a different 'name'")
        seen[spec.label] = spec.line or 0
    return out


def _task_spec(item: dict, where: tuple, registered: dict, problems: _Problems, line) -> TaskSpec | None:
    name = item.get("task")
    if not isinstance(name, str) or name not in registered:
        from conflict_eval.components.manager import did_you_mean

        close = did_you_mean(name, list(registered))
        hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
        problems.add(where + ("task",), f"unknown task {name!r} ({hint}registered: {', '.join(registered) or 'none'})")
        return None
    args = item.get("args") or {}
    if not isinstance(args, dict):
        problems.add(where + ("args",), "'args' must be a mapping")
        return None
    ok = check_task_args(name, registered[name], args, where, problems)
    limit, epochs = item.get("limit"), item.get("epochs")
    ok &= positive_int(limit, where + ("limit",), problems, "limit")
    ok &= positive_int(epochs, where + ("epochs",), problems, "epochs")
    seeds = item.get("seeds", [None])
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        seeds = [seeds]
    if not isinstance(seeds, list) or not seeds or not all(
        s is None or (isinstance(s, int) and not isinstance(s, bool)) for s in seeds
    ) or len(set(seeds)) != len(seeds):
        problems.add(where + ("seeds",), f"seeds must be a list of distinct integers, got {seeds!r}")
        ok = False
    config = item.get("config") or {}
    ok &= check_config(config, where + ("config",), problems)
    if not ok:
        return None
    label = item.get("name") or default_label(name, args)
    if not isinstance(label, str):
        problems.add(where + ("name",), "'name' must be a string")
        return None
    if "name" in item and (bad := label_problem(label)):
        problems.add(where + ("name",), f"task name {label!r} {bad}")
        return None
    return TaskSpec(task=name, label=label, args=dict(args), limit=limit, seeds=tuple(seeds),
                    epochs=epochs, config=dict(config), line=line)
