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
  one metric per key. The parse-failure, refusal and no-response columns
  come from Inspect's ``Score.reason`` (:mod:`conflict_eval.answers.reasons`):
  ``invalid_response_format`` or ``no_response`` is a parse failure,
  ``refusal`` a refusal, ``no_response`` an empty answer -- so a third-party
  scorer that sets the reason gets the columns. A score without a reason
  falls back to its ``parse_failure`` key or ``parse_failure_reason`` metadata.
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

from conflict_eval.answers.reasons import NO_RESPONSE, PARSE_FAILURE_REASONS, REFUSAL

from .done import is_done
from conflict_eval.components.endpoint import redact
from .grouping import display_value, row_key, sample_group, task_key

PARSE_KEY = "parse_failure"
CLUSTER_KEY = "cluster"
"""The task metadata key naming the sample metadata key (dotted for a nested one) that samples cluster
on: ``Task(metadata={"cluster": "id"})`` (report.stats)."""
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
    refusal: float = 0.0  # 1 when a score's reason is "refusal"
    no_response: float = 0.0  # 1 when a score's reason is "no_response"
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
    cluster: str | None = None  # the sample's value of its task's cluster key (report.stats intervals)
    cluster_key: str | None = None  # that key, as the task declared it

    @property
    def key(self) -> tuple:
        return (self.model, self.task, self.seed, self.sample_id, self.epoch)


def _score_items(scores: dict):
    """``(metric name, number or None, scorer name, key)`` for every numeric score value of one sample."""
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
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
            if isinstance(v, int | float):
                yield (f"{scorer_name}.{key}" if multi and isinstance(value, dict) else key), float(v), key


def score_values(scores: dict) -> tuple[dict[str, float], float | None]:
    """Metric values and the parse-failure flag of one sample's scores."""
    values: dict[str, float] = {}
    parse = None
    for name, v, key in _score_items(scores):
        if key == PARSE_KEY:
            parse = max(parse or 0.0, v)
        elif not math.isnan(v):
            values[name] = v
    for score in scores.values():
        meta = score.metadata or {}
        if meta.get("parse_failure_reason"):
            parse = 1.0
        elif parse is None and "parse_failure_reason" in meta:
            parse = 0.0
    if any(getattr(s, "reason", None) in PARSE_FAILURE_REASONS for s in scores.values()):
        parse = 1.0  # Inspect's vocabulary first: a third-party scorer needs no parse_failure key
    return values, parse


def nan_values(scores: dict) -> set[str]:
    """The metrics of one sample whose value is NaN (unscored), named as :func:`score_values` names them."""
    return {name for name, v, key in _score_items(scores) if key != PARSE_KEY and math.isnan(v)}


def reason_flags(scores: dict) -> dict[str, float]:
    """``{"refusal": 0/1, "no_response": 0/1}`` of one sample, from its scores' ``Score.reason``."""
    reasons = {getattr(s, "reason", None) for s in scores.values()}
    return {"refusal": float(REFUSAL in reasons), "no_response": float(NO_RESPONSE in reasons)}


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
    from conflict_eval.pricing import batched_models

    ev, plan, stats, res = log.eval, log.plan, log.stats, log.results
    # as Inspect merges them for the evaluated model: the eval's generate config over the model's own
    config = {**(ev.model_generate_config.model_dump(exclude_none=True) if ev.model_generate_config else {}),
              **(plan.config.model_dump(exclude_none=True) if plan and plan.config else {})}
    task_metrics: dict[str, dict[str, float]] = {}
    for s in (res.scores if res else []) or []:
        task_metrics[s.name] = {k: m.value for k, m in s.metrics.items()}
    model_args = {k: v for k, v in (ev.model_args or {}).items() if v is not None and k != "custom_outputs"}
    return redact({  # no user info or token of a URL goes past this point
        "model": ev.model, "task": ev.task, "task_id": ev.task_id, "eval_set_id": ev.eval_set_id, "task_registry_name": ev.task_registry_name, "task_file": ev.task_file,
        "task_args": ev.task_args_passed or {}, "metadata": ev.metadata or {}, "created": str(ev.created),
        "completed": str(stats.completed_at or stats.started_at or ev.created), "status": log.status,
        "packages": ev.packages or {}, "git_commit": ev.revision.commit if ev.revision else None,
        "git_origin": ev.revision.origin if ev.revision else None,
        "dataset_name": ev.dataset.name if ev.dataset else None,
        "dataset_samples": ev.dataset.samples if ev.dataset else None,
        "sample_ids": [str(i) for i in ev.dataset.sample_ids] if ev.dataset and ev.dataset.sample_ids else None,
        "epochs": ev.config.epochs or 1, "limit": ev.config.limit, "config": config,
        "sample_id": ev.config.sample_id, "sample_shuffle": ev.config.sample_shuffle,
        "roles": {k: [m.model for m in v] if isinstance(v, list) else v.model  # a list-valued role: a judge panel
                  for k, v in (ev.model_roles or {}).items()},
        "base_url": ev.model_base_url, "model_args": model_args,
        "total_samples": res.total_samples if res else None,
        "completed_samples": res.completed_samples if res else None,
        "task_metrics": task_metrics, "headline": _headline(log),
        "cluster_key": (ev.metadata or {}).get(CLUSTER_KEY),
        "model_usage": {m: u.model_dump(exclude_none=True) for m, u in (stats.model_usage or {}).items()},
        "batched_models": batched_models(log),
        "error": (log.error.message.splitlines() or [""])[0][:200] if log.error else None,
    })


def metadata_value(metadata: dict | None, key: str):
    """``key`` of a sample's metadata; a dotted key reads a nested field (``extra.question_id``).

    >>> metadata_value({"extra": {"question_id": "q7"}}, "extra.question_id")
    'q7'
    """
    value = metadata or {}
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _headline(log) -> dict | None:
    """The headline Inspect resolves for a log (``inspect_ai.log.headline_metric``:
    the task's ``Task(headline_metric=...)``, else the first metric of the first score)."""
    from inspect_ai.log import headline_metric

    resolved = headline_metric(log)
    if resolved is None:
        return None
    return {"scorer": resolved.score.scorer, "score": resolved.score.name, "metric": resolved.name,
            "value": resolved.metric.value}


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
        out[str(row["log"]).removeprefix("file://")] = out[row["eval_id"]]  # by path too (read_records)
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


def read_records(log_dirs: list[str | Path], prices=None) -> tuple[list[SampleRecord], dict[str, Any]]:
    """Every sample of every log under ``log_dirs`` (before de-duplication), priced with
    ``prices`` (a :class:`~conflict_eval.pricing.PriceTable`; ``None``: the packaged one)."""
    from conflict_eval.pricing import PriceTable

    from inspect_ai.analysis import SampleColumn, samples_df
    from conflict_eval.report.accounting import sample_cost

    table = PriceTable.of(prices)
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

    cluster_key: str | None = None  # the cluster key of the log being read

    def facts(sample) -> str:
        values, parse = score_values(sample.scores or {})
        cluster = metadata_value(sample.metadata, cluster_key) if cluster_key else None
        c = sample_cost(sample)
        usage = sample.model_usage or {}
        retried = retry_usage(sample)
        # list prices here; the log's batched models get their discount in at_batch_prices
        priced = table.usage_usd(usage)
        usd, src = priced.usd, priced.source
        retry_usd = table.usage_usd(retried).usd if retried else 0.0
        by_model = {m: table.usd(m, u).usd for m, u in usage.items()}
        retry_by_model = {m: table.usd(m, u).usd for m, u in retried.items()}
        return json.dumps({
            "id": str(sample.id), "epoch": sample.epoch, "values": values, "parse": parse,
            "reasons": reason_flags(sample.scores or {}),
            "ok": is_done(sample), "group": sample_group(sample.metadata),
            "calls": c.calls, "in": c.input_tokens, "out": c.output_tokens, "cost": usd, "cost_source": src,
            "uuid": sample.uuid, "retry_cost": retry_usd, "cut_off": was_cut_off(sample),
            "by_model": by_model, "retry_by_model": retry_by_model,
            "cluster": None if cluster is None else str(cluster)})

    cols = [SampleColumn("ce_facts", path=facts, full=True)]
    # one log at a time: samples_df drops copies of a sample (same uuid) across
    # logs itself; reading each log alone lets the de-duplication count them
    rows = []
    for path in paths:
        ev = evals.get(path.removeprefix("file://"))
        cluster_key = ev.header.get("cluster_key") if ev is not None else None
        rows += samples_df(path, columns=cols, quiet=True).to_dict("records")
    records = []
    for row in rows:
        ev, f = evals[row["eval_id"]], json.loads(row["ce_facts"])
        f = at_batch_prices(f, ev, table)
        records.append(SampleRecord(
            model=ev.model, task=ev.task, seed=ev.seed, sample_id=f["id"], epoch=int(f["epoch"]), ok=f["ok"],
            completed=ev.completed, values=f["values"], parse_failure=f["parse"], group=f["group"],
            refusal=f["reasons"]["refusal"], no_response=f["reasons"]["no_response"],
            calls=f["calls"], input_tokens=f["in"], output_tokens=f["out"], cost=f["cost"],
            cost_source=f["cost_source"], source=ev.log, uuid=f["uuid"], retry_cost=f["retry_cost"],
            cancelled=not f["ok"] and f["cut_off"] and ev.status == "cancelled",
            cluster=f["cluster"], cluster_key=ev.header.get("cluster_key") if f["cluster"] is not None else None))
    stats["samples_read"] = len(records)
    stats["evals"] = {k: v for k, v in evals.items() if k == v.eval_id}
    return records, stats


def at_batch_prices(f: dict, ev: EvalFacts, table) -> dict:
    """A sample's costs with the calls of the log's batched models
    (:func:`conflict_eval.pricing.batched_models`) at their batch price
    (:meth:`conflict_eval.pricing.PriceTable.batch_usd`; Inspect prices every call at the list price)."""
    batched = ev.header["batched_models"]
    if not batched or f["cost"] is None:
        return f

    def priced(by_model: dict) -> float | None:
        usd = [table.batch_usd(m, c, m in batched) for m, c in by_model.items()]
        return None if None in usd else sum(usd, 0.0)

    retry = priced(f["retry_by_model"]) if f["retry_cost"] is not None else None
    return {**f, "cost": priced(f["by_model"]), "retry_cost": retry,
            "cost_source": f"{f['cost_source']}, batch " + ", ".join(
                (f"x{fr:g}" if (fr := table.batch_fraction(m)[0]) is not None else "n/a")
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


NOT_STARTED = "not started"  # the status of a planned task with no log (report.manifest)


@dataclass
class CellStatus:
    """Completion of one cell: samples done of the samples its logs (and its
    tasks that never started, :func:`add_not_started`) set out to run; ``total``
    is None when unknown (a task that never started, its size recorded nowhere)."""

    done: int
    total: int | None
    statuses: list[str]
    logs: list[str]

    @property
    def complete(self) -> bool:
        return self.total is not None and self.total > 0 and self.done >= self.total and \
            "success" in self.statuses and NOT_STARTED not in self.statuses

    @property
    def total_text(self) -> str:
        return "?" if self.total is None else str(self.total)

    @property
    def not_started(self) -> bool:
        """No task of the cell has a log: it never started."""
        return not self.logs

    def describe(self) -> str:
        if self.not_started:
            return f"not started, {self.done}/{self.total_text} samples"
        bad = sorted({s for s in self.statuses if s != "success"})
        return f"{self.done}/{self.total_text} samples" + (f", log status {', '.join(bad)}" if bad else "")


def add_not_started(status: dict[tuple[str, str], CellStatus], planned: dict[tuple[str, str], list]) -> None:
    """Count the planned tasks with no log (:func:`conflict_eval.report.manifest.not_started`) into
    ``status``: a cell of their own (0 done) or more samples to do in a logged cell; an unknown size
    makes the cell's total unknown."""
    for key, tasks in planned.items():
        sizes = [p.total for p in tasks]
        extra = None if None in sizes else sum(sizes)
        cur = status.get(key)
        if cur is None:
            status[key] = CellStatus(0, extra, [NOT_STARTED] * len(tasks), [])
        else:
            total = None if cur.total is None or extra is None else cur.total + extra
            status[key] = CellStatus(cur.done, total, sorted(cur.statuses + [NOT_STARTED] * len(tasks)), cur.logs)


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
