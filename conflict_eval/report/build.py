"""Building the leaderboard from logs and writing every output format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conflict_eval.pricing import PriceTable
from .grouping import short_heads
from .logs import add_not_started, completeness, deduplicate, read_records
from .manifest import log_keys, not_started
from .spend import cell_spend, rerun_share, unread_requests
from .provenance import provenance
from .judges import judge_cells, load_gold as load_judge_gold
from .paired import ALPHA
from .stats import Row, aggregate, paired_comparisons, ranks


class IncompleteLogsError(ValueError):
    """Some cells come from incomplete or errored logs, or never started (and ``allow_incomplete`` is off)."""

    def __init__(self, rows):
        self.rows = rows
        lines = [f"  {r.model} x {r.task}: {r.status.describe()} "
                 + (f"(logs: {', '.join(r.status.logs)})" if r.status.logs else "(no log; listed in eval-set.json)")
                 for r in rows]
        super().__init__(
            f"{len(rows)} cell(s) come from incomplete or errored logs, or never started; resume them (re-run the "
            "suite or `inspect eval-retry`), or pass --allow-incomplete to show them marked done/total:\n" + "\n".join(lines))


def build_leaderboard(log_dirs: list[str | Path], prices: PriceTable | dict | str | None = None,
                      bootstrap: int = 1000, seed: int = 0, cost_config: dict | str | None = None, *,
                      allow_incomplete: bool = False, judge_gold: str | Path | None = None,
                      alpha: float = ALPHA, adjustment: str = "holm") -> dict[str, Any]:
    """Read, de-duplicate and aggregate.

    ``prices``: a :class:`~conflict_eval.pricing.PriceTable` (then ``cost_config`` is
    ignored), or a price file / ``models:`` mapping parsed with ``cost_config`` here.

    Returns ``{"rows", "comparisons", "provenance", "stats", "heads", "ranks"}``.
    Raises :class:`IncompleteLogsError` when a cell's logs are incomplete or
    errored, unless ``allow_incomplete`` (then such cells are marked).
    """
    table = prices if isinstance(prices, PriceTable) else PriceTable.load(cost_config, prices)
    records, stats = read_records(log_dirs, table)
    evals = stats.pop("evals", {})
    attempts, logs = stats.pop("attempts", []), stats.pop("kept", [])
    kept, dropped = deduplicate(records)
    stats["duplicates_dropped"] = dropped
    status = completeness(kept, evals)
    # tasks the logs' manifests list that never started: incomplete cells too (report.manifest)
    logged = {k for ev in evals.values() for k in log_keys(ev.model, ev.header.get("task_id"), ev.header.get(
        "eval_set_id"), ev.header.get("task_registry_name") or ev.header.get("task"))}
    add_not_started(status, not_started(log_dirs, logged))
    # $ total: every call Inspect recorded in the log headers (report.spend)
    spent = cell_spend(evals, records, table, attempts, logs)
    heads = {}  # task -> the headline Inspect resolved (the same in every log of a task, or the first found)
    for ev in sorted(evals.values(), key=lambda e: e.created):
        if ev.header.get("headline"):
            heads.setdefault(ev.task, ev.header["headline"])
    rows = aggregate(kept, bootstrap, seed, status=status, spend=spent, heads=heads)
    for r in rows:
        r.rerun_share = rerun_share(r.cost_total, r.cost_per_sample * r.n if r.cost_per_sample is not None else None)
    # a cell whose logs hold no sample yet (killed at once), or that never started, is still a cell:
    # incomplete 0/N; its calls and tokens per sample are undefined (None), not 0
    have = {(r.model, r.task) for r in rows}
    rows = sorted(rows + [Row(model=m, task=t, n=0, errors=0, metrics={}, parse_failure_rate=None, calls=None,
                              input_tokens=None, output_tokens=None, cost_per_sample=None,
                              cost_total=spent.get((m, t)), cost_source=None, groups={}, headline=None, status=st)
                          for (m, t), st in status.items() if (m, t) not in have], key=lambda r: (r.model, r.task))
    incomplete = [r for r in rows if not r.complete]
    if incomplete and not allow_incomplete:
        raise IncompleteLogsError(incomplete)
    stats["incomplete_cells"] = len(incomplete)
    # batched requests answered at the provider but never read (a Ctrl-C; unreadable result lines):
    # billed, so said, but in no $ total
    stats["unread_batch_requests"] = unread_requests(log_dirs)
    complete_rows = [r for r in rows if r.complete]
    keys = {ev.task: ev.key for ev in evals.values()}
    # comparisons and ties only between complete cells: never a partial cell against a full one
    comparisons = paired_comparisons(complete_rows, bootstrap, seed, alpha=alpha, adjustment=adjustment)
    return {"rows": rows, "comparisons": comparisons, "alpha": alpha, "adjustment": adjustment,
            "ranks": ranks(complete_rows, comparisons), "provenance": provenance(rows, evals), "stats": stats,
            "heads": short_heads(keys[t] for t in {r.task for r in rows} if t in keys),
            "judges": judge_cells(rows, evals, load_judge_gold(judge_gold))}


def write_leaderboard(log_dirs: list[str | Path], out_dir: str | Path, *, prices_path: str | None = None,
                      cost_config_path: str | None = None, bootstrap: int = 1000,
                      seed: int = 0, allow_incomplete: bool = False,
                      judge_gold: str | Path | None = None, alpha: float = ALPHA,
                      adjustment: str = "holm") -> dict[str, Path]:
    """Build the leaderboard and write html, md, csv (three) and json files to ``out_dir``."""
    from .html import to_html
    from .markdown import to_markdown
    from .tables import conflict_types_csv, paired_csv, to_csv, to_json

    table = PriceTable.load(cost_config_path, prices_path)  # parsed once, here
    board = build_leaderboard(log_dirs, table, bootstrap, seed,
                              allow_incomplete=allow_incomplete, judge_gold=judge_gold, alpha=alpha,
                              adjustment=adjustment)
    if not board["rows"]:
        raise ValueError(f"no samples found in the logs under {', '.join(map(str, log_dirs))}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"html": out / "leaderboard.html", "md": out / "leaderboard.md", "csv": out / "leaderboard.csv",
             "conflict_types_csv": out / "conflict_types.csv", "paired_csv": out / "paired.csv",
             "json": out / "leaderboard.json"}
    paths["html"].write_text(to_html(board), encoding="utf-8")
    paths["md"].write_text(to_markdown(board), encoding="utf-8")
    paths["csv"].write_text(to_csv(board["rows"]), encoding="utf-8")
    paths["conflict_types_csv"].write_text(conflict_types_csv(board["rows"]), encoding="utf-8")
    paths["paired_csv"].write_text(paired_csv(board["comparisons"]), encoding="utf-8")
    paths["json"].write_text(to_json(board), encoding="utf-8")
    return paths
