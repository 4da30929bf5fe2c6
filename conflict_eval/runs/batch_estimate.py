"""Live and batch cost side by side, and what batching costs in time for multi-turn methods.

A batch API bills at a discount (``conflict_eval/pricing/prices.yaml`` ``batch:``,
priced by :meth:`conflict_eval.pricing.PriceTable.usd`, as the page prices logs) but answers a batch within its
completion window (24 hours for OpenAI, Anthropic, Google and Together), not
in seconds. A method that makes sequential calls per sample -- Micro-Act's
turns, AtomR's tree steps, MADAM-RAG's debate rounds, a model-graded
metric's grader after the answer -- waits for one batch per step, so its worst
case wall time is ``round trips x 24 h``. :func:`round_trips` counts them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

BATCH_WINDOW_HOURS = 24.0  # the completion window Inspect's batchers ask for ("24h")


# Sequential calls per sample (each waits for the previous reply), worst case, by method:
# (option giving the count, its default, round trips per unit, what a unit is).
_SEQUENTIAL: dict[str, tuple[str | None, int, int, str]] = {
    "microact": ("max_turns", 8, 2, "Micro-Act turns (a turn's reply, then its action's own call)"),
    "madam_rag": ("rounds", 3, 2, "MADAM-RAG rounds (the agents in parallel, then the aggregator)"),
    "gkp": (None, 1, 2, "GKP (knowledge, then the answer)"),
}
# methods whose step count is known only after the run: the profile's mean calls, all sequential
_TREE = {"atomr": "AtomR tree steps (planning, then per node its operator and selection calls; the tree's "
                  "size is known only after planning: at least 3, else the profile's mean calls, taken as sequential)"}


@dataclass(frozen=True)
class BatchView:
    """One cell's live and batch cost and its sequential batch round trips."""

    batched: bool  # whether the cell's model setting sends it through a batch API
    live_usd: float | None
    batch_usd: float | None
    batch_source: str
    round_trips: int  # sequential model round trips per sample (worst case)
    steps: str  # what they are ("" for a single call)

    @property
    def run_usd(self) -> float | None:
        """What the cell costs as the suite runs it: the batch price when batched (as the budget counts it)."""
        return self.batch_usd if self.batched else self.live_usd

    @property
    def multi_turn(self) -> bool:
        return self.round_trips > 1

    @property
    def worst_wall_hours(self) -> float:
        """Worst-case wall time of a batched run: every round trip waits a full completion window."""
        return self.round_trips * BATCH_WINDOW_HOURS

    def as_json(self) -> dict[str, Any]:
        return {"batched": self.batched, "live_usd": _r(self.live_usd), "batch_usd": _r(self.batch_usd),
                "batch_price_source": self.batch_source, "sequential_round_trips": self.round_trips,
                "sequential_steps": self.steps or None, "multi_turn": self.multi_turn,
                "worst_case_batch_wall_hours": self.worst_wall_hours}


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def round_trips(method: str, options: dict[str, Any], calls_per_sample: float) -> tuple[int, str]:
    """``(sequential round trips per sample, what they are)`` for a method and its options."""
    if method in _SEQUENTIAL:
        option, default, per, what = _SEQUENTIAL[method]
        units = options.get(option, default) if option else default
        units = units if isinstance(units, int) and not isinstance(units, bool) else default
        return per * units, what + (f", {option}={units}" if option else "")
    if method in _TREE:
        return max(3, math.ceil(calls_per_sample)), _TREE[method]
    if calls_per_sample > 1.0 + 1e-9:  # grader calls or several steps: taken as sequential (worst case)
        return math.ceil(calls_per_sample), "several calls per sample (profile mean, taken as sequential)"
    return 1, ""


def batch_view(model: str, batch: Any, estimate, method: str, options: dict[str, Any],
               calls_per_sample: float | None = None, prices=None) -> BatchView:
    """The batch view of one cell's :class:`~conflict_eval.runs.estimate.Estimate`: its
    tokens priced batched by :meth:`conflict_eval.pricing.PriceTable.usd` (``prices``;
    ``None``: the packaged table)."""
    from conflict_eval.pricing import PriceTable, batched
    from conflict_eval.runs.estimate import estimated_usage

    table = PriceTable.of(prices)
    live = estimate.cost_usd
    batch_usd = None if live is None else table.usd(
        model, estimated_usage(model, estimate.input_tokens, estimate.output_tokens), batched=True).usd
    calls = estimate.per_sample().calls if calls_per_sample is None else calls_per_sample
    trips, steps = round_trips(method, options, calls)
    return BatchView(batched(model, batch), live, batch_usd, table.batch_fraction(model)[1], trips, steps)


def _usd(x: float | None) -> str:
    return "n/a" if x is None else f"${x:,.4f}" if x < 1 else f"${x:,.2f}"


def render(rows: list[tuple[str, str, Any, BatchView]]) -> str:
    """The estimate table with ``$ live`` and ``$ batch`` side by side, the sequential
    round trips, the worst-case wall time if batched, and where each price comes from."""
    head = ("model", "task", "samples", "calls", "input tok", "output tok", "$ live", "$ batch", "trips",
            "worst if batched", "run")
    out = [head]
    live_total = batch_total = 0.0
    sources: dict[str, int] = {}
    notes: list[str] = []
    for model, label, e, v in rows:
        price_src = e.price_source or "no price"
        key = f"live: {price_src}; batch: {v.batch_source}"
        n = sources.setdefault(key, len(sources) + 1)
        flag = f"{v.round_trips}*" if v.multi_turn else "1"
        if v.multi_turn and v.steps not in notes:
            notes.append(v.steps)
        out.append((model, label, str(e.samples), f"{e.calls:,.0f}", f"{e.input_tokens:,.0f}",
                    f"{e.output_tokens:,.0f}", _usd(v.live_usd) + f" [{n}]", _usd(v.batch_usd),
                    flag, f"{v.worst_wall_hours:,.0f} h" if v.multi_turn else "24 h",
                    "batch" if v.batched else "live"))
        live_total += v.live_usd or 0.0
        batch_total += v.batch_usd or 0.0
    def total_usd(total: float, cells: list) -> str:
        """The sum, or ``n/a`` when a cell has no price (with what the priced cells add up to)."""
        if all(c is not None for c in cells):
            return _usd(total)
        return f"n/a ({_usd(total)} priced)" if any(c is not None for c in cells) else "n/a"

    out.append(("total", "", str(sum(e.samples for _, _, e, _ in rows)), f"{sum(e.calls for _, _, e, _ in rows):,.0f}",
                f"{sum(e.input_tokens for _, _, e, _ in rows):,.0f}",
                f"{sum(e.output_tokens for _, _, e, _ in rows):,.0f}",
                total_usd(live_total, [v.live_usd for *_, v in rows]),
                total_usd(batch_total, [v.batch_usd for *_, v in rows]), "", "", ""))
    widths = [max(len(r[i]) for r in out) for i in range(len(head))]
    right = {2, 3, 4, 5, 6, 7, 8, 9}
    lines = ["  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in out]
    rule = "  ".join("-" * w for w in widths)
    lines.insert(1, rule)
    lines.insert(len(lines) - 1, rule)
    lines.append("")
    for key, n in sources.items():
        lines.append(f"[{n}] prices: {key}")
    lines.append("$ batch = $ live x (1 - the provider's batch discount, the price file's `batch:`), "
                 "n/a where no discount is published; 'run' says how the suite's model setting runs the cell.")
    if notes:
        lines.append(f"* multi-turn: sequential batch round trips per sample, each waiting up to one "
                     f"{BATCH_WINDOW_HOURS:.0f} h completion window when batched:")
        lines += [f"    {n}" for n in notes]
    return "\n".join(lines)


def suite_rows(suite, *, models=None, limit=None, model_cost_config=None):
    """``[(model, label, Estimate, BatchView, problem)]`` for every cell of a suite. A task
    whose data cannot be loaded here (not downloaded, or it needs a ``path``) is still
    listed, with no figures and the reason, so its round trips show. ``model_cost_config``
    (a file or mapping, else the suite's) is parsed once, here."""
    from dataclasses import replace

    from conflict_eval.pricing import PriceTable
    from conflict_eval.runs.estimate import Estimate, load_profiles, profile_key
    from conflict_eval.runs.run import build_cells

    prices = PriceTable.of(model_cost_config if model_cost_config is not None else suite.eval.get("model_cost_config"))

    specs = models or suite.models
    rows = []
    for spec in suite.tasks:
        one = replace(suite, tasks=[spec])
        try:
            cells = build_cells(one, models=specs, limit=limit, prices=prices,
                                connect=False)
        except Exception as exc:  # noqa: BLE001 -- shown on the row; the rest of the suite is still estimated
            from conflict_eval.records.errors import argument_error
            from conflict_eval.runs.arguments import render

            needed = argument_error(exc)  # a loader's missing file, told as a suite gives it
            reason = render(needed, "suite") if needed else (str(exc).splitlines() or [type(exc).__name__])[0]
            method = str(spec.args.get("method") or spec.task.split("/")[-1])
            profiles = load_profiles()
            known = (profiles.get("methods") or {}).get(method)  # no guess for a method without a profile
            calls = float(known["calls"]) if known else 1.0
            for m in specs:
                for seed in spec.seeds:
                    label = spec.label + (f" seed={seed}" if seed is not None else "")
                    est = Estimate(0, 0, 0, None, 0, "no data", prices.price(m.model).source)
                    view = batch_view(m.model, m.batch, est, method, spec.args, calls_per_sample=calls,
                                      prices=prices)
                    rows.append((m.model, label, est, view, reason))
            continue
        for c in cells:
            meta = c.task.metadata or {}
            method = profile_key(c.task.name, meta)
            options = {**spec.args, **(meta.get("options") or {})}
            rows.append((c.model.model, c.label, c.estimate,
                         batch_view(c.model.model, c.model.batch, c.estimate, method, options, prices=prices), None))
    return rows


def run_total(rows) -> float | None:
    """The suite's estimated $ as it runs (each cell's :attr:`BatchView.run_usd`); None when a cell has no price."""
    cells = [v.run_usd for _, _, _, v, _ in rows]
    return None if None in cells else sum(cells, 0.0)


def render_rows(rows) -> str:
    """:func:`render` plus a line per task whose data could not be read."""
    text = render([(m, lb, e, v) for m, lb, e, v, _ in rows])
    problems = {lb: p for _, lb, _, _, p in rows if p}
    if problems:
        text += "\nno figures (data not available here):\n" + "\n".join(f"    {lb}: {p}" for lb, p in problems.items())
    return text


def rows_json(rows) -> dict[str, Any]:
    from conflict_eval.runs.estimate import estimates_json

    data = estimates_json([(m, lb, e) for m, lb, e, _, _ in rows])
    for cell, (_, _, _, v, p) in zip(data["cells"], rows):
        cell.update(v.as_json())
        cell["problem"] = p
    views = [v for *_, v, _ in rows]

    def total(values: list) -> float | None:  # None when a cell has no price: never a partial sum
        return None if None in values else round(sum(values, 0.0), 6)

    runs = {"batch" if v.batched else "live" for v in views}
    data["total"].update({
        "live_usd": total([v.live_usd for v in views]), "batch_usd": total([v.batch_usd for v in views]),
        "run_usd": total([v.run_usd for v in views]),
        # which of the two the suite's model settings run at ("mixed": some cells batched, some live)
        "applies": runs.pop() if len(runs) == 1 else ("mixed" if runs else None)})
    return data
