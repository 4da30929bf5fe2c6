"""The checks of a suite file's values, each usable on its own: a model string
(:func:`model_problem`, also ``--model``), a positive number (a budget, a limit),
a model argument the provider refuses, a folder name or task label, a task's
arguments against its signature and the parts it composes, ``config:`` against
``GenerateConfig``; and the line of each key path of a parsed YAML file.

:mod:`conflict_eval.runs.spec` uses them and re-exports the public ones; the
``problems`` argument is its collector (``add(path, message)``).
"""

from __future__ import annotations

import inspect as pyinspect
import math
import re
from collections.abc import Mapping
from typing import Any

import yaml

from conflict_eval.runs.registered import GENERIC_TASK, provider_known

__all__ = ["check_config", "check_task_args", "default_label", "folder_name_problem", "label_problem", "line_index",
           "model_arg_problem", "model_problem", "positive_int", "positive_number_problem"]

_MODEL_RE = re.compile(r"^[A-Za-z0-9_.\-]+/\S+$")


def model_problem(model: object) -> str | None:
    """What is wrong with a model string (its shape, then its provider), or ``None``:
    the one check of a suite's ``model:`` and of ``--model``.

    >>> model_problem("gpt-4o")
    "bad model string 'gpt-4o': expected 'provider/model-name'"
    """
    if not isinstance(model, str) or not _MODEL_RE.match(model):
        return f"bad model string {model!r}: expected 'provider/model-name'"
    provider = model.split("/", 1)[0]
    if not provider_known(provider):
        return (f"bad model string {model!r}: unknown provider {provider!r} (Inspect has no model API of that "
                "name; check the spelling, e.g. openai/..., or install its package)")
    return None


def positive_number_problem(value: Any, given: str | None = None) -> str | None:
    """Why ``value`` is not a finite number > 0 (a budget, a limit), else None.
    NaN and infinity are refused: a NaN budget is never reached. The one rule
    for a suite file and the command line (``cli.options.positive_number``,
    which passes the text ``given``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return f"must be a positive number (finite: no NaN or infinity), got {repr(value) if given is None else given}"
    return None


def model_arg_problem(exc: BaseException, model: str, args: Mapping[str, Any]) -> str | None:
    """The one-line error for a model argument the provider does not take
    (``-M max_connections=2`` reaches the provider's client as an unexpected
    keyword), else None: only a ``TypeError`` naming one of ``args`` counts."""
    from inspect_ai.model import GenerateConfig

    m = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
    if not isinstance(exc, TypeError) or m is None or m.group(1) not in args:
        return None
    key = m.group(1)
    hint = (f"; {key} is a generate config setting, not a model argument"
            + (" (a suite's model entry takes max_connections:)" if key == "max_connections" else "")
            if key in GenerateConfig.model_fields else "")
    return f"model argument -M {key}={args[key]!r}: {model} takes no argument {key!r}{hint}"


def folder_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be one folder's name inside the log folder, else None."""
    if "/" in name or "\\" in name or ".." in name or name.strip() in ("", "."):
        return "may not contain '/', '\\' or '..'"
    return None


def label_problem(label: str) -> str | None:
    """Why a task's ``name`` could step out of a folder it is joined to, else None.
    '/' may separate parts, as in the default labels (``end_to_end/demo``)."""
    parts = label.split("/")
    if label.startswith("/") or "\\" in label or any(p in (".", "..") for p in parts):
        return "may not start with '/' or contain '\\' or a '..' or '.' part"
    return None


def line_index(node, path=(), out=None, seen=None) -> dict[tuple, int]:
    """The line of each key path; a node shared through YAML aliases is visited
    once (its other paths fall back to the nearest indexed parent)."""
    out = {} if out is None else out
    seen = set() if seen is None else seen
    out.setdefault(path, node.start_mark.line + 1)
    if id(node) in seen:
        return out
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out.setdefault(path + (key.value,), key.start_mark.line + 1)
            line_index(value, path + (key.value,), out, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            line_index(item, path + (i,), out, seen)
    return out


def positive_int(value, where, problems, what) -> bool:
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        problems.add(where, f"{what} must be a positive integer, got {value!r}")
        return False
    return True


def default_label(task: str, args: Mapping[str, Any]) -> str:
    """The leaderboard's one name for a task and its arguments (see
    :func:`conflict_eval.report.canonical_task_name`)."""
    from conflict_eval.report import canonical_task_name

    return canonical_task_name(task, dict(args))


def check_config(config, where, problems) -> bool:
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


def check_task_args(name, fn, args, where, problems) -> bool:
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
        from conflict_eval.components.manager import UnknownComponentError, components, lookup

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
