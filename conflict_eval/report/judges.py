"""Who graded a model-graded score, and how far to trust it: the leaderboard's
"Judges" table (issues 37, 43).

A cell is **model-graded** when a scorer of its log reports the
``judge_panel`` metric (``conflictscore``, ``overrationalization``,
``truthfulqa_conflict``; see ``scorers/conflictscore/panel.py``). For each
such cell the table gives:

* the judges: the members of a list-valued ``grader`` role, then the
  ``grader_2``, ``grader_3``, ... roles of the log (or the evaluated model,
  when no ``grader`` role was given);
* the **label coverage**: share of units with a determined (strict-majority)
  label, and each judge's share of readable votes; the overview matrix shows
  it in the cell beside the judged figure (:func:`coverage_note`);
* for a panel: Krippendorff's alpha, and per pair of judges Cohen's kappa and
  the raw agreement on the units both read, beside each judge's label base
  rates (a high raw agreement with one dominant label can mean little; kappa
  says how much is beyond chance). There is no "agreement with the majority":
  with two judges it is 1.00 by construction;
* the effective number of independent judges, ``k / (1 + (k - 1) rho)``
  (Kish's design effect, rho = mean pairwise error correlation), where the
  units carry reference labels or the slice result has a panel line;
* each judge's self-agreement, with the number of repeats and their
  temperature (``judge_repeats`` > 1), and the flip rate (``judge_swap``:
  claim/document order, both orders asked at temperature 0; pooled over the
  judges, each judge's beside it);
* each judge's accuracy on the hand-labelled slice with its 95% Wilson
  interval (and the panel's), when a ``benchmarks/judge_gold.py`` result is
  given (``--judge-gold FILE``) and names that model;
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
    """``{judge model: {"accuracy": {k, n, rate, low, high}, "kappa", "cells"}}`` from a
    ``benchmarks/judge_gold.py`` JSON result, plus ``"(panel)"`` -> the panel's line when it has one."""
    if not path:
        return {}
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("judges"), dict):
        raise ValueError(f"{path}: not a benchmarks/judge_gold.py result (no 'judges' object)")
    out = {}
    for name, s in [*data["judges"].items(), *([("(panel)", data["panel"])] if data.get("panel") else [])]:
        acc = s.get("accuracy")
        if not isinstance(acc, dict) or not {"k", "n"} <= set(acc):
            raise ValueError(f"{path}: judge {name!r}: field 'accuracy' is not a {{k, n, rate, low, high}} "
                             "object (an older judge_gold.py result? run the benchmark again)")
        out[name] = {"accuracy": acc, "kappa": s.get("kappa"), "cells": data.get("cells"),
                     "effective_judges": s.get("effective_judges")}
    return out


def _panel_values(task_metrics: dict | None) -> dict[str, float] | None:
    for metrics in (task_metrics or {}).values():
        vals = {k[len(_PREFIX):]: v for k, v in (metrics or {}).items() if k.startswith(_PREFIX)}
        if vals:
            return vals
    return None


def _judges(header: dict, model: str) -> list[str]:
    """The judge models in panel order: ``grader`` (each member of a list-valued role), then
    ``grader_2``, ``grader_3``, ..."""
    roles = header.get("roles") or {}
    graders = sorted(((int(m.group(2) or 1), r) for r in roles if (m := _ROLE.match(r))))
    if not graders:
        return [f"{model} (the evaluated model; no grader role)"]
    out = []
    for _, r in graders:
        bound = roles[r]
        out += [str(x) for x in bound] if isinstance(bound, list) else [str(bound)]
    return out


def _f(x: Any) -> str:
    return "n/a" if x is None or x != x else f"{x:.2f}"


def _acc(a: dict) -> str:
    return f"{a['k']}/{a['n']} = {_f(a.get('rate'))} [{_f(a.get('low'))}, {_f(a.get('high'))}]" if a.get("n") else "n/a"


def _rates(vals: dict[str, float], i: int) -> str:
    prefix = f"base_rate_{i}_"
    rates = sorted(((k[len(prefix):], v) for k, v in vals.items() if k.startswith(prefix)), key=lambda kv: -kv[1])
    return " ".join(f"{lab} {_f(v)}" for lab, v in rates) or "no readable label"


def describe(judges: list[str], vals: dict[str, float], gold: dict[str, dict]) -> dict[str, str]:
    """The table's columns for one log of a model-graded cell."""
    n = len(judges)
    out = {"judges": ", ".join(judges) + (" (strict majority)" if n > 1 else "")}
    cov = " / ".join(_f(vals.get(f"coverage_{i + 1}")) for i in range(n))
    out["coverage"] = _f(vals.get("coverage")) + (f" (each judge: {cov})" if n > 1 else "")
    out["alpha"] = _f(vals.get("alpha")) if n > 1 else "n/a (one judge)"
    if n > 1:
        out["agreement"] = "; ".join(
            f"{i + 1}~{j + 1}: κ {_f(vals.get(f'kappa_{i + 1}_{j + 1}'))}, "
            f"raw {_f(vals.get(f'raw_agreement_{i + 1}_{j + 1}'))} "
            f"({int(vals.get(f'pair_units_{i + 1}_{j + 1}') or 0)} units)"
            for i in range(n) for j in range(i + 1, n))
    else:
        out["agreement"] = "n/a (one judge)"
    out["base_rates"] = " / ".join(f"{i + 1}: {_rates(vals, i + 1)}" if n > 1 else _rates(vals, i + 1)
                                   for i in range(n))
    repeats = int(vals.get("repeats") or 1)
    if repeats > 1:
        out["self_agreement"] = " / ".join(_f(vals.get(f"self_agreement_{i + 1}")) for i in range(n)) + \
            f" ({repeats} repeats, T={vals.get('temperature')})"
    else:
        out["self_agreement"] = "not measured"
    if "flip_rate_1" in vals:
        each = " / ".join(_f(vals.get(f"flip_rate_{i + 1}")) for i in range(n))
        out["flip_rate"] = (f"{_f(vals.get('flip_rate'))} pooled over {int(vals.get('flip_units') or 0)} units"
                            + (f" (each judge: {each})" if n > 1 else "") + "; claim/document order, T=0")
    else:
        out["flip_rate"] = "not measured"
    model_names = [j.split(" (")[0] for j in judges]
    slice_ = [f"{_acc(gold[m]['accuracy'])}" if m in gold else "not run" for m in model_names]
    if n > 1 and "(panel)" in gold and all(m in gold for m in model_names):
        slice_.append(f"panel {_acc(gold['(panel)']['accuracy'])}")
    out["slice"] = " / ".join(slice_)
    eff = vals.get("effective_judges")
    if n > 1 and (eff is None or eff != eff) and "(panel)" in gold:
        eff = gold["(panel)"].get("effective_judges")
    out["effective"] = _f(eff) if n > 1 else "1"
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


HEAD = ["model", "judges", "label coverage", "Krippendorff α", "Cohen's κ and raw agreement (pairs)",
        "label base rates", "effective judges", "self-agreement", "flip rate (swap)",
        "labelled-slice accuracy [95% Wilson]", "note"]
KEYS = ["judges", "coverage", "alpha", "agreement", "base_rates", "effective", "self_agreement", "flip_rate",
        "slice", "note"]


def coverage_note(board: dict[str, Any], model: str, task: str) -> str | None:
    """``"label coverage 0.57"`` for a model-graded matrix cell (one per log), else None."""
    ds = (board.get("judges") or {}).get((model, task))
    return "label coverage " + " / ".join(d["coverage"].split(" (")[0] for d in ds) if ds else None


def table_rows(board: dict[str, Any], task: str) -> list[list[str]]:
    """The Judges table of one task (empty when no cell of it is model-graded)."""
    cells = board.get("judges") or {}
    return [[model, *[d[k] for k in KEYS]] for (model, t), ds in sorted(cells.items()) if t == task for d in ds]


def overview(board: dict[str, Any]) -> list[str]:
    """One line per model-graded cell, for under the overview matrix: who judged it, alpha, or unchecked."""
    out = []
    for (model, task), ds in sorted((board.get("judges") or {}).items()):
        for d in ds:
            bits = [f"judged by {d['judges']}", f"label coverage {d['coverage']}"]
            if not d["alpha"].startswith("n/a"):
                bits.append(f"α {d['alpha']}; {d['agreement']}; base rates {d['base_rates']}")
            if d["self_agreement"] != "not measured":
                bits.append(f"self-agreement {d['self_agreement']}")
            if d["slice"] and set(d["slice"].split(" / ")) != {"not run"}:
                bits.append(f"labelled-slice accuracy {d['slice']}")
            if d["note"]:
                bits.append(d["note"].upper())
            out.append(f"{model} × {task}: " + "; ".join(bits))
    return out
