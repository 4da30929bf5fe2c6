"""One cell split across workers in Inspect's shard layout, and the merge of its shards.

Inspect 0.3.285 defines the layout -- a merged log ``<dir>/<name>.eval`` with its
shards in ``<dir>/<name>.shards/<k>/`` -- the walk that lists a shard set and
orders each shard's attempts (``inspect_ai.log._shards._walk.list_shard_set``,
the rule ``inspect ctl --log-dir`` uses), the listing rule that hides shards a
finished merged log covers (``inspect_ai.log.without_merged_shards``) and the
provenance a merged log carries (``EvalSpec.shards``: ``EvalShards`` with one
``EvalShardEntry`` per shard). It ships no merge; :func:`merge_shards` is it:

* each shard's current attempt (the last in Inspect's attempt order) is read
  with ``read_eval_log``; the merge waits while any is not ``success`` or the
  shards do not yet cover the cell's planned sample ids;
* the samples are taken once per ``(id, epoch)``: two shards holding the same
  one is an error naming both files (overlapping shards), never a silent pick;
* the results are recomputed from the merged samples by Inspect's own
  ``recompute_metrics`` (the task's scorers, metrics and epoch reducers as the
  log records them), and the usage is the shards' usage summed;
* ``eval.shards`` records, per shard, what Inspect's model asks for.
  ``selection_digest`` is the SHA-256 of the shard's ``eval.dataset.sample_ids``
  as compact JSON (Inspect 0.3.285 does not fix an encoding);
* the merged log is written beside the shards' directory, atomically (a
  temporary file renamed over it), so a reader never sees half a log and two
  workers merging at once write the same content.

A plan made with ``suite plan --shards K`` gives every cell K shards, one per
selection file; the worker of a shard merges its cell when it finishes and
finds every shard done (:func:`merge_plan`, also run by ``suite merge``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from conflict_eval.runs.spec import SuiteError

SHARDS_SUFFIX = ".shards"


def merged_log_path(log_dir: str | Path, cell: str) -> Path:
    """Where a sharded cell's merged log goes: ``LOG_DIR/<cell>.eval``."""
    return Path(log_dir) / f"{cell}.eval"


def shard_dir(log_dir: str | Path, cell: str, k: int) -> Path:
    """A shard's log folder: ``LOG_DIR/<cell>.shards/<k>`` (Inspect's layout)."""
    return Path(log_dir) / f"{cell}{SHARDS_SUFFIX}" / str(k)


def split_ids(ids: list, k: int) -> list[list]:
    """``ids`` in ``k`` contiguous runs of sizes differing by at most one (dataset order kept)."""
    if k < 1:
        raise SuiteError(f"--shards must be at least 1, got {k}")
    q, r = divmod(len(ids), k)
    out, start = [], 0
    for i in range(k):
        end = start + q + (1 if i < r else 0)
        out.append(list(ids[start:end]))
        start = end
    return [part for part in out if part]


def _current_attempts(shards: Path) -> list[tuple[str, Any]]:
    """``(shard name, FileInfo of its current attempt)`` per shard, by Inspect's own walk."""
    import anyio
    from inspect_ai._util.asyncfiles import AsyncFilesystem
    from inspect_ai.log._shards._walk import list_shard_set

    async def walk():
        async with AsyncFilesystem() as fs:
            return await list_shard_set(fs, str(shards))

    listing = anyio.run(walk)
    return [(s.name, s.current) for s in listing.shards if s.current is not None]


def _digest(ids: list) -> str:
    return hashlib.sha256(json.dumps(ids, separators=(",", ":")).encode("utf-8")).hexdigest()


def _usage_sum(dicts: list[dict]) -> dict:
    out: dict = {}
    for d in dicts:
        for name, usage in (d or {}).items():
            out[name] = out[name] + usage if name in out else usage
    return out


def merge_shards(merged: str | Path, expected_ids: list | None = None) -> str | None:
    """Merge the shard set of ``merged`` (``<name>.eval``, its shards in ``<name>.shards/<k>/``) into it.

    Returns None when merged, or why not yet (a shard not finished, planned ids not covered);
    raises :class:`SuiteError` for overlapping shards or shards of different tasks."""
    from inspect_ai.log import EvalShardEntry, EvalShards, read_eval_log, recompute_metrics, write_eval_log

    merged = Path(merged)
    shards = merged.with_name(merged.name.removesuffix(".eval") + SHARDS_SUFFIX)
    attempts = _current_attempts(shards)
    if not attempts:
        return f"{shards}: no shard logs yet"
    logs = []
    for name, info in attempts:
        log = read_eval_log(info.name)
        if log.status != "success":
            return f"{info.name}: shard {name} is {log.status}"
        logs.append((name, info, log))
    first = logs[0][2]

    def task_of(log):  # each shard is its own eval (its own task_id): the same task, arguments and model
        return (log.eval.task_registry_name or log.eval.task, log.eval.task_args, log.eval.model)

    for name, info, log in logs[1:]:
        if task_of(log) != task_of(first):
            raise SuiteError(f"{info.name}: shard {name} is task {log.eval.task} on {log.eval.model}, "
                             f"not {first.eval.task} on {first.eval.model} like shard {logs[0][0]}")
    seen: dict[tuple, str] = {}
    samples, ids = [], []
    for name, info, log in logs:
        for sample in log.samples or []:
            key = (sample.id, sample.epoch)
            if key in seen:
                raise SuiteError(f"{info.name}: sample {sample.id!r} epoch {sample.epoch} is also in {seen[key]} "
                                 "(overlapping shards)")
            seen[key] = info.name
            samples.append(sample)
        ids += [i for i in (log.eval.dataset.sample_ids or []) if i not in ids]
    if expected_ids is not None:
        missing = [i for i in expected_ids if i not in ids]
        if missing:
            return f"{shards}: {len(missing)} planned sample(s) in no finished shard yet"
        ids = list(expected_ids)
    order = {i: n for n, i in enumerate(ids)}
    samples.sort(key=lambda s: (order.get(s.id, len(order)), s.epoch))

    out = first.model_copy(deep=True)
    out.eval.dataset.sample_ids = ids
    out.eval.dataset.samples = len(ids)
    out.eval.shards = EvalShards(selection="ids", ledger=[EvalShardEntry(
        shard=name, log=Path(str(info.name).removeprefix("file://")).name, eval_set_id=log.eval.eval_set_id,
        status=log.status, error=log.error, samples=len(log.samples or []),
        selected=len(set(log.eval.dataset.sample_ids or [])),
        selection_digest=_digest(list(log.eval.dataset.sample_ids or [])),
        started_at=log.stats.started_at, completed_at=log.stats.completed_at,
        model_usage=log.stats.model_usage, role_usage=log.stats.role_usage,
        size=int(info.size or 0), mtime=info.mtime) for name, info, log in logs])
    out.samples = samples
    out.stats.started_at = min(log.stats.started_at for _, _, log in logs)
    out.stats.completed_at = max(log.stats.completed_at for _, _, log in logs)
    out.stats.model_usage = _usage_sum([log.stats.model_usage for _, _, log in logs])
    out.stats.role_usage = _usage_sum([log.stats.role_usage for _, _, log in logs])
    if out.results is not None:
        out.results.logged_samples = None  # every sample is in the merged log
    recompute_metrics(out)
    out.results.total_samples = len(ids) * (out.eval.config.epochs or 1)
    out.status = "success"
    tmp = merged.with_name(f".{merged.name}.{os.getpid()}.merging")
    write_eval_log(out, str(tmp), format="eval")
    os.replace(tmp, merged)
    return None


def sharded_cells(plan: dict[str, Any]) -> dict[str, list[dict]]:
    """A plan's sharded cells: cell name -> its shard entries (``{"shard", "sample_ids", ...}``)."""
    out: dict[str, list[dict]] = {}
    for w in plan.get("workers") or []:
        if w.get("shard") is not None:
            out.setdefault(w["cells"][0], []).append(w)
    return out


def merge_plan(plan: dict[str, Any], cells: list[str] | None = None) -> dict[str, str | None]:
    """Merge the plan's sharded cells (or only ``cells``) whose shards are all done: cell -> None
    (merged, or already merged and no shard newer) or why not yet."""
    out: dict[str, str | None] = {}
    for cell, entries in sharded_cells(plan).items():
        if cells is not None and cell not in cells:
            continue
        target = merged_log_path(plan["log_dir"], cell)
        expected = [i for e in sorted(entries, key=lambda e: e["shard"]) for i in e["sample_ids"]]
        shards = Path(plan["log_dir"]) / f"{cell}{SHARDS_SUFFIX}"
        newest = max((p.stat().st_mtime for p in shards.glob("*/*.eval")), default=None)
        if target.exists() and newest is not None and newest < target.stat().st_mtime:
            out[cell] = None
            continue
        out[cell] = merge_shards(target, expected)
    return out
