"""Every call paid for: a cell's ``$ total`` from Inspect's own usage records.

Inspect totals each log's model usage in its header (``stats.model_usage``):
every call the run made, including those of samples cancelled in flight (a
Ctrl-C, SIGTERM or budget stop) and, when ``eval_set`` resumes a log in
place, the calls of the interrupted attempt. A cell's ``$ total`` is the sum
over its log files of those header records (:func:`log_cost`), priced as
:class:`conflict_eval.pricing.PriceTable` prices them; a log whose header holds no usage (killed before
Inspect wrote it) counts the usage of the samples it flushed instead. The
suite budget (:mod:`conflict_eval.runs.budget`) counts spend with the same
function, so the page, the budget counter and the log headers agree.

A worker of a plan sets the attempts a resumed cell superseded aside in
``LOG_DIR/attempts/`` (:data:`ATTEMPTS`): the log of a killed attempt and
Inspect's ``-recovered`` copy of it. They are not results (the page and the
status read around them), but their calls were paid for: the calls of the
samples no kept log holds -- the samples in flight when the attempt was killed,
whose calls reached no header -- count in the ``$ total`` and the budget
(:func:`attempts_spend`).

The **re-run share** of a cell is the part of its ``$ total`` that the
samples on the page do not account for: calls of samples cancelled in flight
and run again after a resume, and failed attempts retried.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from conflict_eval.pricing import PriceTable, batched_models

ATTEMPTS = "attempts"  # the folder (inside a log folder) of superseded attempts' logs


def is_attempt(log: str) -> bool:
    """Whether a log file is a superseded attempt set aside in an ``attempts/`` folder."""
    return Path(str(log).removeprefix("file://")).parent.name == ATTEMPTS


def uncarried_usage(log, carried: set[str]) -> dict[str, Any]:
    """``{model: ModelUsage}`` of the calls a superseded attempt made for samples whose
    uuid is not in ``carried`` (the samples the kept logs hold, and those already counted:
    each uuid is added), read from their model events, retries included (a sample killed
    in flight has no ``model_usage`` of its own)."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import ModelUsage

    out: dict[str, Any] = {}
    for s in log.samples or []:
        if s.uuid in carried:
            continue
        carried.add(s.uuid)
        for events in [s.events or []] + [r.events or [] for r in s.error_retries or []]:
            for ev in events:
                if isinstance(ev, ModelEvent) and ev.output is not None and ev.output.usage is not None:
                    out[ev.model] = out.get(ev.model, ModelUsage()) + ev.output.usage
    return out


def attempts_spend(attempts: list[str], kept: list[str], prices: PriceTable, *,
                   upper_bound: bool = False) -> list[tuple[Any, dict[str, float | None]]]:
    """``[(attempt log, {model: $})]``: what each superseded attempt in ``attempts`` paid
    for beyond the ``kept`` logs' samples (:func:`uncarried_usage`), priced as
    :func:`header_spend` prices a header. The page and the budget both count it."""
    from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries

    if not attempts:
        return []
    carried = {s.uuid for path in kept for s in read_eval_log_sample_summaries(path) if s.uuid}
    out = []
    for path in sorted(attempts):
        log = read_eval_log(path)
        usage = {m: u.model_dump() for m, u in uncarried_usage(log, carried).items()}
        out.append((log, header_spend(usage, batched_models(log), prices, upper_bound=upper_bound)))
    return out


def _usages(raw: dict[str, Any]) -> dict[str, Any]:
    from inspect_ai.model import ModelUsage

    return {m: u if isinstance(u, ModelUsage) else ModelUsage(**u) for m, u in (raw or {}).items()}


def log_cost(model_usage: dict[str, Any], prices: PriceTable) -> float | None:
    """$ of one log header's ``model_usage`` at list prices (0.0 when it records none; None when unpriced)."""
    usage = _usages(model_usage)
    if not usage:
        return 0.0
    return prices.usage_usd(usage).usd


def header_spend(model_usage: dict[str, Any], batched: list[str] | set[str], prices: PriceTable, *,
                 upper_bound: bool = False) -> dict[str, float | None]:
    """``{model: $}`` of one log header's ``model_usage`` (None when unpriced), the calls
    of each model in ``batched`` (:func:`conflict_eval.pricing.batched_models`) at its batch
    price (:meth:`conflict_eval.pricing.PriceTable.usd`): Inspect prices the header at list
    price. The page's ``$ total`` (:func:`cell_spend`) and the suite budget
    (:func:`conflict_eval.runs.budget.spent_in_logs`, ``upper_bound=True``) both count spend with this."""
    return {model: prices.usd(model, usage, batched=model in batched, upper_bound=upper_bound).usd
            for model, usage in _usages(model_usage).items()}


def cell_spend(evals: dict[str, Any], records: list, prices: PriceTable,
               attempts: list[str] = (), kept: list[str] = ()) -> dict[tuple, float | None]:
    """``{(model, task): $ total}`` over every log file of each cell and the superseded
    ``attempts`` set aside beside the ``kept`` logs (see module docstring)."""
    from .grouping import cell_label, row_key

    flushed: dict[str, float | None] = defaultdict(float)  # per log: its samples' usage (uuid once)
    seen: set = set()
    for r in records:
        ident = r.uuid or (r.source, r.key)
        if ident in seen:
            continue
        seen.add(ident)
        if r.cost is None and (r.input_tokens or r.output_tokens) or r.retry_cost is None:
            flushed[r.source] = None
        elif flushed[r.source] is not None:
            flushed[r.source] += (r.cost or 0.0) + r.retry_cost
    out: dict[tuple, float | None] = {}
    for ev in evals.values():
        k = row_key(ev.model, ev.task)
        usage = ev.header.get("model_usage") or {}
        # (the flushed sample costs are at batch prices already, report.logs.at_batch_prices)
        if usage:
            per_model = header_spend(usage, ev.header["batched_models"], prices).values()
            cost = None if None in per_model else sum(per_model)
        else:
            cost = flushed.get(ev.log, 0.0)
        out[k] = None if cost is None or out.get(k, 0.0) is None else out.get(k, 0.0) + cost
    for log, per_model in attempts_spend(list(attempts), list(kept), prices):
        k = row_key(log.eval.model, cell_label(log))
        cost = None if None in per_model.values() else sum(per_model.values(), 0.0)
        if k in out:  # an attempt of a cell with no kept log is not on the page
            out[k] = None if cost is None or out[k] is None else out[k] + cost
    return out


def rerun_share(total: float | None, kept: float | None) -> float | None:
    """The part of ``total`` not accounted for by the kept samples' own cost."""
    if total is None or kept is None or total <= 0:
        return None
    return max(0.0, (total - kept) / total)


UNREAD_FILE = "unread-batches.jsonl"  # written by runs.batch_stop.keep_unread beside the logs


def unread_requests(log_dirs: list[str | Path]) -> int:
    """Billed-but-unread batched requests recorded under ``log_dirs`` (any depth), each batch once."""
    import json

    seen: dict[str, int] = {}
    for d in log_dirs:
        for path in sorted(Path(d).rglob(UNREAD_FILE)):
            for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if not text.strip():
                    continue
                try:
                    for b in json.loads(text)["batches"]:
                        seen[b["id"]] = max(seen.get(b["id"], 0), int(b["completed"]))
                except (ValueError, KeyError, TypeError) as e:
                    raise ValueError(f"{path}: line {n}: not a record of unread batches ({e})") from None
    return sum(seen.values())
