"""One worker of a plan (:mod:`conflict_eval.runs.plan`): Inspect's selection mode plus
what the toolkit adds on top -- resume after a kill, a share of the budget, a verdict
from the logs -- and a status of the whole plan from the shared log folder.

The shared folder is flat: every worker writes its tasks' ``.eval`` logs into
it (Inspect writes no ``eval-set.json`` in selection mode; the plan is the
manifest); the attempts a resumed cell superseded go to ``LOG_DIR/attempts/``.
A worker that stops short records why in ``LOG_DIR/worker-I-stop.json`` (same
fields as ``suite-stop.json``).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conflict_eval.runs.plan import (SELECTION_VERSION, TASKS_FILE, _cwd, _env, eval_set_options, read_plan,
                                     selection_task)
from conflict_eval.runs.lease import DEFAULT_TIMEOUT_S, Lease, LeaseHeld, holder_text
from conflict_eval.runs.spec import SuiteError, load_suite
from conflict_eval.records.config_files import read_json


@dataclass
class WorkerRun:
    success: bool
    statuses: list = field(default_factory=list)
    stop_reason: str | None = None
    spent_usd: float | None = None
    skipped: list[str] = field(default_factory=list)  # cells already complete
    resumed: list[str] = field(default_factory=list)  # cells resumed from a log
    lease_lost: bool = False  # another worker took the selection's lease over mid-run
    closed: list[str] = field(default_factory=list)  # cells whose crashed samples were closed as errors
    merge: dict[str, str | None] = field(default_factory=dict)  # a shard's cell -> None merged, or why not yet

    @property
    def exit_code(self) -> int:
        if self.success:
            return 0
        return {"SIGINT": 130, "SIGTERM": 143}.get(self.stop_reason or "", 1)


def _headers(log_dir: str, eval_set_id: str) -> list[tuple[str, Any]]:
    """``(log name, header)`` of the plan's logs in the shared folder."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    out = []
    for info in list_eval_logs(log_dir, recursive=False):
        try:
            h = read_eval_log(info, header_only=True)
        except Exception:  # noqa: BLE001 -- a log being written or cut off: not usable for resume
            continue
        if h.eval.eval_set_id == eval_set_id:
            out.append((info.name, h))
    return out


def _complete(h) -> bool:
    return h.status == "success" and h.results is not None and \
        h.results.completed_samples == h.results.total_samples


def plan_statuses(plan: dict[str, Any], cells: list[dict] | None = None) -> list:
    """A :class:`~conflict_eval.runs.status.TaskStatus` per planned cell, from the shared folder."""
    from conflict_eval.runs.status import TaskStatus, _counts, log_mtime

    from inspect_ai.log import list_eval_logs, read_eval_log

    wanted = {(c["name"], c["model"]): c for c in (cells or plan["cells"])}
    best: dict[tuple, tuple[tuple, Any]] = {}
    for info in list_eval_logs(plan["log_dir"], recursive=False):
        try:
            h = read_eval_log(info, header_only=True)
        except Exception:  # noqa: BLE001
            continue
        key = (h.eval.task_registry_name or h.eval.task, h.eval.model)
        if h.eval.eval_set_id != plan["eval_set_id"] or key not in wanted:
            continue
        done, _, errors = _counts(info, h)
        c = wanted[key]
        st = TaskStatus(c["model"], c["label"], h.status, done, c["samples"], info.name, h.eval.task_id,
                        errors, log_mtime(info))
        rank = (st.complete, done, str(h.eval.created or ""))
        if key not in best or rank > best[key][0]:
            best[key] = (rank, st)
    out = [best[k][1] if k in best else _shards_status(plan, c) for k, c in wanted.items()]
    return sorted(out, key=lambda s: (s.model, s.label))


def _shards_status(plan: dict[str, Any], cell: dict):
    """A cell with no log in the shared folder: ``not started``, or, split into shards and not merged yet,
    ``started`` with the samples its shards' newest logs hold (counted once, as the merge will)."""
    from conflict_eval.runs.status import TaskStatus, _counts, log_mtime

    from inspect_ai.log import list_eval_logs, read_eval_log

    done = errors = 0
    seen, newest = False, None
    for w in plan.get("workers") or []:
        if w.get("shard") is None or w["cells"] != [cell["name"]] or "://" in w["log_dir"] \
                or not Path(w["log_dir"]).is_dir():
            continue
        infos = list_eval_logs(w["log_dir"], recursive=False)
        if not infos:
            continue
        info = max(infos, key=lambda i: i.mtime or 0.0)
        d, _, e = _counts(info, read_eval_log(info, header_only=True))
        done, errors, seen = done + d, errors + e, True
        newest = max(newest or 0.0, log_mtime(info) or 0.0)
    return TaskStatus(cell["model"], cell["label"], "started" if seen else "not started", done, cell["samples"],
                      f"{cell['name']}.shards (not merged yet)" if seen else None, None, errors, newest)


def plan_spend(plan: dict[str, Any]) -> dict[int, float]:
    """Dollars each worker's cells record in the shared folder (batch prices where batched)."""
    from conflict_eval.runs.budget import spent_in_logs

    prices = plan_prices(plan)  # a shard's worker: what its shard's folder records
    return {w["worker"]: spent_in_logs(w.get("log_dir") or plan["log_dir"], prices, tasks=set(w["cells"]),
                                       eval_set_id=plan["eval_set_id"]) for w in plan.get("workers") or []}


def plan_prices(plan: dict[str, Any]):
    """The plan's :class:`~conflict_eval.pricing.PriceTable` (its cost config, parsed here)."""
    from conflict_eval.pricing import PriceTable

    return PriceTable.load((plan.get("options") or {}).get("model_cost_config"))


def plan_batch_budget(plan: dict[str, Any], cells: list[dict]) -> tuple[dict[str, Any], dict[str, float]]:
    """:func:`conflict_eval.runs.budget.batch_budget` of a plan's cells."""
    from conflict_eval.runs.budget import batch_budget

    setting = {m["model"]: m.get("batch") for m in plan["models"]}
    return batch_budget(((c["model"], setting.get(c["model"]), c.get("list_usd_per_call")) for c in cells),
                        plan_prices(plan))


def _watch_batches(plan_dir: Path, mine: list[dict], batch: dict[str, Any], timeout: float | None = None):
    """A :class:`~conflict_eval.runs.batch_stop.BatchWatch` on this worker's batched models: their
    Tasks are built here first (the generated ``tasks.py`` gets the same ones, :func:`cell_task`'s
    cache), so their models are hooked before Inspect submits a batch. ``timeout``: the suite's
    ``batch_timeout``, as ``suite run`` uses it."""
    from conflict_eval.runs.batch_stop import BATCH_TIMEOUT, BatchWatch
    from conflict_eval.runs.plan import PLAN_FILE, _plan_cell

    watch = BatchWatch(timeout=timeout if timeout is not None else BATCH_TIMEOUT)
    for c in mine:
        if c["model"] in batch:
            model = _plan_cell(str(plan_dir.resolve() / PLAN_FILE), c["name"]).model
            if model is None:
                watch.unwatched.add(c["model"])
            else:
                watch.watch(c["model"], model)
    return watch


def _set_aside_superseded(plan: dict[str, Any], mine: list[dict], statuses: list) -> None:
    """Once a cell is complete, the attempts it resumed from are superseded: the killed log,
    the ``-recovered`` copy Inspect makes of a crashed log, and any earlier unfinished
    attempt. They are moved into ``LOG_DIR/attempts/`` (only this worker's cells, on a
    local folder): not results, but what their calls cost still counts
    (:func:`conflict_eval.report.spend.attempts_spend`)."""
    from conflict_eval.report.spend import ATTEMPTS

    if "://" in plan["log_dir"]:
        return
    keep = {(s.model, s.label): s.log for s in statuses if s.complete}
    names = {(c["name"], c["model"]): (c["model"], c["label"]) for c in mine}
    aside = Path(plan["log_dir"]) / ATTEMPTS
    for name, h in _headers(plan["log_dir"], plan["eval_set_id"]):
        cell = names.get((h.eval.task_registry_name or h.eval.task, h.eval.model))
        if cell in keep and name != keep[cell] and not _complete(h):
            path = Path(name.removeprefix("file://"))
            aside.mkdir(exist_ok=True)
            path.replace(aside / path.name)


def run_worker(selection_path: str | Path, *, display: str = "none", wait: bool = False,
               lease_timeout: float = DEFAULT_TIMEOUT_S, incomplete_action: str = "retry",
               incomplete_max: float | None = None) -> WorkerRun:
    """Run one worker's selection into the plan's shared log folder (see the module docstring), holding
    the selection's lease (:mod:`conflict_eval.runs.lease`): with another live worker on it, raise
    :class:`~conflict_eval.runs.lease.LeaseHeld`, or wait for it when ``wait``.

    ``incomplete_action="error"`` closes the samples a crashed attempt left in flight as errors
    (Inspect's ``recover_eval_log(incomplete_action="error", incomplete_max=...)``, which a worker in
    selection mode leaves to its runner) before resuming; ``"retry"`` (Inspect's default) runs them again."""
    if incomplete_action not in ("retry", "error"):
        raise SuiteError(f"incomplete action must be 'retry' or 'error', got {incomplete_action!r}")
    closing = {"action": incomplete_action, "max": incomplete_max}
    sel_file = Path(selection_path).resolve()
    plan_file, plan = read_plan(sel_file)
    plan_dir = plan_file.parent
    selection = read_json(sel_file)
    wanted = [t["identifier"] for t in selection.get("tasks") or []]
    by_id = {c["identifier"]: c for c in plan["cells"]}
    unknown = [i for i in wanted if i not in by_id]
    if unknown:
        raise SuiteError(f"{sel_file}: task(s) not in plan {plan_file}: {', '.join(unknown)}")
    mine = [by_id[i] for i in wanted]
    worker = next((w for w in plan.get("workers") or [] if (plan_dir / w["selection"]).resolve() == sel_file), None)
    log_dir = plan["log_dir"]
    shard = (worker or {}).get("shard") is not None
    run_plan, run_cells = _shard_part(plan, sel_file, mine, worker) if shard else (plan, mine)
    if "://" in log_dir:  # no lock or atomic rename on an object store: one worker per selection is the scheduler's
        print(f"note: no lease on {log_dir} (object storage); start one worker per selection", file=sys.stderr)
        run = _run(sel_file, run_plan, plan_dir, selection, run_cells, worker, display, closing)
    else:
        Path(run_plan["log_dir"]).mkdir(parents=True, exist_ok=True)
        lease = Lease(Path(log_dir) / f"worker-{(worker or {}).get('worker', sel_file.stem)}.lease", str(sel_file),
                      timeout=lease_timeout)
        try:
            lease.acquire(wait=wait, on_wait=lambda who: print(f"waiting for the lease: {who}", file=sys.stderr))
        except LeaseHeld as e:
            raise LeaseHeld(f"{sel_file}: not run: another worker runs this selection: {e}"
                            + ("" if wait else "; give --wait to wait for it")) from None
        if lease.took_over is not None:
            print(f"took over a stale lease: {holder_text(lease.took_over, lease)}", file=sys.stderr)
        with lease:
            run = _run(sel_file, run_plan, plan_dir, selection, run_cells, worker, display, closing)
        run.lease_lost = lease.lost
    if shard and run.success:  # the last shard to finish merges its cell (suite merge does it by hand)
        from conflict_eval.runs.shards import merge_plan

        run.merge = merge_plan(plan, [mine[0]["name"]])
    return run


def _shard_part(plan: dict[str, Any], sel_file: Path, mine: list[dict], worker: dict) -> tuple[dict, list[dict]]:
    """A shard of a cell (``suite plan --shards``) as a plan of its own: the shard's folder
    ``LOG/<cell>.shards/<k>`` as its log folder, the cell with the shard's sample count."""
    cell = mine[0]
    planned = sum(len(w["sample_ids"]) for w in plan["workers"] if w["cells"] == worker["cells"])
    epochs = max(1, cell["samples"] // planned) if planned else 1
    part = {**plan, "log_dir": worker["log_dir"], "workers": [{**worker, "selection": str(sel_file)}]}
    return part, [{**cell, "samples": len(worker["sample_ids"]) * epochs}]


def _close_crashed(plan: dict[str, Any], mine: list[dict], incomplete_max: float | None) -> list[str]:
    """Close the in-flight samples of this worker's crashed (``started``) logs as errors, with Inspect's
    recovery (safe only under the lease: no live worker writes these logs). When every sample is then
    final, Inspect finalizes the recovered log (``success``) and the cell is done: the crashed log is
    set aside into ``LOG_DIR/attempts/`` and the cell returned. Otherwise the cell is resumed, and
    (Inspect's rule) its errored samples run again with the rest."""
    from inspect_ai.log import RecoveryNotAvailable, RecoveryThresholdExceeded, recover_eval_log

    from conflict_eval.report.spend import ATTEMPTS

    names = {(c["name"], c["model"]): c["name"] for c in mine}
    closed = []
    for name, h in _headers(plan["log_dir"], plan["eval_set_id"]):
        cell = names.get((h.eval.task_registry_name or h.eval.task, h.eval.model))
        if cell is None or h.status != "started":
            continue
        path = Path(name.removeprefix("file://"))
        try:
            recovered = recover_eval_log(str(path), cleanup="finalized", incomplete_action="error",
                                         incomplete_max=incomplete_max)
        except RecoveryNotAvailable:
            continue
        except RecoveryThresholdExceeded as e:  # too many in flight: resumed and run again instead
            print(f"note: {cell}: {e}", file=sys.stderr)
            continue
        if recovered.status != "success":
            print(f"note: {cell}: samples still to run; it is resumed and its closed samples run again with them "
                  "(Inspect's rule)", file=sys.stderr)
            continue
        if "://" not in plan["log_dir"]:
            (path.parent / ATTEMPTS).mkdir(exist_ok=True)
            path.replace(path.parent / ATTEMPTS / path.name)
        closed.append(cell)
    return closed


def _run(sel_file: Path, plan: dict[str, Any], plan_dir: Path, selection: dict[str, Any], mine: list[dict],
         worker: dict | None, display: str, closing: dict[str, Any]) -> WorkerRun:
    """The worker's run once it holds the lease: skip the complete cells, resume the others."""
    from inspect_ai import eval_set

    from conflict_eval.runs.budget import budget_guard
    from conflict_eval.runs.run import batched_run_options
    from conflict_eval.runs.signals import SigtermAsSigint, inspect_verdict_muted

    log_dir = plan["log_dir"]
    closed = _close_crashed(plan, mine, closing["max"]) if closing["action"] == "error" else []

    # what the shared folder already holds for these cells: skip the complete, resume the rest
    logs: dict[tuple, list[tuple[str, Any]]] = {}
    for name, h in _headers(log_dir, plan["eval_set_id"]):
        logs.setdefault((h.eval.task_registry_name or h.eval.task, h.eval.model), []).append((name, h))
    todo, skipped, resumed = [], [], []
    for c in mine:
        found = sorted(logs.get((c["name"], c["model"]), []), key=lambda x: str(x[1].eval.created or ""))
        if any(_complete(h) for _, h in found) or (c["name"] in closed and any(h.status == "success"
                                                                                  for _, h in found)):
            skipped.append(c["name"])  # complete, or finalized with its crashed samples closed as errors
            continue
        resume = found[-1][0].removeprefix("file://") if found else None
        if resume:
            resumed.append(c["name"])
        todo.append(selection_task(c, **({"resume": resume} if resume else {})))
    budget = (worker or {}).get("budget_usd")
    stop_file = Path(log_dir) / f"worker-{(worker or {}).get('worker', sel_file.stem)}-stop.json"
    if not todo:
        if "://" not in log_dir:
            stop_file.unlink(missing_ok=True)
        return WorkerRun(True, plan_statuses(plan, mine), None, None, skipped, resumed, closed=closed)
    effective = sel_file.with_name(sel_file.stem + ".run.json")
    # at this toolkit's schema version: the facets it adds need version 5 or later (a plan made before them
    # declared version 1)
    effective.write_text(json.dumps({**selection, "version": SELECTION_VERSION, "tasks": todo}, indent=2) + "\n",
                         encoding="utf-8")

    suite = load_suite(plan["suite"])
    batch, reserve = plan_batch_budget(plan, mine)
    watch = _watch_batches(plan_dir, mine, batch, suite.batch_timeout)
    interrupted = None
    with SigtermAsSigint() as term, \
            budget_guard(budget, log_dir, plan_prices(plan),
                         batch=batch, reserve=reserve,
                         tasks={c["name"] for c in mine}, eval_set_id=plan["eval_set_id"]) as guard, \
            inspect_verdict_muted(), _cwd(plan_dir), _env("INSPECT_EVAL_SET_SELECTION", str(effective)), \
            _env("INSPECT_EVAL_SET_CAPTURE", None):
        try:
            # the suite's settings for batched runs, as `suite run` applies them (batch_timeout above)
            eval_set(TASKS_FILE, log_dir=log_dir, display=display,
                     **batched_run_options(watch, eval_set_options(suite, plan)))
        except KeyboardInterrupt:
            interrupted = "SIGINT"
    statuses = plan_statuses(plan, mine)
    _set_aside_superseded(plan, mine, statuses)
    left = [s for s in statuses if not s.complete]
    reason = None
    if left:
        reason = "budget" if guard.stopped else term.received or interrupted or (
            "SIGINT" if any(s.status == "cancelled" for s in left) else "incomplete")

    def stop(batches):  # why this worker stopped short (beside suite-stop.json's fields)
        stop_file.write_text(json.dumps({"conflict_eval_stop_reason": reason, "budget_usd": budget,
                                         "spent_usd": guard.spent, "submitted": guard.submitted(),
                                         **({"batches": batches} if batches else {}),
                                         "tasks": [{"model": s.model, "task": s.label, "state": s.status,
                                                    "done": s.done, "total": s.total} for s in left]},
                                        indent=2) + "\n", encoding="utf-8")

    local = "://" not in log_dir
    watch.settle(log_dir if local else None, reason in ("SIGINT", "SIGTERM"), stop if left and local else None)
    if not left and local:
        stop_file.unlink(missing_ok=True)
    return WorkerRun(not left, statuses, reason, guard.spent, skipped, resumed, closed=closed)
