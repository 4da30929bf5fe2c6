"""Inline SVG plots for the HTML page: headline bars, bars by sample group,
metric against cost. Every bar carries its value; every axis its label and ticks."""

from __future__ import annotations

from .format import esc, fmt, interval, money
from .grouping import GROUP_TITLE, groups_of
from .stats import Row


def _clip(x: float) -> float:
    return max(0.0, min(1.0, x))


def headline_bars(task: str, rows: list[Row], colours: dict[str, str]) -> str:
    """Horizontal bars: the task's headline metric per model, interval and value label."""
    bar_h, left, width = 14, 130, 280
    height = len(rows) * (bar_h + 4) + 30
    w_total = left + width + 60
    parts = [f'<svg class="plot" data-plot="headline" data-task="{esc(task)}" width="{w_total}" '
             f'height="{height}" viewBox="0 0 {w_total} {height}" role="img">']
    for k in range(0, 5):
        x = left + width * k / 4
        parts.append(f'<line x1="{x}" y1="4" x2="{x}" y2="{height - 20}" stroke="#ddd"/>'
                     f'<text x="{x}" y="{height - 6}" font-size="9" text-anchor="middle">{k / 4:g}</text>')
    for i, r in enumerate(rows):
        m = r.metrics.get(r.headline) if r.headline else None
        if m is None:
            continue
        y = 4 + i * (bar_h + 4)
        w = _clip(m.mean) * width
        name = r.model if len(r.model) <= 22 else "…" + r.model[-21:]
        parts.append(f'<text x="{left - 4}" y="{y + bar_h - 3}" font-size="10" text-anchor="end">{esc(name)}</text>')
        parts.append(f'<rect class="mark" data-model="{esc(r.model)}" x="{left}" y="{y}" width="{w:.1f}" '
                     f'height="{bar_h}" fill="{colours[r.model]}"><title>{esc(r.model)}: {esc(interval(m))}'
                     f'</title></rect>')
        end = left + w
        if m.ci:
            x0, x1 = left + _clip(m.ci[0]) * width, left + _clip(m.ci[1]) * width
            end = max(end, x1)
            parts.append(f'<line x1="{x0:.1f}" x2="{x1:.1f}" y1="{y + bar_h / 2}" y2="{y + bar_h / 2}" '
                         f'stroke="#222" stroke-width="1.2"/>')
        parts.append(f'<text class="value" x="{end + 3:.1f}" y="{y + bar_h - 3}" font-size="10">{fmt(m.mean)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def group_bars(task: str, rows: list[Row], colours: dict[str, str]) -> str | None:
    """Grouped bars: headline metric by sample group, one bar per model, with intervals and values."""
    groups = groups_of(rows)
    if not groups:
        return None
    bw, gap, plot_h, top = 14, 24, 160, 16
    group_w = max(len(rows) * bw + gap, 90)
    width = 40 + len(groups) * group_w
    height = plot_h + 60
    parts = [f'<svg class="plot" data-plot="conflict_types" data-task="{esc(task)}" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img"><title>{esc(GROUP_TITLE)}</title>']
    for k in range(0, 5):
        y = top + plot_h * (1 - k / 4)
        parts.append(f'<line x1="34" x2="{width}" y1="{y}" y2="{y}" stroke="#ddd"/>'
                     f'<text x="30" y="{y + 3}" font-size="9" text-anchor="end">{k / 4:g}</text>')
    for j, g in enumerate(groups):
        gx = 40 + j * group_w
        for i, r in enumerate(rows):
            m = r.groups.get(g)
            if m is None:
                continue
            h = _clip(m.mean) * plot_h
            x = gx + i * bw
            parts.append(f'<rect class="mark" data-model="{esc(r.model)}" x="{x}" y="{top + plot_h - h:.1f}" '
                         f'width="{bw - 1}" height="{h:.1f}" fill="{colours[r.model]}">'
                         f'<title>{esc(r.model)} {esc(g)}: {esc(interval(m))} (n={m.n})</title></rect>')
            if m.ci:
                y0, y1 = top + plot_h * (1 - _clip(m.ci[1])), top + plot_h * (1 - _clip(m.ci[0]))
                parts.append(f'<line x1="{x + bw / 2 - 0.5}" x2="{x + bw / 2 - 0.5}" y1="{y0:.1f}" y2="{y1:.1f}" '
                             f'stroke="#222" stroke-width="1"/>')
            parts.append(f'<text class="value" x="{x + bw / 2 - 0.5}" y="{top + plot_h - h - 2:.1f}" font-size="7" '
                         f'text-anchor="middle">{m.mean:.2f}</text>')
        parts.append(f'<text x="{gx + (group_w - gap) / 2}" y="{top + plot_h + 14}" font-size="10" '
                     f'text-anchor="middle">{esc(g)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def cost_scatter(task: str, rows: list[Row], colours: dict[str, str]) -> str | None:
    """Scatter: headline metric (y) against $ per sample (x; tokens per sample
    when a price is missing), both axes labelled with ticks."""
    pts = [r for r in rows if r.headline and r.headline in r.metrics]
    if not pts:
        return None
    use_cost = all(r.cost_per_sample is not None for r in pts)
    xs = [r.cost_per_sample if use_cost else r.input_tokens + r.output_tokens for r in pts]
    xmax = max(xs) or 1.0
    w, h, left, top = 300, 150, 48, 8
    xlabel = "$ per sample" if use_cost else "tokens per sample (no price for every model)"
    parts = [f'<svg class="plot" data-plot="cost" data-task="{esc(task)}" width="{w + 70}" height="{h + 50}" '
             f'viewBox="0 0 {w + 70} {h + 50}" role="img">',
             f'<line x1="{left}" y1="{top + h}" x2="{left + w}" y2="{top + h}" stroke="#999"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + h}" stroke="#999"/>',
             f'<text class="axis-label" x="{left + w / 2}" y="{top + h + 40}" font-size="10" '
             f'text-anchor="middle">{esc(xlabel)}</text>',
             f'<text class="axis-label" x="10" y="{top + h / 2}" font-size="10" text-anchor="middle" '
             f'transform="rotate(-90 10 {top + h / 2})">{esc(pts[0].headline)}</text>']
    for k in range(0, 5):
        x, y = left + w * k / 4, top + h * (1 - k / 4)
        xv = xmax * k / 4
        xt = money(xv) if use_cost else f"{xv:.3g}"
        parts.append(f'<line x1="{x}" y1="{top + h}" x2="{x}" y2="{top + h + 3}" stroke="#999"/>'
                     f'<text class="tick" x="{x}" y="{top + h + 14}" font-size="8" text-anchor="middle">{esc(xt)}</text>'
                     f'<text class="tick" x="{left - 4}" y="{y + 3}" font-size="8" text-anchor="end">{k / 4:g}</text>')
    for r, x in zip(pts, xs):
        m = r.metrics[r.headline]
        cx, cy = left + (x / xmax) * w, top + h * (1 - _clip(m.mean))
        parts.append(f'<circle class="mark" data-model="{esc(r.model)}" cx="{cx:.1f}" cy="{cy:.1f}" r="5" '
                     f'fill="{colours[r.model]}"><title>{esc(r.model)}: {esc(interval(m))} at {x:.4g}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)
