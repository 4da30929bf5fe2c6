"""Suites: a YAML file naming tasks (with their parameters) and the models to compare.

    conflict-eval suite run suites/tiny.yaml                  # offline, demo data
    conflict-eval suite run default --model openai/gpt-4o-mini --shard 1/4

A suite runs through ``inspect_ai.eval_set``, so retries, resumption after a
crash (re-run the same command with the same log directory) and concurrency
come from Inspect. Format::

    name: my-suite                      # required
    description: free text              # optional
    models:                             # required unless --model is given
      - openai/gpt-4o-mini              # a model string, or
      - model: conflict_eval/smollm2    # a mapping with connection limit / args
        max_connections: 1
        args: {instances: 2}
    defaults: {limit: 20, seeds: [0]}   # optional; any task key except task/name/args
    eval: {max_tasks: 2}                # optional; options for inspect eval_set
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
* ``limit`` keeps the first N samples, then ``--shard i/n`` keeps the samples
  whose id hashes to shard i (1-based, SHA-256 of the id modulo n), so the
  shards of a run partition exactly the unsharded run, whatever machine runs
  them. Each shard writes to ``<log_dir>/shard-i-of-n``; point the leaderboard
  at the parent directory to merge them.
* ``registered: paper`` expands to every task registered under
  ``conflict_eval/`` (task modules in ``tasks/`` and every task named in
  ``registry.yaml``) except the generic composer ``conflict_eval/run``, each
  with its factory defaults; ``registered: all`` includes ``conflict_eval/run``.

Every problem in a suite file is reported with the file and line.
"""

from __future__ import annotations

import functools
import hashlib
import inspect as pyinspect
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

GENERIC_TASK = "conflict_eval/run"
SUITE_KEYS = {"name", "description", "models", "defaults", "eval", "tasks"}
TASK_KEYS = {"task", "name", "args", "limit", "seeds", "epochs", "config"}
MODEL_KEYS = {"model", "max_connections", "args"}
EVAL_KEYS = {
    "max_tasks", "max_samples", "retry_attempts", "retry_wait", "retry_connections",
    "fail_on_error", "continue_on_fail", "retry_on_error", "time_limit", "message_limit",
    "token_limit", "log_format", "log_samples",
}
_MODEL_RE = re.compile(r"^[A-Za-z0-9_.\-]+/\S+$")


class SuiteError(ValueError):
    """A suite file is invalid; the message names the file and line of each problem."""


@dataclass(frozen=True)
class ModelSpec:
    model: str
    max_connections: int | None = None
    args: dict[str, Any] = field(default_factory=dict)


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


# --------------------------------------------------------------------------
# registered tasks


def registered_tasks() -> dict[str, Any]:
    """Every Inspect task under ``conflict_eval/`` (name -> task function).

    Found through public API only: every ``tasks/<name>/task.py`` module is
    imported and its ``@task`` functions are recognised by
    ``inspect_ai.util.registry_info``. A new task folder joins without an edit.
    """
    import importlib
    import pkgutil

    from inspect_ai.util import registry_info

    import conflict_eval.tasks as tasks_pkg

    found: dict[str, Any] = {}
    for mod in pkgutil.iter_modules(tasks_pkg.__path__):
        if not mod.ispkg:
            continue
        module = importlib.import_module(f"conflict_eval.tasks.{mod.name}.task")
        for obj in vars(module).values():
            if not callable(obj):
                continue
            try:
                info = registry_info(obj)
            except (ValueError, AttributeError):
                continue
            if info.type == "task" and info.name.startswith("conflict_eval/"):
                found[info.name] = obj
    return dict(sorted(found.items()))


def registry_yaml_tasks() -> set[str]:
    """Task names listed in ``registry.yaml`` under any method, dataset or metric."""
    from conflict_eval.registry_file import SECTIONS, load_registry

    data = load_registry()
    names: set[str] = set()
    for section in SECTIONS.values():
        for entry in (data.get(section) or {}).values():
            names.update((entry or {}).get("tasks") or [])
    return names


def paper_tasks(include_generic: bool = False) -> list[str]:
    """Names of the tasks ``registered: paper`` (or ``all``) expands to."""
    names = set(registered_tasks()) | registry_yaml_tasks()
    if not include_generic:
        names.discard(GENERIC_TASK)
    return sorted(names)


# --------------------------------------------------------------------------
# parsing with line numbers


def _line_index(node, path=(), out=None) -> dict[tuple, int]:
    out = {} if out is None else out
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out[path + (key.value,)] = key.start_mark.line + 1
            _line_index(value, path + (key.value,), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _line_index(item, path + (i,), out)
    return out


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
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise SuiteError(f"suite file {file}{line}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    problems = _Problems(file, _line_index(node) if node is not None else {})
    if not isinstance(data, dict):
        problems.add((), "a suite file must be a mapping with 'name', 'models' and 'tasks'")
        problems.raise_if_any()
    for key in data:
        if key not in SUITE_KEYS:
            problems.add((key,), f"unknown key {key!r} (allowed: {', '.join(sorted(SUITE_KEYS))})")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.add(("name",), "'name' must be a non-empty string")
    models = _parse_models(data.get("models"), problems)
    eval_opts = data.get("eval") or {}
    if not isinstance(eval_opts, dict):
        problems.add(("eval",), "'eval' must be a mapping")
        eval_opts = {}
    for key in eval_opts:
        if key not in EVAL_KEYS:
            problems.add(("eval", key), f"unknown eval option {key!r} (allowed: {', '.join(sorted(EVAL_KEYS))})")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        problems.add(("defaults",), "'defaults' must be a mapping")
        defaults = {}
    for key in defaults:
        if key not in TASK_KEYS - {"task", "name", "args"}:
            problems.add(("defaults", key), f"unknown default {key!r} (allowed: config, epochs, limit, seeds)")
    tasks = _parse_tasks(data.get("tasks"), defaults, problems)
    problems.raise_if_any()
    return Suite(name=name, models=models, tasks=tasks, eval=dict(eval_opts),
                 description=str(data.get("description") or ""), path=file)


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
        if not isinstance(model, str) or not _MODEL_RE.match(model):
            problems.add(where + ("model",), f"bad model string {model!r}: expected 'provider/model-name'")
            continue
        provider = model.split("/", 1)[0]
        if not _provider_known(provider):
            problems.add(where + ("model",), f"bad model string {model!r}: unknown provider {provider!r} "
                                             "(Inspect has no model API of that name; is its package installed?)")
            continue
        mc = item.get("max_connections")
        if mc is not None and (isinstance(mc, bool) or not isinstance(mc, int) or mc < 1):
            problems.add(where + ("max_connections",), f"max_connections must be a positive integer, got {mc!r}")
        args = item.get("args") or {}
        if not isinstance(args, dict):
            problems.add(where + ("args",), "model args must be a mapping")
            args = {}
        out.append(ModelSpec(model, mc, dict(args)))
    return out


@functools.lru_cache(maxsize=None)
def _provider_known(provider: str) -> bool:
    """Whether Inspect has a model API named ``provider`` (built-in or from an
    installed package's ``inspect_ai`` entry point), through public API only.

    ``inspect_ai.util.registry_create("modelapi", name)`` raises ``LookupError``
    for an unknown name; for a known one it fails constructing the API without
    a model name (or reports a missing client package), which we take as "known"
    -- nothing is connected or loaded.
    """
    from importlib.metadata import entry_points

    from inspect_ai.util import registry_create

    import inspect_ai.model  # noqa: F401  (registers the built-in providers)

    packages = []
    for ep in entry_points(group="inspect_ai"):
        try:
            ep.load()
        except Exception:  # a broken third-party package must not hide the others
            continue
        packages.append(ep.name)
    for name in [provider, *(f"{p}/{provider}" for p in packages)]:
        try:
            registry_create("modelapi", name)
        except LookupError:
            continue
        except Exception:
            return True
        return True
    return False


def _positive_int(value, where, problems, what) -> bool:
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        problems.add(where, f"{what} must be a positive integer, got {value!r}")
        return False
    return True


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
        from conflict_eval.plugins_manager import did_you_mean

        close = did_you_mean(name, list(registered))
        hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
        problems.add(where + ("task",), f"unknown task {name!r} ({hint}registered: {', '.join(registered) or 'none'})")
        return None
    args = item.get("args") or {}
    if not isinstance(args, dict):
        problems.add(where + ("args",), "'args' must be a mapping")
        return None
    ok = _check_task_args(name, registered[name], args, where, problems)
    limit, epochs = item.get("limit"), item.get("epochs")
    ok &= _positive_int(limit, where + ("limit",), problems, "limit")
    ok &= _positive_int(epochs, where + ("epochs",), problems, "epochs")
    seeds = item.get("seeds", [None])
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        seeds = [seeds]
    if not isinstance(seeds, list) or not seeds or not all(
        s is None or (isinstance(s, int) and not isinstance(s, bool)) for s in seeds
    ) or len(set(seeds)) != len(seeds):
        problems.add(where + ("seeds",), f"seeds must be a list of distinct integers, got {seeds!r}")
        ok = False
    config = item.get("config") or {}
    ok &= _check_config(config, where + ("config",), problems)
    if not ok:
        return None
    label = item.get("name") or _default_label(name, args)
    if not isinstance(label, str):
        problems.add(where + ("name",), "'name' must be a string")
        return None
    return TaskSpec(task=name, label=label, args=dict(args), limit=limit, seeds=tuple(seeds),
                    epochs=epochs, config=dict(config), line=line)


def _default_label(task: str, args: Mapping[str, Any]) -> str:
    """The leaderboard's one name for a task and its arguments (see
    :func:`conflict_eval.leaderboard.canonical_task_name`)."""
    from conflict_eval.leaderboard import canonical_task_name

    return canonical_task_name(task, dict(args))


def _check_config(config, where, problems) -> bool:
    from inspect_ai.model import GenerateConfig

    if not isinstance(config, dict):
        problems.add(where, "'config' must be a mapping of GenerateConfig fields")
        return False
    ok = True
    for key in config:
        if key not in GenerateConfig.model_fields:
            problems.add(where + (key,), f"unknown generate config field {key!r}")
            ok = False
    return ok


def _check_task_args(name, fn, args, where, problems) -> bool:
    params = pyinspect.signature(fn).parameters
    named = {p for p, v in params.items() if v.kind in (v.POSITIONAL_OR_KEYWORD, v.KEYWORD_ONLY)}
    var_kw = any(v.kind is v.VAR_KEYWORD for v in params.values())
    ok = True
    for p, v in params.items():
        if p in named and v.default is v.empty and p not in args:
            problems.add(where + ("args",), f"task {name!r} needs parameter {p!r}")
            ok = False
    unknown = [k for k in args if k not in named]
    if unknown and not var_kw:
        for k in unknown:
            problems.add(where + ("args", k), f"unknown parameter {k!r} for task {name!r} "
                                              f"(accepted: {', '.join(sorted(named)) or 'none'})")
        return False
    if name == GENERIC_TASK:  # check the routed options against the composed parts
        from conflict_eval.plugins_manager import UnknownComponentError, components, lookup

        parts = []
        for key, kind, default in (("method", "method", "end_to_end"), ("dataset", "dataset", "demo")):
            try:
                parts.append(lookup(kind, args.get(key, default)))
            except UnknownComponentError as exc:
                problems.add(where + ("args", key), str(exc))
                ok = False
        scorers = args.get("scorer") or []
        for s in [scorers] if isinstance(scorers, str) else scorers:
            try:
                parts.append(lookup("metric", s))
            except UnknownComponentError as exc:
                problems.add(where + ("args", "scorer"), str(exc))
                ok = False
        if not scorers:  # the default metric is chosen from the data; any metric's options may apply
            parts += list(components()["metric"].values())
        accepted = {p for c in parts for p in c.parameters()}
        if ok and not any(v.kind is v.VAR_KEYWORD for c in parts for v in c.parameters().values()):
            for k in args:
                if k not in named and k not in accepted:
                    problems.add(where + ("args", k), f"unknown parameter {k!r} for task {name!r}: no part "
                                 f"accepts it (accepted: {', '.join(sorted(accepted | named - {'options'}))})")
                    ok = False
    return ok


# --------------------------------------------------------------------------
# sharding and running


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"2/4"`` -> ``(2, 4)``; shards are 1-based."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise SuiteError(f"bad --shard {text!r}: expected i/n with 1 <= i <= n, e.g. 1/4")
    return int(m.group(1)), int(m.group(2))


def in_shard(sample_id: Any, shard: tuple[int, int] | None) -> bool:
    """Whether a sample belongs to ``shard`` (SHA-256 of its id modulo n)."""
    if shard is None:
        return True
    i, n = shard
    digest = hashlib.sha256(str(sample_id).encode("utf-8")).hexdigest()
    return int(digest, 16) % n == i - 1


def build_tasks(suite: Suite, shard: tuple[int, int] | None = None) -> list:
    """Inspect ``Task`` objects for the suite (one per task entry and seed);
    a task none of whose samples fall in ``shard`` is left out."""
    from inspect_ai import task_with
    from inspect_ai.model import GenerateConfig

    registered = registered_tasks()
    tasks = []
    for spec in suite.tasks:
        for seed in spec.seeds:
            task = registered[spec.task](**spec.args)  # a @task function: returns a registered Task
            samples = list(task.dataset)
            if spec.limit is not None:
                samples = samples[: spec.limit]
            samples = [s for s in samples if in_shard(s.id, shard)]
            if not samples:  # this shard holds none of the task's samples
                continue
            config = task.config.merge(GenerateConfig(**spec.config, **({"seed": seed} if seed is not None else {})))
            meta = {**(task.metadata or {}), "suite": {
                "suite": suite.name, "label": spec.label, "task": spec.task, "args": spec.args,
                "limit": spec.limit, "seed": seed, "shard": list(shard) if shard else None}}
            kwargs: dict[str, Any] = {"dataset": samples, "config": config, "metadata": meta}
            if spec.epochs is not None:
                kwargs["epochs"] = spec.epochs
            tasks.append(task_with(task, **kwargs))
    return tasks


def shard_log_dir(log_dir: str | Path, shard: tuple[int, int] | None) -> str:
    return str(Path(log_dir) / f"shard-{shard[0]}-of-{shard[1]}") if shard else str(log_dir)


def run_suite(
    suite: Suite,
    log_dir: str | Path,
    *,
    shard: tuple[int, int] | None = None,
    models: list[ModelSpec] | None = None,
    **eval_set_options: Any,
):
    """Run the suite with ``inspect_ai.eval_set``; returns ``(success, logs)``.

    ``models`` replaces the suite's models; ``eval_set_options`` override the
    suite's ``eval`` section (e.g. ``display="none"``).
    """
    from inspect_ai import eval_set
    from inspect_ai.model import GenerateConfig, get_model

    specs = models or suite.models
    if not specs:
        raise SuiteError(f"suite {suite.name!r} names no models; give --model")
    model_objs = [
        get_model(m.model, config=GenerateConfig(max_connections=m.max_connections), **m.args)
        for m in specs
    ]
    tasks = build_tasks(suite, shard)
    if not tasks:
        return True, []
    options = {**suite.eval, **eval_set_options}
    return eval_set(tasks, log_dir=shard_log_dir(log_dir, shard), model=model_objs,
                    metadata={"suite": suite.name, "shard": list(shard) if shard else None}, **options)


# --------------------------------------------------------------------------
# command line: `suite run`, `suite show`, `leaderboard`, `lmeval-path`


def _model_arg_pairs(pairs: list[str]) -> dict[str, Any]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise SuiteError(f"-M expects name=value, got {pair!r}")
        key, value = pair.split("=", 1)
        out[key.strip()] = yaml.safe_load(value) if value else value
    return out


def cmd_suite_run(args) -> int:
    suite = load_suite(args.suite)
    shard = parse_shard(args.shard)
    models = None
    if args.model:
        bad = [m for m in args.model if not _MODEL_RE.match(m)]
        if bad:
            raise SuiteError(f"bad model string(s) {', '.join(map(repr, bad))}: expected 'provider/model-name'")
        extra = _model_arg_pairs(args.model_arg)
        models = [ModelSpec(m, args.max_connections, extra) for m in args.model]
    log_dir = args.log_dir or f"logs/{suite.name}"
    options = {"display": args.display}
    if args.max_tasks is not None:
        options["max_tasks"] = args.max_tasks
    success, logs = run_suite(suite, log_dir, shard=shard, models=models, **options)
    print(f"suite {suite.name}: {len(logs)} task run(s), {'complete' if success else 'INCOMPLETE'}")
    for log in logs:
        label = ((log.eval.metadata or {}).get("suite") or {}).get("label", log.eval.task)
        print(f"  {log.status:9} {log.eval.model:30} {label}")
    print(f"logs: {shard_log_dir(log_dir, shard)}")
    print(f"table: conflict-eval leaderboard {log_dir}")
    if not success:
        print("re-run the same command to resume the incomplete tasks", file=sys.stderr)
    return 0 if success else 1


def cmd_suite_show(args) -> int:
    suite = load_suite(args.suite)
    print(f"suite {suite.name} ({suite.path}): {suite.description}")
    print("models:", ", ".join(m.model for m in suite.models) or "(none; give --model)")
    for t in suite.tasks:
        extras = {k: v for k, v in (("limit", t.limit), ("epochs", t.epochs)) if v is not None}
        seeds = "" if t.seeds == (None,) else f" seeds={list(t.seeds)}"
        print(f"  {t.label}: {t.task} {json.dumps(t.args)}{seeds} {extras or ''}".rstrip())
    return 0


def cmd_leaderboard(args) -> int:
    from conflict_eval.leaderboard import write_leaderboard

    paths = write_leaderboard(args.log_dir, args.out, prices_path=args.prices,
                              cost_config_path=args.model_cost_config, bootstrap=args.bootstrap, seed=args.seed)
    print(paths["md"].read_text(encoding="utf-8"))
    print("written:", ", ".join(str(p) for p in paths.values()))
    return 0


def cmd_lmeval_path(args) -> int:
    from conflict_eval.lmeval import task_dir

    print(task_dir())
    return 0


def add_cli_commands(sub) -> None:
    """Register the ``suite``, ``leaderboard`` and ``lmeval-path`` subcommands."""
    p = sub.add_parser("suite", help="run or show a suite of tasks x models (inspect eval-set)")
    ssub = p.add_subparsers(dest="suite_command", required=True)
    r = ssub.add_parser("run", help="run a suite file (resumes when re-run with the same --log-dir)")
    r.add_argument("suite", help="suite YAML file, or a shipped suite name (default, tiny)")
    r.add_argument("--model", action="append", help="model(s) replacing the suite's models (repeatable)")
    r.add_argument("-M", dest="model_arg", action="append", default=[], metavar="NAME=VALUE",
                   help="model argument for --model models")
    r.add_argument("--max-connections", type=int, help="connection limit for --model models")
    r.add_argument("--shard", help="run shard i of n of every dataset, e.g. 1/4 (logs to LOG_DIR/shard-i-of-n)")
    r.add_argument("--log-dir", help="default logs/<suite name>")
    r.add_argument("--max-tasks", type=int, help="tasks run in parallel")
    r.add_argument("--display", default="plain", choices=["full", "rich", "plain", "log", "none"])
    r.set_defaults(fn=cmd_suite_run)
    s = ssub.add_parser("show", help="print the tasks a suite expands to")
    s.add_argument("suite")
    s.set_defaults(fn=cmd_suite_show)

    p = sub.add_parser("leaderboard", help="model x task leaderboard (html, md, csv, json) from Inspect logs")
    p.add_argument("log_dir", nargs="+", help="log directories (searched recursively)")
    p.add_argument("--out", default="leaderboard", help="output directory (default ./leaderboard)")
    p.add_argument("--model-cost-config", help="Inspect model cost file (YAML/JSON: model -> input, output, "
                   "input_cache_write, input_cache_read USD per 1M tokens) for runs Inspect did not price")
    p.add_argument("--prices", help="fallback price table YAML (USD per 1M tokens); default: the packaged one")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="B",
                   help="bootstrap resamples for the 95%% intervals (default 1000; 0: none)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    p.set_defaults(fn=cmd_leaderboard)

    p = sub.add_parser("lmeval-path", help="print the directory to pass to lm_eval --include_path")
    p.set_defaults(fn=cmd_lmeval_path)
