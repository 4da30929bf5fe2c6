"""The HTML leaderboard: one self-contained page (inline CSS and SVG, no network).

Model x task matrix first (short column heads; n, $ and notes in every cell,
"not run" where there is no cell), then the build's provenance, the plots and
one section per task: status and cost, metrics (one table, collapsible when
wide), groups, the task's own metrics, paired comparisons (collapsed past
:data:`PAIRED_OPEN` rows), and what it takes to reproduce it. All text from logs is HTML-escaped.
"""

from __future__ import annotations

from typing import Any

from .format import (unread_note, share, NOT_RUN, cell_parts, column_n, esc, estimate_text, fmt, interval, methods_used,
                     metric_names, model_colours, money, PAIRED_HEAD, paired_cells, slug, tasks_models, verdict_rule)
from .grouping import GROUP_TITLE, groups_of
from .judges import coverage_note
from .provenance import cell, made_texts
from .stats import arrow, direction
from .svg import cost_scatter, group_bars, headline_bars

WIDE = 8  # metric tables with more rows than this start collapsed
PAIRED_OPEN = 45  # paired tables with more rows than this (every pair of 10 models) start collapsed

_CSS = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:12px;margin:.5em 0 1em}th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}
th{background:#f3f3f3;position:sticky;top:0}td.l,th.l{text-align:left}.wrap{overflow-x:auto;max-width:100%}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;list-style:none;padding:6px;margin:0;border:1px solid #ddd;
position:sticky;top:0;background:#fff;z-index:2;font-size:12px}.legend li{display:flex;align-items:center;gap:4px}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(470px,1fr));gap:12px}
.panel{border:1px solid #eee;padding:6px;overflow-x:auto}.panel h4{margin:0 0 4px;font-size:12px}
.ns{color:#888}.sig{font-weight:600}section.task{border-top:2px solid #ddd;margin-top:1.5em}
#matrix td.l{white-space:nowrap;position:sticky;left:0;background:#fff}#matrix td{white-space:nowrap;vertical-align:top}
#matrix small{color:#555;display:block}#matrix .note{color:#a40;font-weight:600}#matrix td.not-run{color:#999;font-style:italic}
#matrix td.incomplete{background:#fff4e0}#matrix .rank{color:#064}
code{font-size:11px;white-space:pre-wrap;word-break:break-all}button.copy{font-size:11px;margin-right:4px}
.not-one{color:#a40}
dl.prov{display:grid;grid-template-columns:max-content auto;gap:2px 12px;font-size:13px}dt{font-weight:600}"""

# Sets data-* attributes on <body> from the DOM so a headless browser can
# confirm what rendered: plots, marks, colours per model, table shape.
_SCRIPT = """window.addEventListener('load',function(){var b=document.body;
var plots=document.querySelectorAll('svg.plot'),marks=document.querySelectorAll('svg.plot .mark'),col={},bad=0;
for(var i=0;i<marks.length;i++){var m=marks[i].getAttribute('data-model'),f=getComputedStyle(marks[i]).fill;
if(col[m]===undefined)col[m]=f;else if(col[m]!==f)bad++;}
var leg=document.querySelectorAll('ul.legend li');for(var j=0;j<leg.length;j++){var lm=leg[j].getAttribute('data-model'),
lf=getComputedStyle(leg[j].querySelector('.sw')).backgroundColor;if(col[lm]!==undefined&&col[lm]!==lf)bad++;}
var vis=0;for(var k=0;k<plots.length;k++){var r=plots[k].getBoundingClientRect();if(r.width>0&&r.height>0)vis++;}
b.setAttribute('data-plots',String(plots.length));b.setAttribute('data-plots-visible',String(vis));
b.setAttribute('data-marks',String(marks.length));b.setAttribute('data-colour-mismatches',String(bad));
b.setAttribute('data-models-coloured',String(Object.keys(col).length));
b.setAttribute('data-legends',String(document.querySelectorAll('ul.legend').length));
b.setAttribute('data-matrix-rows',String(document.querySelectorAll('#matrix tbody tr').length));
b.setAttribute('data-matrix-cols',String(document.querySelectorAll('#matrix thead th').length-1));
b.setAttribute('data-not-run',String(document.querySelectorAll('#matrix td.not-run').length));
b.setAttribute('data-incomplete',String(document.querySelectorAll('#matrix td.incomplete').length));
b.setAttribute('data-value-labels',String(document.querySelectorAll('svg.plot text.value').length));
b.setAttribute('data-commands',String(document.querySelectorAll('code.reproduce').length));
var cp=document.querySelectorAll('button.copy');for(var q=0;q<cp.length;q++){cp[q].addEventListener('click',function(){
var t=this.nextElementSibling.textContent;if(navigator.clipboard)navigator.clipboard.writeText(t);
this.textContent='copied';});}b.setAttribute('data-copy-buttons',String(cp.length));});"""


def _table(cls: str, head: list[str], body: list[list[str]], left: int = 1) -> str:
    """A table; ``head`` and ``body`` cells are already-escaped HTML."""
    th = "".join(f'<th{" class=l" if i < left else ""}>{h}</th>' for i, h in enumerate(head))
    rows = "".join("<tr>" + "".join(f'<td{" class=l" if i < left else ""}>{c}</td>' for i, c in enumerate(r))
                   + "</tr>" for r in body)
    return f'<div class="wrap"><table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{rows}</tbody></table></div>'


def _matrix(board: dict[str, Any], tasks: list[str], models: list[str], colours: dict[str, str]) -> str:
    rows, heads, ranks = board["rows"], board.get("heads") or {}, board.get("ranks") or {}
    cells = {(r.model, r.task): r for r in rows}
    most = column_n(rows)
    first = {t: next((r for r in rows if r.task == t and r.headline), None) for t in tasks}
    out = ['<div class="wrap"><table id="matrix"><thead><tr><th class="l">model</th>']
    for t in tasks:
        metric = first[t].headline if first[t] else None
        sub = f"<small>{esc(metric)} {arrow(metric)}</small>" if metric else ""
        out.append(f'<th title="{esc(t)}"><a href="#{slug(t)}">{esc(heads.get(t, t))}</a>{sub}</th>')
    out.append("</tr></thead><tbody>")
    for m in models:
        out.append(f'<tr><td class="l"><span class="sw" style="background:{colours[m]}"></span> {esc(m)}</td>')
        for t in tasks:
            r = cells.get((m, t))
            if r is None:
                out.append(f'<td class="not-run">{NOT_RUN}</td>')
                continue
            p = cell_parts(r, ranks.get((m, t)), most[t], coverage_note(board, m, t))
            cls = "" if r.complete else ' class="incomplete"'
            notes = f'<small class="note">{esc(p["notes"])}</small>' if p["notes"] else ""
            ci = f"<small>{esc(p['ci'])}</small>" if p["ci"] else ""
            out.append(f'<td{cls}><a href="#{slug(t)}">{esc(p["value"])}</a>{ci}{notes}'
                       f'<small class="nc">{esc(p["n"])} · {esc(p["cost"])}</small></td>')
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _provenance(prov: dict[str, Any], st: dict[str, Any]) -> str:
    return ('<h2>Provenance</h2><dl class="prov" id="provenance">'
            f'<dt>built</dt><dd>{esc(prov["created"])}</dd>'
            f'<dt>conflict-eval</dt><dd data-version="conflict-eval">{esc(prov["conflict_eval_version"])}</dd>'
            f'<dt>Inspect</dt><dd data-version="inspect_ai">{esc(prov["inspect_ai_version"])}</dd>'
            f'<dt>logs</dt><dd>{st.get("logs", 0)} logs, {st.get("samples_read", 0)} samples read, '
            f'{st.get("duplicates_dropped", 0)} duplicates counted once, {st.get("incomplete_cells", 0)} '
            f"incomplete cell(s){esc(unread_note(st))}</dd></dl><p>Each task's data, software, models, generation config and the "
            "command behind every cell are in its section below.</p>")


def _task_section(board: dict[str, Any], t: str, trows: list, colours: dict[str, str]) -> str:
    prov = board.get("provenance") or {}
    out = [f'<section class="task" id="{slug(t)}"><h2>{esc(t)}</h2>']
    body = [[esc(r.model), str(r.n), "complete" if r.complete else f"<b>incomplete</b> {esc(r.status.describe())}",
             str(r.errors), str(r.cancelled), fmt(r.parse_failure_rate), fmt(r.refusal_rate),
             fmt(r.no_response_rate), fmt(r.calls, 2),
             fmt(r.input_tokens, 1), fmt(r.output_tokens, 1), money(r.cost_per_sample), money(r.cost_total),
             share(r.rerun_share), esc(r.cost_source or "no price"),
             esc(estimate_text(cell(prov, r.model, t).get("estimate"), r))] for r in trows]
    out.append(_table("detail", ["model", "n", "status", "errors", "cancelled", "parse fail ↓", "refusal ↓",
                                 "no response ↓", "calls/sample",
                                 "tokens in", "tokens out", "$/sample", "$ total (every call)", "re-run share", "cost from",
                                 "estimate vs actual"], body))
    names = metric_names(trows)
    if names:
        tbl = _table("metrics", ["metric", *[esc(r.model) for r in trows]],
                     [[f"{esc(n)} <span title=\"{direction(n) or 'no direction declared'}\">{arrow(n)}</span>",
                       *[esc(interval(r.metrics.get(n)) or "n/a") for r in trows]] for n in names])
        out.append(f'<details class="metrics"{" open" if len(names) <= WIDE else ""}><summary>{len(names)} '
                   f'metric(s): mean [95% interval]; ↑ higher / ↓ lower is better</summary>{tbl}</details>')
        if trows[0].cluster_key:
            out.append(f'<p class="cluster">Intervals clustered on the sample metadata key '
                       f'<code>{esc(trows[0].cluster_key)}</code> (samples sharing it are not independent).</p>')
    from .judges import HEAD as JUDGE_HEAD, table_rows as judge_rows

    jrows = judge_rows(board, t)
    if jrows:
        out.append("<h3>Judges of the model-graded scores</h3>"
                   + _table("judges", JUDGE_HEAD, [[esc(x) for x in r] for r in jrows]))
    groups = groups_of(trows)
    if groups:
        out.append(f"<h3>By {GROUP_TITLE} ({esc(trows[0].headline or '')})</h3>")
        out.append(_table("conflict-types", ["model", *[esc(g) for g in groups]],
                          [[esc(r.model), *[f"{esc(interval(r.groups[g]))} (n={r.groups[g].n})" if g in r.groups
                                            else "n/a" for g in groups]] for r in trows]))
        svg = group_bars(t, trows, colours)
        if svg:
            out.append(f'<div class="panel">{svg}</div>')
    tm = {r.model: cell(prov, r.model, t).get("task_metrics") for r in trows}
    keys = sorted({(s, m) for v in tm.values() if v for s, ms in v.items() for m in ms})
    if keys:
        tbl = _table("task-metrics", ["scorer / metric", *[esc(r.model) for r in trows]],
                     [[f"{esc(s)} / {esc(m)} {arrow(m, s)}", *[fmt((tm[r.model] or {}).get(s, {}).get(m))
                                                            for r in trows]] for s, m in keys])
        out.append(f'<details class="task-metrics"{" open" if len(keys) <= WIDE else ""}><summary>The task\'s '
                   f"own metrics ({len(keys)}, as its Inspect scorers computed them per log; n/a when a cell "
                   f"spans several logs)</summary>{tbl}</details>")
    comps = [c for c in board.get("comparisons", []) if c.task == t]
    if comps:
        out.append(f"<h3>Paired comparisons ({esc(comps[0].metric)} {arrow(comps[0].metric)}, A - B on the sample "
                   f"ids both finished)</h3><p>{esc(verdict_rule(board))}</p>")

        def verdict(c) -> str:
            text = esc(paired_cells(c)[-1])
            return f'<span class="sig">{text}</span>' if c.significant else f'<span class="ns">{text}</span>'

        tbl = _table("paired", [esc(h) for h in PAIRED_HEAD],
                     [[esc(c.model_a), esc(c.model_b), *[esc(x) for x in paired_cells(c)[:-1]], verdict(c)]
                      for c in comps], left=2)
        # a long table starts collapsed: a browser lays out a closed <details> only when opened, and
        # 30 models' 435 rows per task, open on every task, took most of the page's time to render
        out.append(f'<details class="paired"{" open" if len(comps) <= PAIRED_OPEN else ""}><summary>{len(comps)} '
                   f"pair(s) of models</summary>{tbl}</details>")
    out.append(_reproduce(prov, t, trows))
    out.append("</section>")
    return "".join(out)


def _command_html(c: dict[str, Any]) -> str:
    """The cell's one command with a copy button, else why not and each log's command."""
    if c.get("command"):
        return (f'<button class="copy" type="button" title="copy the command">copy</button>'
                f'<code class="reproduce">{esc(c["command"])}</code>')
    per_log = "<br>".join(f'<code class="log-command">{esc(x)}</code>' for x in c.get("commands") or [])
    return (f'<span class="not-one">not one command: {esc(c.get("why") or "no log")}</span>'
            + (f"<br>{per_log}" if per_log else ""))


def _reproduce(prov: dict[str, Any], t: str, trows: list) -> str:
    p = (prov.get("tasks") or {}).get(t)
    if not p:
        return ""
    facts = [("dataset", ", ".join(p["datasets"])), ("file", ", ".join(p["files"])),
             ("file sha256", ", ".join(p["dataset_sha256"])), ("upstream revision", "; ".join(p["revisions"])),
             ("sample ids sha256", ", ".join(p["sample_ids_sha256"])),
             ("conflict-eval (run)", ", ".join(p["conflict_eval"])), ("Inspect (run)", ", ".join(p["inspect_ai"])),
             ("git commit (run)", ", ".join(p["git_commits"])), ("grader", ", ".join(p["grader"])),
             *[(f"model {m}", f"endpoint: {v['endpoint']}; revision: {v['revision']}")
               for m, v in p["models"].items()],
             *[(f"setting {k}", str(v)) for k, v in sorted(p["settings"].items())]]
    out = [f'<h3>Reproducibility</h3><div class="repro" data-task="{esc(t)}">',
           _table("provenance-task", ["", "value"], [[esc(k), esc(v)] for k, v in facts], left=2)]
    out.append(_table("made", ["model", "generation config (the model's own)", "batch", "judges", "code commit"],
                      [[esc(r.model), *[esc(x) for x in made_texts(cell(prov, r.model, t).get("made"))]]
                       for r in trows], left=5))
    body = []
    for r in trows:
        c = cell(prov, r.model, t)
        cmds = _command_html(c)
        cards = "<br>".join(f'<code class="card">conflict-eval reproduce {esc(x)} --model {esc(r.model)}</code>'
                            for x in c.get("cards") or []) or "none"
        body.append([esc(r.model), f'<code>{esc((c.get("results_sha256") or "n/a")[:16])}</code>', cmds, cards])
    out.append(_table("reproduce", ["model", "results sha256", "command", "paper card"], body, left=4))
    out.append("</div>")
    return "".join(out)


def to_html(board: dict[str, Any], title: str = "conflict-eval leaderboard") -> str:
    rows, prov, st = board["rows"], board.get("provenance") or {}, board.get("stats") or {}
    tasks, models = tasks_models(rows)
    colours = model_colours(models)
    cells = {(r.model, r.task): r for r in rows}
    out = [f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
           f'<style>{_CSS}</style></head><body><h1>{esc(title)}</h1>']
    out.append('<h2 id="matrix-title">Models x tasks</h2><p>Each cell: the task\'s headline metric (its '
               "Task(headline_metric=...), as Inspect resolves it; ↑ higher / ↓ lower is better, no arrow: no "
               "direction declared) with its 95% interval, "
               "notes (incomplete done/total, fewer samples than the column's largest cell, mostly parse "
               "failures or errors, best: the best mean by the declared direction, tied: its paired test "
               f"against the best is not significant), n samples and $ spent. Intervals: <span id=\"interval-method\">"
               f"{esc(methods_used(rows))}</span>. A cell links to its task; a column head's tooltip is the "
               "task's full settings.</p>")
    out.append(_matrix(board, tasks, models, colours))
    from .judges import overview as judge_overview

    judged = judge_overview(board)
    if judged:
        out.append('<p>Model-graded cells (who graded them; each task\'s Judges table has the rest):</p>'
                   '<ul class="judges">' + "".join(f"<li>{esc(x)}</li>" for x in judged) + "</ul>")
    if prov:
        out.append(_provenance(prov, st))
    out.append('<h2>Plots</h2><ul class="legend" id="legend">' + "".join(
        f'<li data-model="{esc(m)}"><span class="sw" style="background:{colours[m]}"></span>{esc(m)}</li>'
        for m in models) + "</ul>")
    heads = board.get("heads") or {}
    out.append('<h3>Headline metric by task</h3><div class="grid">')
    for t in tasks:
        trows = [cells[(m, t)] for m in models if (m, t) in cells]
        out.append(f'<div class="panel"><h4><a href="#{slug(t)}">{esc(heads.get(t, t))}</a></h4>'
                   f"{headline_bars(t, trows, colours)}</div>")
    out.append('</div><h3>Headline metric against cost per sample</h3><div class="grid">')
    for t in tasks:
        svg = cost_scatter(t, [cells[(m, t)] for m in models if (m, t) in cells], colours)
        if svg:
            out.append(f'<div class="panel"><h4>{esc(heads.get(t, t))}</h4>{svg}</div>')
    out.append("</div>")
    for t in tasks:
        out.append(_task_section(board, t, [cells[(m, t)] for m in models if (m, t) in cells], colours))
    out.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "".join(out)
