"""The three keys every report output groups by, in one place.

* **task label** (:func:`task_key`): one name per task and arguments,
  whichever way it was started (``conflict-eval run``, a suite,
  ``inspect eval conflict_eval/run`` or a named task); a suite entry's explicit
  ``name:`` wins. :func:`short_heads` shortens labels for column heads.
* **sample group** (:func:`sample_group`): the sub-group a sample's headline
  metric is also reported by -- its ``conflict_type``, else its ``setting``
  (:data:`GROUP_FIELDS`, titled :data:`GROUP_TITLE`).
* **row key** (:func:`row_key`): one row (a cell of the matrix) per model and
  task label.

Renderers iterate :func:`groups_of`; changing how samples are grouped is a
change to this module only. Path-like option values never appear as absolute
local paths (:func:`display_path`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

GROUP_FIELDS = ("conflict_type", "setting")
"""Sample metadata fields tried in order for a sample's group."""
GROUP_TITLE = "conflict type / setting"
GROUP_CSV_COLUMN = "conflict_type_or_setting"


def sample_group(metadata: Mapping[str, Any] | None) -> str | None:
    """The group of one sample (see :data:`GROUP_FIELDS`), or None."""
    meta = metadata or {}
    for name in GROUP_FIELDS:
        if meta.get(name) is not None:
            return str(meta[name])
    return None


def row_key(model: str, task: str) -> tuple[str, str]:
    """One row per model and task label."""
    return (model, task)


def groups_of(rows: Iterable[Any]) -> list[str]:
    """The sorted sample groups present in ``rows`` (each with ``.groups``)."""
    return sorted({g for r in rows for g in r.groups})


# --------------------------------------------------------------------------
# paths: never absolute in a label or an output


@lru_cache(maxsize=256)
def _file_sha(path: str, mtime: float, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: str | Path) -> str | None:
    """sha256 of an existing file (cached by path, mtime and size), else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _file_sha(str(Path(path).resolve()), st.st_mtime, st.st_size) if Path(path).is_file() else None


def is_absolute_path(value: str) -> bool:
    return value.startswith(("/", "~", "\\\\")) or re.match(r"^[A-Za-z]:[\\/]", value) is not None


def display_path(value: str, sha256: str | None = None) -> str:
    """An absolute path as ``parent/name#sha8`` (sha256 of the file's content
    when known or readable, else of the path); relative paths stay as given."""
    if not is_absolute_path(value):
        return value
    p = Path(os.path.expanduser(value))
    digest = sha256 or file_sha256(p) or hashlib.sha256(value.encode()).hexdigest()
    short = "/".join(p.parts[-2:]) if len(p.parts) > 2 else p.name
    return f"{short}#{digest[:8]}"


def display_value(value: Any, sha256: str | None = None) -> Any:
    """``value`` with every absolute path string replaced by :func:`display_path`."""
    if isinstance(value, str):
        return display_path(value, sha256)
    if isinstance(value, Mapping):
        return {k: display_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [display_value(v) for v in value]
    return value


# --------------------------------------------------------------------------
# task label


@dataclass(frozen=True)
class TaskKey:
    """A task label and its parts: ``head(option=value, ...)``."""

    head: str
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    explicit: str | None = None  # a suite entry's name

    @property
    def label(self) -> str:
        if self.explicit:
            return self.explicit
        rest = self.options
        return self.head + (f"({', '.join(f'{k}={v}' for k, v in sorted(rest.items()))})" if rest else "")


def task_key(task: str, args: Mapping[str, Any] | None, metadata: Mapping[str, Any] | None = None) -> TaskKey:
    """The task label of a log (or of a suite entry before it runs).

    Composed tasks are ``method/dataset(option=value, ...)``; named tasks are
    their short name with their arguments; ``None`` arguments are left out;
    an explicit suite ``name:`` (``metadata["suite"]["label"]``) wins.
    """
    args = {k: v for k, v in (args or {}).items() if v is not None}
    meta = metadata or {}
    suite = meta.get("suite") if isinstance(meta.get("suite"), Mapping) else None
    sha = ((meta.get("conflict_eval_provenance") or {}).get("dataset") or {}).get("sha256")
    if "method" in meta and "dataset" in meta and task.split("/")[-1] in ("run", f"{meta['method']}_{meta['dataset']}"):
        options = {**{k: v for k, v in (meta.get("options") or {}).items() if v is not None},
                   **({"path": meta["path"]} if meta.get("path") else {})}
        if meta.get("scorers_given") and meta.get("scorers"):
            options["scorer"] = meta["scorers"][0] if len(meta["scorers"]) == 1 else meta["scorers"]
        head, rest = f"{meta['method']}/{meta['dataset']}", options
    elif task.split("/")[-1] == "run" and ("method" in args or "dataset" in args or task == "conflict_eval/run"):
        head = f"{args.get('method', 'end_to_end')}/{args.get('dataset', 'demo')}"
        rest = {k: v for k, v in args.items() if k not in ("method", "dataset")}
    else:
        head, rest = task.split("/", 1)[-1], args
    rest = {k: (display_path(v, sha) if k == "path" and isinstance(v, str) else display_value(v))
            for k, v in rest.items()}
    key = TaskKey(head, rest)
    if suite and suite.get("label") and str(suite["label"]) != key.label:
        # a suite entry's own name, unless it is the default label of its task and args
        default = task_key(str(suite.get("task") or task), suite.get("args") or {}) if suite.get("task") else None
        if default is None or default.label != str(suite["label"]):
            return TaskKey(head, rest, str(suite["label"]))
        return default
    return key


def canonical_task_name(task: str, args: dict[str, Any] | None, metadata: dict | None = None) -> str:
    """One name per task and arguments (:func:`task_key` without a suite name)."""
    meta = {k: v for k, v in (metadata or {}).items() if k != "suite"}
    return task_key(task, args, meta).label


def short_heads(keys: Iterable[TaskKey]) -> dict[str, str]:
    """Column heads: ``method/dataset`` plus only the options that tell two
    tasks with the same head apart (label -> short head)."""
    def head_of(k: TaskKey) -> str:  # a named task's dataset joins its head: microact/kre_ecqa
        if k.explicit:
            return k.explicit
        ds = k.options.get("dataset")
        return f"{k.head}/{ds}" if "/" not in k.head and isinstance(ds, str) else k.head

    keys = list({k.label: k for k in keys}.values())
    by_head: dict[str, list[TaskKey]] = {}
    for k in keys:
        by_head.setdefault(head_of(k), []).append(k)
    out = {}
    for head, ks in by_head.items():
        if len(ks) == 1:
            out[ks[0].label] = head
            continue
        names = sorted({n for k in ks for n in k.options if not (n == "dataset" and head != k.head)})
        differ = [n for n in names if len({repr(k.options.get(n)) for k in ks}) > 1]
        for k in ks:
            shown = {n: k.options[n] for n in differ if n in k.options}
            out[k.label] = head + (f" ({', '.join(f'{n}={v}' for n, v in shown.items())})" if shown else "")
    return out


def cell_label(log) -> str:
    """The task label of a log's cell (``log``: an Inspect ``EvalLog``), as the
    leaderboard names it: the task and its arguments, secrets stripped."""
    from conflict_eval.components.endpoint import redact

    ev = log.eval
    return task_key(ev.task_registry_name or ev.task, redact(ev.task_args_passed or {}), redact(ev.metadata or {})).label
