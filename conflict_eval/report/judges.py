"""Who graded a model-graded score, and how far to trust it: the leaderboard's
"Judges" table (issue 37).

A cell is **model-graded** when a scorer of its log reports the
``judge_panel`` metric (``conflictscore``, ``overrationalization``,
``truthfulqa_conflict``; see ``scorers/conflictscore/panel.py``). For each
such cell the table gives:

* the judges: the ``grader``, ``grader_2``, ... model roles of the log (or
  the evaluated model, when no ``grader`` role was given);
* Krippendorff's alpha of the panel and each judge's agreement with the
  majority (a panel of two or more);
* each judge's self-agreement, with the number of repeats and their
  temperature (``judge_repeats`` > 1), and the flip rate (``judge_swap``);
* each judge's accuracy and Cohen's kappa on the hand-labelled slice, when a
  ``benchmarks/judge_gold.py`` result is given (``--judge-gold FILE``) and
  names that model;
* "single judge, unchecked" when there is one judge and none of the above.

Values come from the log's own metrics, so a cell spread over several logs
shows each log's panel on its own line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .grouping import row_key
from conflict_eval.records.config_files import read_json

_PREFIX = "conflict_eval/judge_panel_"
_ROLE = re.compile(r"^grader(_(\d+))?$")


def load_gold(path: str | Path | None) -> dict[str, dict]:
    """``{judge model: {"accuracy", "kappa", "cells"}}`` from a ``benchmarks/judge_gold.py`` JSON result."""
    if not path:
        return {}
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("judges"), dict):
        raise ValueError(f"{path}: not a benchmarks/judge_gold.py result (no 'judges' object)")
    return {name: {"accuracy": s.get("accuracy"), "kappa": s.get("kappa"), "cells": data.get("cells")}
            for name, s in data["judges"].items()}


def _panel_values(task_metrics: dict | None) -> dict[str, float] | None:
    for metrics in (task_metrics or {}).values():
        vals = {k[len(_PREFIX):]: v for k, v in (metrics or {}).items() if k.startswith(_PREFIX)}
        if vals:
            return vals
    return None


def _judges(header: dict, model: str) -> list[str]:
    roles = header.get("roles") or {}
    graders = sorted(((int(m.group(2) or 1), r) for r in roles if (m := _ROLE.match(r))))
    if not graders:
        return [f"{model} (the evaluated model; no grader role)"]
    return [str(roles[r]) for _, r in graders]


def _f(x: Any) -> str:
    return "n/a" if x is None or x != x else f"{x:.2f}"


def describe(judges: list[str], vals: dict[str, float], gold: dict[str, dict]) -> dict[str, str]:
    """The table's columns for one log of a model-graded cell."""
    n = len(judges)
    out = {"judges": ", ".join(judges) + (" (strict majority)" if n > 1 else "")}
    out["alpha"] = _f(vals.get("alpha")) if n > 1 else "n/a (one judge)"
    out["agreement"] = " / ".join(_f(vals.get(f"agreement_{i + 1}")) for i in range(n)) if n > 1 else "n/a"
    repeats = int(vals.get("repeats") or 1)
    if repeats > 1:
        out["self_agreement"] = " / ".join(_f(vals.get(f"self_agreement_{i + 1}")) for i in range(n)) + \
            f" ({repeats} repeats, T={vals.get('temperature')})"
    else:
        out["self_agreement"] = "not measured"
    out["flip_rate"] = (" / ".join(_f(vals.get(f"flip_rate_{i + 1}")) for i in range(n))
                        if f"flip_rate_1" in vals else "not measured")
    model_names = [j.split(" (")[0] for j in judges]
    slice_ = [f"{_f(gold[m]['accuracy'])} (κ {_f(gold[m]['kappa'])}, {gold[m]['cells']} cells)" if m in gold
              else "not run" for m in model_names]
    out["slice"] = " / ".join(slice_)
    checked = n > 1 or repeats > 1 or "flip_rate_1" in vals or any(m in gold for m in model_names)
    out["note"] = "" if checked else "single judge, unchecked"
    return out


def judge_cells(rows, evals: dict, gold: dict[str, dict] | None = None) -> dict[tuple[str, str], list[dict]]:
    """``{(model, task): [one description per log]}`` for the model-graded cells."""
    gold = gold or {}
    out: dict[tuple[str, str], list[dict]] = {}
    wanted = {(r.model, r.task) for r in rows}
    for ev in sorted(evals.values(), key=lambda e: e.log):
        key = row_key(ev.model, ev.task)
        vals = _panel_values(ev.header.get("task_metrics"))
        if key in wanted and vals is not None:
            out.setdefault(key, []).append(describe(_judges(ev.header, ev.model), vals, gold))
    return out


HEAD = ["model", "judges", "Krippendorff α", "agreement with majority", "self-agreement", "flip rate (swap)",
        "labelled-slice accuracy (κ)", ""]
KEYS = ["judges", "alpha", "agreement", "self_agreement", "flip_rate", "slice", "note"]


def table_rows(board: dict[str, Any], task: str) -> list[list[str]]:
    """The Judges table of one task (empty when no cell of it is model-graded)."""
    cells = board.get("judges") or {}
    return [[model, *[d[k] for k in KEYS]] for (model, t), ds in sorted(cells.items()) if t == task for d in ds]


def overview(board: dict[str, Any]) -> list[str]:
    """One line per model-graded cell, for under the overview matrix: who judged it, alpha, or unchecked."""
    out = []
    for (model, task), ds in sorted((board.get("judges") or {}).items()):
        for d in ds:
            bits = [f"judged by {d['judges']}"]
            if not d["alpha"].startswith("n/a"):
                bits.append(f"α {d['alpha']}")
            if d["self_agreement"] != "not measured":
                bits.append(f"self-agreement {d['self_agreement']}")
            if d["slice"] and set(d["slice"].split(" / ")) != {"not run"}:
                bits.append(f"labelled-slice accuracy {d['slice']}")
            if d["note"]:
                bits.append(d["note"].upper())
            out.append(f"{model} × {task}: " + "; ".join(bits))
    return out
