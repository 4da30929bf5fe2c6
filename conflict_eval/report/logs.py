"""Reading Inspect logs for the report, through ``inspect_ai.analysis``.

Log headers come from ``evals_df`` and samples from ``samples_df`` (recursively:
machines may each have their own sub-directory; the shards in ``<name>.shards/<k>/``
that a finished merged ``<name>.eval`` covers are left out, Inspect's
``without_merged_shards``). Each reads one
column computed by a function from the log object and stored as one JSON
string, so no field ever passes through pandas' NaN (a missing git commit or
dataset name stays missing, never a float).

How samples are counted:

* A sample is (model, task, generation seed, sample id, epoch). The same sample
  found in several logs -- a crashed run and its retry, overlapping shards, a
  log copied twice -- counts once (:func:`deduplicate`): a copy without error
  beats one with an error, then the copy from the most recently completed log.
* A score value is a metric: numbers as they are, ``CORRECT``/``INCORRECT``/
  ``PARTIAL``/``NOANSWER``, booleans and yes/no through Inspect's
  ``value_to_float``; other strings are not metrics. Dict-valued scores give
  one metric per key. ``parse_failure`` (a score key, or
  ``parse_failure_reason`` in the score's metadata) is the parse-failure rate.
* A sample without a score in a ``cancelled`` log, its error (if any) Inspect's
  ``CancelledError``, was cut off in flight by Ctrl-C, SIGTERM or a budget stop:
  it counts as *cancelled*, not as an error of the model (:func:`was_cut_off`).
* A cell (model x task) is **complete** when every (seed, sample id, epoch)
  its logs set out to run has a copy without error (:func:`completeness`).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .done import is_done
from conflict_eval.components.endpoint import redact
from .costs import as_prices, load_model_cost_config, load_prices, sample_cost_usd
from .grouping import display_value, row_key, sample_group, task_key

PARSE_KEY = "parse_failure"
_INSPECT_VALUES = {"C", "I", "P", "N", "yes", "no", "true", "false"}


@dataclass
class SampleRecord:
    model: str
    task: str
    seed: Any
    sample_id: str
    epoch: int
    ok: bool
    completed: str
    values: dict[str, float] = field(default_factory=dict)
    parse_failure: float | None = None
    group: str | None = None
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    cost_source: str | None = None
    source: str = ""
    uuid: str | None = None
    retry_cost: float | None = 0.0  # $ of the sample's failed attempts (retry_on_error), None when unpriced
    cancelled: bool = False  # cut off in flight when its log was cancelled (Ctrl-C, SIGTERM, a budget stop)

    @property
    def key(self) -> tuple:
        return (self.model, self.task, self.seed, self.sample_id, self.epoch)


def score_values(scores: dict) -> tuple[dict[str, float], float | None]:
    """Metric values and the parse-failure flag of one sample's scores."""
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    values: dict[str, float] = {}
    parse = None
    multi = len(scores) > 1
    for scorer_name, score in scores.items():
        value = score.value
        items = value.items() if isinstance(value, dict) else [(scorer_name, value)]
        for key, v in items:
            if isinstance(v, str):
                if v.strip().lower() not in {s.lower() for s in _INSPECT_VALUES}:
                    continue
                v = to_float(v)
            if isinstance(v, bool):
                v = int(v)
            if key == PARSE_KEY and isinstance(v, int | float):
                parse = max(parse or 0.0, float(v))
                continue
            if isinstance(v, int | float) and not math.isnan(v):
                name = f"{scorer_name}.{key}" if multi and isinstance(value, dict) else key
                values[name] = float(v)
        meta = score.metadata or {}
        if meta.get("parse_failure_reason"):
            parse = 1.0
        elif parse is None and "parse_failure_reason" in meta:
            parse = 0.0
    return values, parse


@dataclass
class EvalFacts:
    """What the report needs from one log header."""

    eval_id: str
    model: str
    task: str
    key: Any  # grouping.TaskKey
    log: str
    status: str
    created: str
    completed: str
    seed: Any
    epochs: int
    sample_ids: list[str] | None
    total_samples: int | None
    completed_samples: int | None
    header: dict[str, Any]  # everything else, JSON-safe (provenance reads it)


def _header(log) -> dict[str, Any]:
    """One log header as a JSON-safe dict (the ``evals_df`` column)."""
    from .batch_prices import batched_models

    ev, plan, stats, res = log.eval, log.plan, log.stats, log.results
    # as Inspect merges them for the evaluated model: the eval's generate config over the model's own
    config = {**(ev.model_generate_config.model_dump(exclude_none=True) if ev.model_generate_config else {}),
              **(plan.config.model_dump(exclude_none=True) if plan and plan.config else {})}
    task_metrics: dict[str, dict[str, float]] = {}
    for s in (res.scores if res else []) or []:
        task_metrics[s.name] = {k: m.value for k, m in s.metrics.items()}
    model_args = {k: v for k, v in (ev.model_args or {}).items() if v is not None and k != "custom_outputs"}
    return redact({  # no user info or token of a URL goes past this point
        "model": ev.model, "task": ev.task, "task_registry_name": ev.task_registry_name, "task_file": ev.task_file,
        "task_args": ev.task_args_passed or {}, "metadata": ev.metadata or {}, "created": str(ev.created),
        "completed": str(stats.completed_at or stats.started_at or ev.created), "status": log.status,
        "packages": ev.packages or {}, "git_commit": ev.revision.commit if ev.revision else None,
        "git_origin": ev.revision.origin if ev.revision else None,
        "dataset_name": ev.dataset.name if ev.dataset else None,
        "dataset_samples": ev.dataset.samples if ev.dataset else None,
        "sample_ids": [str(i) for i in ev.dataset.sample_ids] if ev.dataset and ev.dataset.sample_ids else None,
        "epochs": ev.config.epochs or 1, "limit": ev.config.limit, "config": config,
        "sample_id": ev.config.sample_id, "sample_shuffle": ev.config.sample_shuffle,
        "roles": {k: v.model for k, v in (ev.model_roles or {}).items()},
        "base_url": ev.model_base_url, "model_args": model_args,
        "total_samples": res.total_samples if res else None,
        "completed_samples": res.completed_samples if res else None,
        "task_metrics": task_metrics,
        "model_usage": {m: u.model_dump(exclude_none=True) for m, u in (stats.model_usage or {}).items()},
        "batched_models": batched_models(log),
        "error": (log.error.message.splitlines() or [""])[0][:200] if log.error else None,
    })


def _read_evals(paths: list[str], roots: list[Path]) -> dict[str, EvalFacts]:
    from inspect_ai.analysis import EvalColumn, evals_df

    col = EvalColumn("ce_header", path=lambda log: json.dumps(_header(log), default=str))
    df = evals_df(paths, columns=[col], quiet=True)
    out = {}
    for row in df.to_dict("records"):
        h = json.loads(row["ce_header"])
        key = task_key(h["task_registry_name"] or h["task"], h["task_args"], h["metadata"])
        h["task_args"] = display_value(h["task_args"])
        h["model_args"] = display_value(h["model_args"])
        h["task_file"] = display_value(h["task_file"])
        out[row["eval_id"]] = EvalFacts(
            eval_id=row["eval_id"], model=h["model"], task=key.label, key=key, log=_log_name(row["log"], roots),
            status=h["status"], created=h["created"], completed=h["completed"], seed=h["config"].get("seed"),
            epochs=int(h["epochs"]), sample_ids=h["sample_ids"], total_samples=h["total_samples"],
            completed_samples=h["completed_samples"], header=h)
    return out


def _log_name(log: str, roots: list[Path]) -> str:
    """A log's name relative to the log directory given (never absolute)."""
    p = Path(log.removeprefix("file://"))
    for root in roots:
        try:
            return str(p.resolve().relative_to(root.resolve()))
        except ValueError:
            continue
    return p.name


def listed_logs(log_dir: str | Path, recursive: bool = True) -> list:
    """``list_eval_logs`` without the shards (``<name>.shards/<k>/``) that a finished merged log
    covers: Inspect's own listing rule, the one its viewer listing and bundles apply
    (``without_merged_shards``, not exported by ``inspect_ai.log`` in 0.3.285)."""
    from inspect_ai.log import list_eval_logs
    from inspect_ai.log._file import without_merged_shards

    return without_merged_shards(list_eval_logs(str(log_dir), recursive=recursive))


def read_records(log_dirs: list[str | Path], *, cost_config: dict | None = None,
                 prices: dict | None = None) -> tuple[list[SampleRecord], dict[str, Any]]:
    """Every sample of every log under ``log_dirs`` (before de-duplication)."""
    from inspect_ai.analysis import SampleColumn, samples_df
    from conflict_eval.report.accounting import sample_cost

    cost_config = load_model_cost_config(cost_config or {})
    prices = load_prices() if prices is None else as_prices(prices)
    paths: list[str] = []
    for log_dir in log_dirs:
        if not Path(log_dir).is_dir():
            raise ValueError(f"no such log directory {log_dir}")
        # shards that a finished merged log covers are left out (Inspect's listing rule, as the viewer)
        paths += [info.name for info in listed_logs(log_dir)]
    from .spend import is_attempt

    attempts = [p for p in paths if is_attempt(p)]  # superseded: counted in spend only (report.spend)
    paths = [p for p in paths if not is_attempt(p)]
    stats: dict[str, Any] = {"logs": len(paths), "samples_read": 0, "attempts": attempts, "kept": paths}
    if not paths:
        return [], {**stats, "evals": {}}
    evals = _read_evals(paths, [Path(d) for d in log_dirs])

    def facts(sample) -> str:
        values, parse = score_values(sample.scores or {})
        c = sample_cost(sample)
        usage = sample.model_usage or {}
        usd, src = sample_cost_usd(usage, cost_config, prices)
        retried = retry_usage(sample)
        retry_usd = sample_cost_usd(retried, cost_config, prices)[0] if retried else 0.0
        by_model = {m: sample_cost_usd({m: u}, cost_config, prices)[0] for m, u in usage.items()}
        retry_by_model = {m: sample_cost_usd({m: u}, cost_config, prices)[0] for m, u in retried.items()}
        return json.dumps({
            "id": str(sample.id), "epoch": sample.epoch, "values": values, "parse": parse,
            "ok": is_done(sample), "group": sample_group(sample.metadata),
            "calls": c.calls, "in": c.input_tokens, "out": c.output_tokens, "cost": usd, "cost_source": src,
            "uuid": sample.uuid, "retry_cost": retry_usd, "cut_off": was_cut_off(sample),
            "by_model": by_model, "retry_by_model": retry_by_model})

    cols = [SampleColumn("ce_facts", path=facts, full=True)]
    # one log at a time: samples_df drops copies of a sample (same uuid) across
    # logs itself; reading each log alone lets the de-duplication count them
    rows = [row for path in paths for row in samples_df(path, columns=cols, quiet=True).to_dict("records")]
    records = []
    for row in rows:
        ev, f = evals[row["eval_id"]], json.loads(row["ce_facts"])
        f = at_batch_prices(f, ev)
        records.append(SampleRecord(
            model=ev.model, task=ev.task, seed=ev.seed, sample_id=f["id"], epoch=int(f["epoch"]), ok=f["ok"],
            completed=ev.completed, values=f["values"], parse_failure=f["parse"], group=f["group"],
            calls=f["calls"], input_tokens=f["in"], output_tokens=f["out"], cost=f["cost"],
            cost_source=f["cost_source"], source=ev.log, uuid=f["uuid"], retry_cost=f["retry_cost"],
            cancelled=not f["ok"] and f["cut_off"] and ev.status == "cancelled"))
    stats["samples_read"] = len(records)
    stats["evals"] = evals
    return records, stats


def at_batch_prices(f: dict, ev: EvalFacts) -> dict:
    """A sample's costs with the calls of the log's batched models
    (:func:`.batch_prices.batched_models`) at their batch price
    (:func:`.batch_prices.batch_price`; Inspect prices every call at the list price)."""
    from .batch_prices import batch_discount, batch_price

    batched = ev.header["batched_models"]
    if not batched or f["cost"] is None:
        return f

    def priced(by_model: dict) -> float | None:
        usd = [batch_price(m, c, m in batched) for m, c in by_model.items()]
        return None if None in usd else sum(usd, 0.0)

    retry = priced(f["retry_by_model"]) if f["retry_cost"] is not None else None
    return {**f, "cost": priced(f["by_model"]), "retry_cost": retry,
            "cost_source": f"{f['cost_source']}, batch " + ", ".join(
                (f"x{fr:g}" if (fr := batch_discount(m)[0]) is not None else "n/a")
                + (f" {m}" if len(batched) > 1 else "") for m in batched)}


_CANCEL_ERRORS = ("CancelledError", "KeyboardInterrupt")


def was_cut_off(sample) -> bool:
    """Whether a sample stopped by a cancellation, not by an error of its own: no
    error but no score, or the error Inspect records for a sample cancelled in
    flight (``CancelledError(...)``). Counted as cancelled only in a cancelled log."""
    if sample.error is None:
        return not sample.scores
    return sample.error.message.lstrip().startswith(_CANCEL_ERRORS)


def retry_usage(sample) -> dict:
    """Model usage of a sample's failed attempts (``retry_on_error``): Inspect
    keeps their events in ``error_retries``, not in ``model_usage``."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import ModelUsage

    out: dict[str, ModelUsage] = {}
    for retry in sample.error_retries or []:
        for event in retry.events or []:
            if isinstance(event, ModelEvent) and event.output is not None and event.output.usage is not None:
                out[event.model] = out.get(event.model, ModelUsage()) + event.output.usage
    return out


def deduplicate(records: list[SampleRecord]) -> tuple[list[SampleRecord], int]:
    """One record per sample key (see module docstring); returns (kept, dropped)."""
    best: dict[tuple, SampleRecord] = {}
    for r in records:
        cur = best.get(r.key)
        if cur is None or (r.ok, r.completed) > (cur.ok, cur.completed):
            best[r.key] = r
    return list(best.values()), len(records) - len(best)


@dataclass
class CellStatus:
    """Completion of one cell: samples done of the samples its logs set out to run."""

    done: int
    total: int
    statuses: list[str]
    logs: list[str]

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.done >= self.total and "success" in self.statuses

    def describe(self) -> str:
        bad = sorted({s for s in self.statuses if s != "success"})
        return f"{self.done}/{self.total} samples" + (f", log status {', '.join(bad)}" if bad else "")


def completeness(kept: list[SampleRecord], evals: dict[str, EvalFacts]) -> dict[tuple[str, str], CellStatus]:
    """Each cell's :class:`CellStatus` from its logs' sample ids and epochs.

    A failed, cancelled or unfinished (``started``) log counts as resumed when
    the cell's logs together ran every sample and one of them succeeded.
    """
    expected: dict[tuple[str, str], set] = defaultdict(set)
    unknown: dict[tuple[str, str], int] = defaultdict(int)
    logs: dict[tuple[str, str], list[EvalFacts]] = defaultdict(list)
    for ev in evals.values():
        k = row_key(ev.model, ev.task)
        logs[k].append(ev)
        if ev.sample_ids is not None:
            expected[k] |= {(ev.seed, sid, e) for sid in ev.sample_ids for e in range(1, ev.epochs + 1)}
        else:
            unknown[k] = max(unknown[k], ev.total_samples or 0)
    done: dict[tuple[str, str], set] = defaultdict(set)
    for r in kept:
        if r.ok:
            done[row_key(r.model, r.task)].add((r.seed, r.sample_id, r.epoch))
    out = {}
    for k, evs in logs.items():
        exp = expected[k] | {("?", i) for i in range(unknown[k])}
        have = done[k] & expected[k] if expected[k] else done[k]
        n_done = len(have) + (min(unknown[k], len(done[k])) if not expected[k] else 0)
        out[k] = CellStatus(n_done, len(exp), sorted(ev.status for ev in evs), sorted(ev.log for ev in evs))
    return out
