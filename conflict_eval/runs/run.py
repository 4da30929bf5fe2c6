"""Running a suite: Inspect tasks per model, ``eval_set``, and the verdict from the logs.

``eval_set`` gives retries, resumption and concurrency. What it does not give
is a trustworthy verdict: after Ctrl-C it returns success with cancelled
logs behind it. :func:`run_suite` therefore judges the run by the logs
(:mod:`conflict_eval.runs.status`), handles SIGTERM like SIGINT (so a
``kill`` closes the logs as ``cancelled`` instead of leaving them
``started``), and stops at a suite-wide budget (:mod:`conflict_eval.runs.budget`).
After Ctrl-C or SIGTERM, the batches a batched model left running at the
provider are cancelled there (:mod:`conflict_eval.runs.batch_stop`).
Inspect's own closing line, "Completed all tasks in 'LOG_DIR' successfully"
even after Ctrl-C, is kept off the console (:class:`~conflict_eval.runs.signals.inspect_verdict_muted`).
Re-running the same command resumes ``started``, ``cancelled`` and ``error``
logs alike: Inspect reuses the samples they finished.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conflict_eval.pricing import PriceTable
from conflict_eval.runs.signals import SigtermAsSigint, inspect_verdict_muted
from conflict_eval.runs.spec import ModelSpec, Suite, SuiteError, model_arg_problem

# suite `eval:` keys and `suite run` flags that are Inspect per-sample limits
LIMIT_KEYS = ("cost_limit", "token_limit", "time_limit", "working_limit", "message_limit")


def _least(*caps: int | None) -> int | None:
    given = [c for c in caps if c is not None]
    return min(given) if given else None


@dataclass
class Cell:
    """One model x task (x seed) of a suite: its Inspect task and estimate."""

    model: ModelSpec
    label: str
    task: Any  # inspect_ai.Task
    estimate: Any  # conflict_eval.runs.estimate.Estimate


def build_cells(suite: Suite, *, models: list[ModelSpec] | None = None,
                limit: int | None = None, prices: PriceTable | None = None,
                connect: bool = True, cost_config_file: str | None = None) -> list[Cell]:
    """The suite's Inspect tasks, one per model, task entry and seed, each
    carrying its estimate as task metadata ``conflict_eval_estimate``
    (``{"per_sample": {...}, "total": {...}}``, each with calls,
    input_tokens, output_tokens, cost_usd). ``limit`` caps every task's
    samples (after the suite's own limits). ``connect=False`` (for estimates) builds
    no model objects, so no API key or model weights are needed. ``prices``: the
    table the estimates are priced with (``None``: the suite's cost config, parsed here)."""
    from inspect_ai import task_with
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import GenerateConfig, get_model

    from conflict_eval.components.endpoint import model_endpoint, resolve_endpoint
    from conflict_eval.runs.estimate import estimate_built
    from conflict_eval.runs.registered import registered_tasks
    from conflict_eval.records.source import source_info

    specs = models or suite.models
    if not specs:
        raise SuiteError(f"suite {suite.name!r} names no models; give --model")
    prices = prices if prices is not None else PriceTable.load(suite.eval.get("model_cost_config"))
    mcc = suite.eval.get("model_cost_config")
    cost_file = cost_config_file or (mcc if isinstance(mcc, str) else None)
    registered = registered_tasks()
    cells = []
    for m in specs:
        try:  # not memoized: a client made for another URL
            model_obj = get_model(m.model, config=model_config(m), memoize=False, **m.args) if connect else None
        except TypeError as exc:  # an argument the provider's client does not take: the user's error
            if (bad := model_arg_problem(exc, m.model, m.args)) is None:
                raise
            raise SuiteError(bad) from None
        endpoint = model_endpoint(model_obj) if model_obj is not None else \
            resolve_endpoint(m.model, m.args.get("base_url"))
        for spec in suite.tasks:
            for seed in spec.seeds:
                task = registered[spec.task](**spec.args)  # a fresh Task: task_with changes it in place
                samples = list(task.dataset)
                for cap in (spec.limit, limit):
                    if cap is not None:
                        samples = samples[:cap]
                config = task.config.merge(GenerateConfig(**spec.config, **({"seed": seed} if seed is not None else {})))
                epochs = spec.epochs if spec.epochs is not None else task.epochs
                est = estimate_built(task, samples, m.model, prices=prices, max_tokens=config.max_tokens,
                                     epochs=epochs if isinstance(epochs, int) else None)
                meta = {**(task.metadata or {}), "conflict_eval_estimate": est.metadata(), "suite": {
                    "suite": suite.name, "label": spec.label, "task": spec.task, "args": spec.args,
                    "limit": spec.limit, "seed": seed,
                    # the cut as the reproduce command states it (report.commands)
                    "selection": {"limit": _least(spec.limit, limit)}},
                    "conflict_eval_endpoint": {m.model: endpoint},
                    "conflict_eval_source": source_info()}  # the code that ran (report.provenance)
                if cost_file:  # repeated by the reproduce command (report.commands)
                    meta["conflict_eval_cost_config"] = {"file": cost_file}
                # a list would make Inspect's dataset nameless ("dataset: (samples)"): keep the loader's
                dataset = MemoryDataset(samples, name=task.dataset.name, location=task.dataset.location,
                                        shuffled=task.dataset.shuffled)
                kwargs: dict[str, Any] = {"dataset": dataset, "config": config, "metadata": meta}
                if model_obj is not None:
                    kwargs["model"] = model_obj
                if spec.epochs is not None:
                    kwargs["epochs"] = spec.epochs
                label = spec.label + (f" seed={seed}" if seed is not None else "")
                cells.append(Cell(m, label, task_with(task, **kwargs), est))
    return cells


def model_config(m: ModelSpec):
    """The model's own ``GenerateConfig``: its connection limit and its ``batch`` (passed to Inspect unchanged)."""
    from inspect_ai.model import GenerateConfig

    from conflict_eval.runs.batching import generate_batch

    extra = {"batch": generate_batch(m.batch)} if m.batch is not None else {}
    return GenerateConfig(max_connections=m.max_connections, **extra)


def build_tasks(suite: Suite, **kwargs: Any) -> list:
    """The Inspect ``Task`` objects of :func:`build_cells`."""
    return [c.task for c in build_cells(suite, **kwargs)]


@dataclass
class SuiteRun:
    """What a suite run left behind. Unpacks as ``(success, logs)`` like ``eval_set``'s
    result, but ``success`` is judged from the logs: every task complete."""

    success: bool
    logs: list
    statuses: list = field(default_factory=list)
    stop_reason: str | None = None  # "SIGINT", "SIGTERM", "budget", "incomplete" or None
    log_dir: str = ""
    spent_usd: float | None = None
    batches: dict | None = None  # batches left at the provider and what was done with them (runs.batch_stop)

    def __iter__(self):
        return iter((self.success, self.logs))

    @property
    def exit_code(self) -> int:
        if self.success:
            return 0
        return {"SIGINT": 130, "SIGTERM": 143}.get(self.stop_reason or "", 1)


def cells_batch_budget(cells: list[Cell],
                       prices: PriceTable | None = None) -> tuple[dict[str, Any], dict[str, float]]:
    """:func:`conflict_eval.runs.budget.batch_budget` of a suite's cells."""
    from conflict_eval.runs.budget import batch_budget

    return batch_budget(((c.model.model, c.model.batch, c.estimate.cost_usd / c.estimate.calls
                          if c.estimate.cost_usd is not None and c.estimate.calls else None) for c in cells), prices)


def run_suite(suite: Suite, log_dir: str | Path, *, models: list[ModelSpec] | None = None, limit: int | None = None, budget: float | None = None,
              **eval_set_options: Any) -> SuiteRun:
    """Run the suite with ``inspect_ai.eval_set`` and judge it by its logs.

    ``models`` replaces the suite's models; ``eval_set_options`` override the
    suite's ``eval`` section (e.g. ``display="none"``, ``cost_limit=0.05``,
    ``model_cost_config="costs.yaml"``); ``budget`` (USD) overrides ``budget:``.
    """
    from inspect_ai import eval_set

    from conflict_eval.runs.budget import budget_guard, write_stop
    from conflict_eval.runs.preflight import check_endpoints
    from conflict_eval.runs.status import incomplete, task_statuses

    options = {**suite.eval, **{k: v for k, v in eval_set_options.items() if v is not None}}
    cost_file = options.get("model_cost_config") if isinstance(options.get("model_cost_config"), str) else None
    prices = PriceTable.load(options.get("model_cost_config"))  # parsed once, here
    if prices.config:  # Inspect's format; models Inspect does not know are added to its database
        options["model_cost_config"] = prices.register_with_inspect()
    specs = models or suite.models
    check_endpoints(specs)  # bounded: an unreachable URL fails now, not after minutes of retries
    with inspect_verdict_muted():  # building the models prints Inspect's banner once per process
        cells = build_cells(suite, models=specs, limit=limit, prices=prices, cost_config_file=cost_file)
    out_dir = str(log_dir)
    if not cells:
        return SuiteRun(True, [], [], None, out_dir)
    budget = budget if budget is not None else suite.budget
    if budget is not None:
        unpriced = [m.model for m in specs if prices.price(m.model).cost is None]
        if unpriced:
            raise SuiteError(f"a budget needs prices for every model; none known for {', '.join(unpriced)} "
                             "(give --model-cost-config FILE in Inspect's format)")
    record_cells(out_dir, cells)  # what the manifest does not say: each cell's suite label and total
    interrupted = None
    logs: list = []
    batch, reserve = cells_batch_budget(cells, prices) if budget is not None else ({}, {})
    watch = watch_batches(cells, suite.batch_timeout)
    options = batched_run_options(watch, options)
    refused = False
    with SigtermAsSigint() as term, budget_guard(budget, out_dir, prices, batch=batch, reserve=reserve) as guard, \
            inspect_verdict_muted():
        try:
            _, logs = eval_set([c.task for c in cells], log_dir=out_dir, model=None,
                               metadata={"suite": suite.name}, **options)
        except KeyboardInterrupt:
            interrupted = "SIGINT"
        except Exception:  # noqa: BLE001 -- Inspect's batcher raises a refused batch creation out of eval_set
            if not watch.refused:
                raise
            refused = True
            watch.say_refused()
        statuses = task_statuses(out_dir, [(c.model.model, c.label, c.estimate.samples) for c in cells])
        left = incomplete(statuses)
        reason = None
        if left:
            cancelled = any(s.status == "cancelled" for s in left)
            if guard.stopped:
                reason = "budget"
            elif refused:
                reason = "batch refused"
            elif term.received:
                reason = term.received
            elif cancelled or interrupted:
                reason = "SIGINT"
            else:
                reason = "incomplete"

        def stop(batches):  # why the suite stopped short, for `suite status` and reports
            write_stop(out_dir, reason, budget_usd=budget, spent_usd=guard.spent, submitted=guard.submitted(),
                       **({"batches": batches} if batches else {}),
                       tasks=[{"model": s.model, "task": s.label, "state": s.status, "done": s.done,
                               "total": s.total} for s in left])

        batches = watch.settle(out_dir, reason in ("SIGINT", "SIGTERM"), stop if left else None)
    if not left:
        write_stop(out_dir, None)
    return SuiteRun(not left, logs, statuses, reason, out_dir, guard.spent, batches)


def record_cells(log_dir: str | Path, cells: list[Cell]) -> None:
    """Write ``suite-cells.json`` (:func:`conflict_eval.report.manifest.write_cells`): so a cell that
    never starts is still named and counted by ``suite status`` and the leaderboard."""
    from conflict_eval.report.manifest import write_cells

    write_cells(log_dir, cell_records(cells))


def cell_records(cells: list[Cell]) -> list[dict[str, Any]]:
    """The cells as :func:`conflict_eval.report.manifest.write_cells` records them."""
    return [{"model": c.model.model, "task": c.task.metadata["suite"]["task"],
             "args": c.task.metadata["suite"]["args"], "label": c.label,
             "suite_label": c.task.metadata["suite"]["label"], "total": c.estimate.samples} for c in cells]


def watch_batches(cells: list[Cell], timeout: float | None = None):
    """A :class:`~conflict_eval.runs.batch_stop.BatchWatch` on the batched models of ``cells``;
    ``timeout``: the suite's ``batch_timeout`` (its default where not given)."""
    from conflict_eval.pricing import batched
    from conflict_eval.runs.batch_stop import BATCH_TIMEOUT, BatchWatch

    watch = BatchWatch(timeout=timeout if timeout is not None else BATCH_TIMEOUT)
    for c in cells:
        if batched(c.model.model, c.model.batch) and c.task.model is not None:
            watch.watch(c.model.model, c.task.model)
    return watch


def batched_run_options(watch, options: dict[str, Any]) -> dict[str, Any]:
    """The ``eval_set`` options of ``suite run`` and ``suite worker`` alike: with batches watched,
    ``continue_on_fail`` on unless the suite sets it (a batch's answered requests are paid: one
    sample's error cancels none of the others)."""
    return {"continue_on_fail": True, **options} if watch.watching() else dict(options)
