"""What it takes to reproduce a number: per task, the data (file sha256,
upstream revision, sample ids' hash, recorded at run time as task metadata
``conflict_eval_provenance``), the software (conflict-eval and Inspect
versions, git commit when run from a checkout), per model the endpoint and
revision where known, the generation config; per cell a results hash over
(sample id, score) pairs, the command that re-runs it (with ``--batch`` and
the cost config when the cell used them), how it was made (the model's own
generation config and batch setting, the judges of a model-graded cell, the
commit of the code that ran: :func:`how_made`), and the run-time cost
estimate (task metadata ``conflict_eval_estimate``) when there was one.

Nothing here carries an absolute local path (see :mod:`.grouping`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections import defaultdict
from typing import Any

from conflict_eval.components.catalog import registry_revision
from conflict_eval.records.download import ids_sha256
from conflict_eval.records.source import git_commit

from .commands import cell_command, task_and_args
from conflict_eval.components.endpoint import endpoint_text
from .grouping import row_key
from .logs import EvalFacts
from .stats import Row

NOT_RECORDED = "not recorded"


def _package_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def results_hash(per_id: dict[str, float]) -> str:
    """sha256 over the sorted (sample id, score) pairs (scores to 12 digits)."""
    pairs = [[k, round(v, 12)] for k, v in sorted(per_id.items())]
    return hashlib.sha256(json.dumps(pairs, separators=(",", ":")).encode()).hexdigest()


def _dataset_facts(h: dict[str, Any]) -> dict[str, str]:
    meta = h.get("metadata") or {}
    rec = (meta.get("conflict_eval_provenance") or {}).get("dataset") or {}
    name = meta.get("dataset") or h.get("dataset_name")
    ids = h.get("sample_ids")
    return {
        "dataset": str(name or "unknown"),
        "file": rec.get("file") or NOT_RECORDED,
        "sha256": rec.get("sha256") or NOT_RECORDED,
        "revision": rec.get("revision") or (f"local file {rec['file']}" if rec.get("file") and meta.get("path")
                                            else registry_revision(name)),
        # the ids that ran (after any --limit), else those the dataset recorded
        "sample_ids_sha256": ids_sha256(ids) if ids else rec.get("sample_ids_sha256") or NOT_RECORDED,
    }


def matching_cards(h: dict[str, Any], cards: list | None = None) -> list[str]:
    """Ids of the shipped reproduction cards whose task matches this log: the same
    registered task, and every argument the card sets has the card's value
    (:mod:`conflict_eval.runs.cards`; one-task cards only). ``cards``: the shipped
    cards when the caller already read them (a page of many logs reads them once)."""
    if cards is None:
        from conflict_eval.runs.cards import shipped_cards

        cards = shipped_cards()
    task, args = task_and_args(h)
    found = []
    for card in cards:
        if len(card.tasks) != 1:
            continue
        name, want = card.tasks[0]
        if name == task and all(k in args and str(args[k]) == str(v) for k, v in want.items()):
            found.append(card.id)
    return found


def _estimate(evs: list[EvalFacts]) -> dict[str, Any] | None:
    ests = [(ev.header.get("metadata") or {}).get("conflict_eval_estimate") for ev in evs]
    ests = [e for e in ests if isinstance(e, dict)]
    if not ests:
        return None
    total: dict[str, float | None] = {}
    for e in ests:
        for k, v in (e.get("total") or {}).items():
            total[k] = None if v is None or total.get(k, 0) is None else total.get(k, 0) + v
    per_sample = dict(ests[0].get("per_sample") or {})
    if any(e.get("price_source") == "price file" and (e.get("total") or {}).get("cost_usd") == 0 for e in ests):
        per_sample["cost_usd"] = total["cost_usd"] = None  # a zero fallback price: unknown, as in conflict_eval.pricing
    return {"per_sample": per_sample, "total": total}


def _commit_text(h: dict[str, Any]) -> str:
    """The git commit of the code that ran one log: the conflict-eval checkout
    the run imported (task metadata ``conflict_eval_source``, recorded by
    ``suite run``, ``suite worker`` and ``conflict-eval run`` whatever the
    working directory), else the checkout Inspect found in the working directory."""
    src = (h.get("metadata") or {}).get("conflict_eval_source")
    if isinstance(src, dict) and src.get("git_commit"):
        return str(src["git_commit"]) + (" (with uncommitted changes)" if src.get("dirty") else "")
    if h.get("git_commit"):
        return f"{h['git_commit']} (the working directory's checkout, as Inspect found it)"
    if isinstance(src, dict):
        return "none: conflict-eval was not run from a git checkout"
    return "none recorded (Inspect found no git checkout)"


def _config_text(config: dict[str, Any]) -> dict[str, str]:
    return {k: json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else str(v)
            for k, v in sorted(config.items())}


def how_made(model: str, evs: list[EvalFacts]) -> dict[str, Any]:
    """How one cell was made: this model's generation config (its own, as
    Inspect merged it for the model: ``max_connections``, ``batch``, the
    task's ``max_tokens``, ...), its batch setting, its judges (model-graded
    cells only) and the commit of the code that ran. Logs that differ show
    each distinct value."""
    from conflict_eval.pricing import batch_on

    from .judges import _judges, _panel_values

    configs = list({json.dumps(ev.header.get("config") or {}, sort_keys=True): ev.header.get("config") or {}
                    for ev in evs}.values())
    batch = sorted({json.dumps((ev.header.get("config") or {}).get("batch"), sort_keys=True) for ev in evs})
    graded = [ev for ev in evs if _panel_values(ev.header.get("task_metrics")) is not None]
    judges = sorted({", ".join(_judges(ev.header, model)) for ev in graded})
    return {
        "generate_config": [_config_text(c) for c in configs],
        # on/off by the one rule (pricing.batch_on: batch 0 is off), with the setting beside "on"
        "batch": ["off" if not batch_on(json.loads(b)) else "on" if b == "true" else f"on: {b}" for b in batch],
        "judges": judges or None,
        "git_commit": sorted({_commit_text(ev.header) for ev in evs}),
    }


def provenance(rows: list[Row], evals: dict[str, EvalFacts]) -> dict[str, Any]:
    """The reproducibility block: ``{"created", versions, "tasks": {label: ...}, "cells": {...}}``."""
    import inspect_ai

    tasks: dict[str, dict[str, Any]] = {}
    cell_logs: dict[tuple[str, str], list[EvalFacts]] = defaultdict(list)
    for ev in sorted(evals.values(), key=lambda e: e.log):
        h = ev.header
        cell_logs[row_key(ev.model, ev.task)].append(ev)
        t = tasks.setdefault(ev.task, {k: set() for k in (
            "datasets", "files", "dataset_sha256", "revisions", "sample_ids_sha256", "grader", "conflict_eval",
            "inspect_ai", "git_commits")} | {"generate_config": defaultdict(set), "models": {}, "logs": 0,
                                              "settings": ev.key.options, "head": ev.key.head})
        d = _dataset_facts(h)
        for k, src in (("datasets", "dataset"), ("files", "file"), ("dataset_sha256", "sha256"),
                       ("revisions", "revision"), ("sample_ids_sha256", "sample_ids_sha256")):
            t[k].add(d[src])
        for k, v in (h.get("config") or {}).items():
            t["generate_config"][k].add(json.dumps(v) if isinstance(v, dict | list) else str(v))
        grader = (h.get("roles") or {}).get("grader")
        t["grader"].add(", ".join(grader) if isinstance(grader, list)  # a list-valued role: a panel
                        else grader or "no grader role (model-graded scorers use the evaluated model)")
        t["conflict_eval"].add((h.get("metadata") or {}).get("conflict_eval_version") or NOT_RECORDED)
        t["inspect_ai"].add((h.get("packages") or {}).get("inspect_ai") or NOT_RECORDED)
        t["git_commits"].add(_commit_text(h))
        margs = h.get("model_args") or {}
        recorded = ((h.get("metadata") or {}).get("conflict_eval_endpoint") or {})
        t["models"][ev.model] = {
            "endpoint": endpoint_text(ev.model, h.get("base_url") or margs.get("base_url"),
                                      recorded.get(ev.model) if isinstance(recorded, dict) else None),
            "revision": str(margs.get("revision") or margs.get("model_revision") or NOT_RECORDED)}
        t["logs"] += 1
    for task, t in tasks.items():
        t["samples_scored"] = {r.model: r.n for r in rows if r.task == task}
        t["generate_config"] = {k: sorted(v) for k, v in sorted(t["generate_config"].items())}
        for k, v in list(t.items()):
            if isinstance(v, set):
                t[k] = sorted(v, key=str)
    cells = {}
    cards = None  # the shipped cards, read once for every log of the page
    for r in rows:
        evs = cell_logs.get(row_key(r.model, r.task), [])
        if evs and cards is None:
            from conflict_eval.runs.cards import shipped_cards

            cards = shipped_cards()
        cells[f"{r.model}\t{r.task}"] = {
            "model": r.model, "task": r.task,
            **cell_command([ev.header for ev in evs]),
            "cards": sorted({c for ev in evs for c in matching_cards(ev.header, cards)}),
            "results_sha256": results_hash(r.per_id_headline) if r.per_id_headline else None,
            "logs": [ev.log for ev in evs], "estimate": _estimate(evs),
            "task_metrics": evs[0].header.get("task_metrics") if len(evs) == 1 else None,
            "made": how_made(r.model, evs),
        }
    return {
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "conflict_eval_version": _package_version("conflict-eval"),
        "inspect_ai_version": inspect_ai.__version__,
        "git_commit": git_commit(),
        "tasks": dict(sorted(tasks.items())),
        "cells": cells,
    }


def cell(prov: dict[str, Any], model: str, task: str) -> dict[str, Any]:
    return (prov.get("cells") or {}).get(f"{model}\t{task}") or {}


def made_texts(made: dict[str, Any] | None) -> list[str]:
    """A cell's :func:`how_made` as the page's four columns (generation config, batch, judges, commit)."""
    if not made:
        return ["not recorded"] * 4
    configs = " | ".join(", ".join(f"{k} {v}" for k, v in c.items()) or "Inspect's defaults"
                         for c in made["generate_config"]) or "no log"
    return [configs, " | ".join(made["batch"]) or "off",
            "; ".join(made["judges"]) if made.get("judges") else "not model-graded",
            " | ".join(made["git_commit"]) or NOT_RECORDED]
