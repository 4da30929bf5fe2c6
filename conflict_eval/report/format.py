"""Formatting shared by the output formats: numbers, matrix cells, colours, escaping."""

from __future__ import annotations

import colorsys
import html
import re
from typing import Any

from .stats import INTERVAL_METHODS, Comparison, MetricSummary, Row

NOT_RUN = "not run"


def fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def money(x: float | None) -> str:
    if x is None:
        return "$ n/a"
    return f"${x:.4f}" if x >= 0.01 or x == 0 else f"${x:.2g}"


def interval(m: MetricSummary | None) -> str:
    if m is None:
        return ""
    return fmt(m.mean) + (f" [{fmt(m.ci[0])}, {fmt(m.ci[1])}]" if m.ci else "")


def esc(text: Any) -> str:
    """HTML-escape any text from logs (model names, task labels, values)."""
    return html.escape(str(text), quote=True)


def md_escape(text: Any) -> str:
    """Escape for a Markdown table cell: ``&``, ``<`` and ``>`` HTML-escaped (so
    ``<script>`` never renders), ``|`` escaped, line breaks folded. Quotes stay
    as they are: outside a tag a quote is harmless, and the page is also read
    as text (the CLI prints it; code spans), where ``&#x27;`` would show as is.

    >>> md_escape("Cohen's κ | <script>\\nx")
    "Cohen's κ \\\\| &lt;script&gt; x"
    """
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def slug(task: str) -> str:
    return "task-" + re.sub(r"[^A-Za-z0-9]+", "-", task).strip("-").lower()


def headline(r: Row | None) -> MetricSummary | None:
    return r.metrics.get(r.headline) if r is not None and r.headline else None


def cell_parts(r: Row | None, rank: str | None = None, column_n: int | None = None,
               judged: str | None = None) -> dict[str, str]:
    """The pieces of one matrix cell: value, interval, notes, n, $ (``column_n``:
    the most samples any cell of the column has; ``judged``: the label coverage of a
    model-graded cell, :func:`.judges.coverage_note`)."""
    if r is None:
        return {"value": NOT_RUN, "ci": "", "notes": "", "n": "", "cost": ""}
    m = headline(r)
    notes = []
    if not r.complete and r.status is not None:
        notes.append(f"{'not started' if r.status.not_started else 'incomplete'} "
                     f"{r.status.done}/{r.status.total_text}")
    elif column_n and r.n < column_n:
        notes.append(f"fewer samples ({r.n} vs {column_n})")
    if note := r.failure_note():
        notes.append(note)
    if judged:
        notes.append(judged)
    if rank:
        notes.append(rank)
    return {"value": fmt(m.mean) if m else "no metric",
            "ci": f"[{fmt(m.ci[0])}, {fmt(m.ci[1])}]" if m and m.ci else "",
            "notes": " · ".join(notes), "n": f"n={r.n}", "cost": money(r.cost_total)}


def cell_text(r: Row | None, rank: str | None = None, column_n: int | None = None, judged: str | None = None) -> str:
    p = cell_parts(r, rank, column_n, judged)
    if r is None:
        return NOT_RUN
    head = " ".join(x for x in (p["value"], p["ci"]) if x)
    return " · ".join(x for x in (head, p["notes"], p["n"], p["cost"]) if x)


def methods_used(rows: list[Row]) -> str:
    used = sorted({m.method for r in rows for m in [*r.metrics.values(), *r.groups.values()] if m.method})
    return "; ".join(INTERVAL_METHODS[u] for u in used) or "none (too few samples)"


def model_colours(models: list[str]) -> dict[str, str]:
    """One colour per model for every plot: a qualitative palette, then evenly
    spaced hues for more than 10 models (distinct enough for 30+)."""
    base = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
            "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
    models = sorted(models)
    if len(models) <= len(base):
        return dict(zip(models, base))
    out = {}
    for i, m in enumerate(models):
        h = (i * 0.618033988749895) % 1.0  # golden-ratio hue steps
        lightness = (0.38, 0.52, 0.66)[i % 3]
        r, g, b = colorsys.hls_to_rgb(h, lightness, 0.75)
        out[m] = f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"
    return out


def tasks_models(rows: list[Row]) -> tuple[list[str], list[str]]:
    return sorted({r.task for r in rows}), sorted({r.model for r in rows})


def metric_names(rows: list[Row]) -> list[str]:
    names: list[str] = []
    for r in rows:
        names += [k for k in r.metrics if k not in names]
    return names


def estimate_text(est: dict | None, r: Row) -> str:
    """The run-time estimate (task metadata ``conflict_eval_estimate``) against the actual cell."""
    if not est:
        return "no estimate"
    ps, tot = est.get("per_sample") or {}, est.get("total") or {}
    return (f"calls/sample {fmt(ps.get('calls'), 2)} est vs {fmt(r.calls, 2)}; "
            f"tokens in/out per sample {fmt(ps.get('input_tokens'), 0)}/{fmt(ps.get('output_tokens'), 0)} est vs "
            f"{fmt(r.input_tokens, 0)}/{fmt(r.output_tokens, 0)}; "
            f"total {money(tot.get('cost_usd'))} est vs {money(r.cost_total)}")


def paired_interval(c: Comparison) -> str:
    """The paired bootstrap interval (shown, never the decision)."""
    return f"[{c.ci[0]:+.3f}, {c.ci[1]:+.3f}]" if c.ci else "n/a (every paired difference equal)"


PAIRED_HEAD = ["model A", "model B", "shared ids", "difference", "95% paired bootstrap", "test",
               "p", "p adjusted", "verdict"]


def paired_cells(c: Comparison) -> list[str]:
    """One row of the page's paired table (after model A and B): the verdict of report.paired."""
    from .paired import TESTS
    from .stats import direction

    r = c.result
    verdict = ("significant" if r.significant else "n.s.") + (f": {c.better} better" if c.better else "")
    if r.note:
        verdict += f" ({r.note})"
    test = TESTS[r.test].split(" (")[0]
    return [f"{c.n} (of {c.n_a} / {c.n_b})", f"{c.diff:+.3f}", paired_interval(c),
            f"{test} ({r.counts_text(direction(c.metric))})", f"{r.p_value:.4g}",
            f"{r.p_decisive:.4g} ({r.adjustment})", verdict]


def verdict_rule(board: dict) -> str:
    """The sentence naming how the page decides (alpha, family correction)."""
    from .paired import ADJUSTMENTS, TESTS

    alpha, adj = board.get("alpha", 0.05), board.get("adjustment", "holm")
    return (f"Significant: the paired test's p, adjusted over every comparison on this page "
            f"({ADJUSTMENTS[adj]}), is below alpha = {alpha:g}. Tests: " + "; ".join(TESTS.values())
            + ". The bootstrap interval is shown, never the decision; a row says when the two disagree.")


def column_n(rows: list[Row]) -> dict[str, int]:
    """Per task, the most samples any model's cell has."""
    out: dict[str, int] = {}
    for r in rows:
        out[r.task] = max(out.get(r.task, 0), r.n)
    return out


def share(x: float | None) -> str:
    """A re-run share: ``12%``; ``n/a`` when the cost is unknown."""
    return "n/a" if x is None else f"{x:.1%}"


def unread_note(stats: dict[str, Any]) -> str:
    """The page's word on batched requests billed but never read: answered before a cancel (a Ctrl-C
    during a batched run), or answered in result lines that could not be read (runs.batch_faults)."""
    n = stats.get("unread_batch_requests") or 0
    return (f"; {n} batched request(s) were answered (and billed) at the provider and never read (before a "
            "cancel, or in result lines that could not be read): their cost is in no $ figure here") if n else ""
