"""``conflict-eval suite run|show|status|estimate``: suites of tasks x models (:mod:`conflict_eval.runs`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from conflict_eval.cli.options import parse_pairs, positive_number, print_json
from conflict_eval.records.config_files import read_json
from conflict_eval.runs.lease import DEFAULT_TIMEOUT_S as DEFAULT_LEASE_TIMEOUT
from conflict_eval.runs.spec import ModelSpec, SuiteError, load_suite, model_problem


LEASE_HELD_EXIT = 75  # EX_TEMPFAIL: another worker runs this selection; try again later


def _models(args) -> list[ModelSpec] | None:
    if not args.model:
        return None
    for m in args.model:
        problem = model_problem(m)
        if problem:
            raise SuiteError(f"--model: {problem}")
    extra = parse_pairs(args.model_arg, "-M")
    return [ModelSpec(m, args.max_connections, extra) for m in args.model]


def _estimate_rows(args, suite, models):
    """Live and batch cost per cell (:mod:`conflict_eval.runs.batch_estimate`)."""
    from conflict_eval.runs.batch_estimate import suite_rows

    return suite_rows(suite, models=models or suite.models, limit=args.limit,
                      model_cost_config=args.model_cost_config or suite.eval.get("model_cost_config"))


def cmd_suite_estimate(args) -> int:
    from conflict_eval.runs.batch_estimate import render_rows, rows_json
    from conflict_eval.runs.batching import parse_batch_flag, with_batch

    suite = load_suite(args.suite)
    rows = _estimate_rows(args, suite, with_batch(_models(args) or suite.models, parse_batch_flag(args.batch)))
    if args.json:
        print_json(args, rows_json(rows), indent=2)
    else:
        print(render_rows(rows))
    return 0


def cmd_suite_run(args) -> int:
    from conflict_eval.runs.run import run_suite
    from conflict_eval.runs.status import error_lines, incomplete, render_status

    from conflict_eval.runs.batching import parse_batch_flag, with_batch

    suite = load_suite(args.suite)
    batch = parse_batch_flag(args.batch)
    models = with_batch(_models(args) or suite.models, batch) if batch is not None else _models(args)
    if args.estimate:
        from conflict_eval.runs.batch_estimate import render_rows

        rows = _estimate_rows(args, suite, models)
        print(render_rows(rows))
        print()
        _refuse_over_budget(rows, args.budget if args.budget is not None else suite.budget)
    log_dir = args.log_dir or f"logs/{suite.name}"
    options: dict[str, Any] = {"display": args.display, "max_tasks": args.max_tasks,
                               "model_cost_config": args.model_cost_config, "cost_limit": args.cost_limit,
                               "token_limit": args.token_limit, "time_limit": args.time_limit,
                               "log_dir_allow_dirty": args.log_dir_allow_dirty or None}
    _say_resume(log_dir)
    run = run_suite(suite, log_dir, models=models, limit=args.limit,
                    budget=args.budget, **options)
    left = incomplete(run.statuses)
    if run.success:
        print(f"suite {suite.name}: {len(run.statuses)} task run(s), complete")
    else:
        why = {"SIGINT": "interrupted (SIGINT)", "SIGTERM": "stopped by SIGTERM",
               "budget": f"stopped by the budget (${run.spent_usd:.4f} spent)" if run.spent_usd is not None
               else "stopped by the budget"}.get(run.stop_reason or "", "some tasks did not finish")
        print(f"suite {suite.name}: INCOMPLETE, {why}: {len(left)} of {len(run.statuses)} task(s) unfinished")
    print(render_status(run.statuses))
    for line in error_lines(left):
        print(line, file=sys.stderr)
    print(f"logs: {run.log_dir}")
    print(table_hint(log_dir, run.success))
    if not run.success and all(s.to_close for s in left):
        print("re-run the same command to close the logs: every sample is done, it makes no model call",
              file=sys.stderr)
    elif not run.success:
        print("re-run the same command to resume the unfinished tasks"
              + (" (with a larger --budget)" if run.stop_reason == "budget" else ""), file=sys.stderr)
    return run.exit_code


def table_hint(log_dir: str, complete: bool) -> str:
    """The leaderboard command for this log folder, one that works: an unfinished
    suite needs ``--allow-incomplete`` (without it the leaderboard refuses its cells).

    >>> table_hint("logs/my suite", False)
    "table (unfinished cells marked done/total or not started): conflict-eval leaderboard 'logs/my suite' --allow-incomplete"
    """
    import shlex

    if complete:
        return f"table: conflict-eval leaderboard {shlex.quote(str(log_dir))}"
    return ("table (unfinished cells marked done/total or not started): "
            f"conflict-eval leaderboard {shlex.quote(str(log_dir))} --allow-incomplete")


def cmd_suite_plan(args) -> int:
    from conflict_eval.runs.batching import parse_batch_flag, with_batch
    from conflict_eval.runs.plan import make_plan

    suite = load_suite(args.suite)
    models = with_batch(_models(args) or suite.models, parse_batch_flag(args.batch))
    from conflict_eval.runs.walltime import duration_text, parse_latencies

    plan = make_plan(args.suite, args.out, workers=args.workers, log_dir=args.log_dir, models=models,
                     limit=args.limit, budget=args.budget, latency=parse_latencies(args.latency),
                     model_roles=parse_pairs(args.model_role, "--model-role"), shards=args.shards)
    print(f"plan for suite {plan['suite_name']}: {len(plan['cells'])} cell(s) over {len(plan['workers'])} worker(s); "
          f"shared log folder {plan['log_dir']}")
    for w in plan["workers"]:
        budget = f", budget ${w['budget_usd']:.4f}" if w["budget_usd"] is not None else ""
        what = f"{w['cells'][0]} shard {w['shard']} ({len(w['sample_ids'])} sample(s))" if w.get("shard") \
            else f"{len(w['cells'])} cell(s)"
        print(f"  worker {w['worker']}: {what}, estimated {duration_text(w['estimated_s'])}, "
              f"${w['estimated_usd']:.4f}{budget}  ({w['selection']})")
    print(f"run a worker:        {plan['worker_command']}")
    print(f"or with Inspect:     {plan['plain_command']}")
    print(f"with Hawk:           hawk eval-set {Path(args.out) / 'hawk.yaml'}  (docs/many-machines.md)")
    print(f"progress:            conflict-eval suite status {args.out}")
    return 0


def cmd_suite_worker(args) -> int:
    from conflict_eval.runs.lease import LeaseHeld
    from conflict_eval.runs.status import render_status
    from conflict_eval.runs.worker import run_worker

    try:
        run = run_worker(args.selection, display=args.display, wait=args.wait, lease_timeout=args.lease_timeout,
                         incomplete_action=args.incomplete_action, incomplete_max=args.incomplete_max)
    except LeaseHeld as e:
        print(f"error: {e}", file=sys.stderr)
        return LEASE_HELD_EXIT
    if run.skipped:
        print(f"already complete: {', '.join(run.skipped)}")
    if run.closed:
        print(f"crashed samples closed as errors: {', '.join(run.closed)}")
    if run.resumed:
        print(f"resumed from their logs: {', '.join(run.resumed)}")
    for cell, why in run.merge.items():
        print(f"{cell}: shards merged into one log" if why is None else f"{cell}: not merged yet: {why}")
    print(f"worker {args.selection}: " + ("complete" if run.success else f"INCOMPLETE ({run.stop_reason})"))
    print(render_status(run.statuses))
    return run.exit_code


def cmd_suite_merge(args) -> int:
    from conflict_eval.runs.plan import read_plan
    from conflict_eval.runs.shards import merge_plan

    _, plan = read_plan(args.plan)
    merged = merge_plan(plan)
    if not merged:
        print(f"{args.plan}: no sharded cells (suite plan --shards K makes them)")
    for cell, why in merged.items():
        print(f"{cell}: merged" if why is None else f"{cell}: not merged yet: {why}")
    return 0 if all(why is None for why in merged.values()) else 1


def _plan_status(args, plan_file, plan) -> int:
    from conflict_eval.runs.batch_stop import batch_lines
    from conflict_eval.runs.status import error_lines, incomplete, render_status, status_json
    from conflict_eval.runs.worker import plan_spend, plan_statuses

    statuses = plan_statuses(plan)
    left = incomplete(statuses)
    spend = plan_spend(plan)
    stops = {}
    for w in plan.get("workers") or []:
        p = Path(w.get("log_dir") or plan["log_dir"]) / f"worker-{w['worker']}-stop.json"
        if p.is_file():
            stops[w["worker"]] = read_json(p)
    if args.json:
        print(json.dumps({"complete": not left, "tasks": status_json(statuses), "plan": str(plan_file),
                          "spent_usd": sum(spend.values()), "budget_usd": plan.get("budget_usd"),
                          "workers": [{**w, "spent_usd": spend.get(w["worker"]),
                                       "stop": stops.get(w["worker"])} for w in plan["workers"]]}, indent=2))
        return 0 if not left else 1
    head = "all tasks done" if not left else f"INCOMPLETE: {len(left)} of {len(statuses)} unfinished"
    print(f"{plan['log_dir']} (plan {plan_file}): {head}")
    print(render_status(statuses))
    for line in error_lines(left):
        print(line)
    budget = plan.get("budget_usd")
    print(f"spent ${sum(spend.values()):.4f}" + (f" of ${budget:.4f}" if budget is not None else "")
          + " (all workers, from the shared folder; batch prices where batched)")
    for w in plan["workers"]:
        share = f" of ${w['budget_usd']:.4f}" if w.get("budget_usd") is not None else ""
        stop = f", stopped: {stops[w['worker']]['conflict_eval_stop_reason']}" if w["worker"] in stops and left else ""
        print(f"  worker {w['worker']}: ${spend.get(w['worker'], 0.0):.4f}{share}, {len(w['cells'])} cell(s){stop}")
        for line in batch_lines((stops.get(w["worker"]) or {}).get("batches")):
            print(f"  worker {w['worker']} {line}")
    return 0 if not left else 1


def _say_resume(log_dir: str) -> None:
    """Before a re-run: the samples already done, counted as `suite status` counts them."""
    from conflict_eval.runs.status import task_statuses

    if not Path(log_dir).is_dir():
        return
    statuses = [s for s in task_statuses(log_dir) if s.status != "not started"]
    if statuses and not all(s.complete for s in statuses):
        done = sum(s.done for s in statuses)
        if all(s.complete or s.to_close for s in statuses):
            print(f"resuming: all {done} sample(s) are done; this run only closes "
                  f"{sum(s.to_close for s in statuses)} cancelled log(s), no model call")
        else:
            print(f"resuming: {done} sample(s) already done in {len(statuses)} task log(s); only the rest run")


def _refuse_over_budget(rows, budget: float | None) -> None:
    """``suite run --estimate``: an estimate over the budget does not start (a
    batched cell counts at its batch price, as the budget counts it)."""
    from conflict_eval.runs.batch_estimate import run_total

    cost = run_total(rows)  # None with an unpriced cell: no total to hold against the budget
    if budget is not None and cost is not None and cost > budget:
        raise SuiteError(f"the estimate (${cost:.4f}) is over the budget (${budget:g}); nothing was run: "
                         "raise --budget, or lower --limit or the models")


def cmd_suite_status(args) -> int:
    from conflict_eval.runs.batch_stop import batch_lines
    from conflict_eval.runs.budget import read_stop
    from conflict_eval.runs.plan import find_plan, read_plan
    from conflict_eval.runs.status import error_lines, incomplete, render_status, status_json, task_statuses

    if args.plan or find_plan(args.log_dir):
        plan_file, plan = read_plan(args.plan or args.log_dir)
        return _plan_status(args, plan_file, plan)

    if not Path(args.log_dir).is_dir():
        raise FileNotFoundError(f"no such log directory {args.log_dir}: give the --log-dir a `suite run` wrote to "
                                "(default logs/<suite name>)")
    statuses = task_statuses(args.log_dir)
    left = incomplete(statuses)
    stop = read_stop(args.log_dir)
    if args.json:
        print_json(args, {"complete": bool(statuses) and not left, "tasks": status_json(statuses),
                          "stop": stop}, indent=2)
    else:
        head = "all tasks done" if statuses and not left else f"INCOMPLETE: {len(left)} of {len(statuses)} unfinished"
        print(f"{args.log_dir}: {head}" + (f" (stopped: {stop['conflict_eval_stop_reason']})" if stop and left else ""))
        print(render_status(statuses))
        for line in error_lines(left):
            print(line)
        for line in batch_lines((stop or {}).get("batches")):
            print(line)
    return 0 if statuses and not left else 1


def cmd_suite_show(args) -> int:
    suite = load_suite(args.suite)
    print(f"suite {suite.name} ({suite.path}): {suite.description}")
    print("models:", ", ".join(m.model for m in suite.models) or "(none; give --model)")
    if suite.budget is not None:
        print(f"budget: ${suite.budget:g}")
    for t in suite.tasks:
        extras = {k: v for k, v in (("limit", t.limit), ("epochs", t.epochs)) if v is not None}
        seeds = "" if t.seeds == (None,) else f" seeds={list(t.seeds)}"
        print(f"  {t.label}: {t.task} {json.dumps(t.args)}{seeds} {extras or ''}".rstrip())
    return 0


def _model_flags(r) -> None:
    r.add_argument("--model", action="append", help="model(s) replacing the suite's models (repeatable)")
    r.add_argument("-M", dest="model_arg", action="append", default=[], metavar="NAME=VALUE",
                   help="model argument for --model models")
    r.add_argument("--max-connections", type=int, help="connection limit for --model models")
    r.add_argument("--limit", type=int, help="at most N samples of every task (after the suite's limits)")
    r.add_argument("--batch", nargs="?", const="true", metavar="SIZE|FILE",
                   help="send every model's calls through its provider's batch API (Inspect's GenerateConfig.batch: "
                        "bare, a batch size, or a YAML/JSON file of BatchConfig fields); a model entry's "
                        "'batch: false' keeps it live")
    r.add_argument("--model-cost-config", metavar="FILE",
                   help="Inspect model cost file (YAML/JSON: model -> input, output[, input_cache_write, "
                        "input_cache_read] USD per 1M tokens); the packaged price file is the fallback")


def add_cli_commands(sub) -> None:
    """Register the ``suite`` subcommands."""
    p = sub.add_parser("suite", help="run, estimate or check a suite of tasks x models (inspect eval-set)")
    p.set_defaults(data_context="suite")  # a loader's missing file is told as a suite gives it (records.DataNeeded)
    ssub = p.add_subparsers(dest="suite_command", required=True)
    r = ssub.add_parser("run", help="run a suite file (resumes when re-run with the same --log-dir)",
                        epilog="Exit codes: 0 every task complete (from the logs), 1 unfinished tasks or a "
                               "budget stop, 130 after Ctrl-C (SIGINT), 143 after SIGTERM, 2 bad input.")
    r.add_argument("suite", help="suite YAML file, or a shipped suite name (default, tiny)")
    _model_flags(r)
    r.add_argument("--log-dir", help="default logs/<suite name>")
    r.add_argument("--max-tasks", type=int, help="tasks run in parallel")
    r.add_argument("--budget", type=positive_number, metavar="USD", help="suite-wide budget in US dollars (overrides budget:)")
    r.add_argument("--cost-limit", type=positive_number, metavar="USD", help="Inspect's per-sample cost limit")
    r.add_argument("--token-limit", type=int, help="Inspect's per-sample token limit")
    r.add_argument("--time-limit", type=int, metavar="SECONDS", help="Inspect's per-sample time limit")
    r.add_argument("--estimate", action="store_true",
                   help="print the cost estimate before running; an estimate over the budget does not start")
    r.add_argument("--log-dir-allow-dirty", action="store_true",
                   help="run even though the log folder holds logs of other runs (Inspect's option)")
    r.add_argument("--display", default="plain", choices=["full", "rich", "plain", "log", "none"])
    r.set_defaults(fn=cmd_suite_run)
    e = ssub.add_parser("estimate", help="expected calls, tokens and $ per model x task, without running")
    e.add_argument("suite")
    _model_flags(e)
    e.add_argument("--json", action="store_true", help='{"total": {...}, "cells": [...]}')
    e.set_defaults(fn=cmd_suite_estimate)
    s = ssub.add_parser("status", help="done/total per task from a suite's logs, without running anything")
    s.add_argument("log_dir", help="a suite's log folder, or a plan folder (suite plan --out DIR)")
    s.add_argument("--plan", metavar="DIR", help="the plan whose shared log folder to report (all its workers)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_suite_status)
    p = ssub.add_parser("plan", help="split a suite over many machines: Inspect's capture manifest, one "
                                     "selection per worker (docs/many-machines.md)",
                        allow_abbrev=False)  # the removed --shard is not an abbreviation of --shards
    p.add_argument("suite")
    _model_flags(p)
    p.add_argument("--out", required=True, metavar="DIR", help="plan folder (tasks.py, capture.json, plan.json, "
                   "workers/worker-I.json)")
    p.add_argument("--workers", type=int, default=1, help="number of workers (default 1)")
    p.add_argument("--shards", type=int, default=1, metavar="K",
                   help="split every cell into K shards in Inspect's shard layout (LOG_DIR/<cell>.shards/<k>), one "
                        "worker each; the last shard's worker merges the cell (or suite merge DIR)")
    p.add_argument("--log-dir", help="the shared flat log folder every worker writes (default DIR/logs)")
    p.add_argument("--budget", type=positive_number, metavar="USD", help="suite-wide budget, split across workers by "
                   "their estimated cost (overrides budget:)")
    p.add_argument("--model-role", action="append", default=[], metavar="ROLE=MODEL",
                   help="a model role for every cell (the judges: grader=MODEL, grader_2=MODEL, ...); written into "
                        "the plan, the workers' eval set and hawk.yaml")
    p.add_argument("--latency", action="append", default=[], metavar="MODEL=SECONDS",
                   help="measured seconds per call of a model (repeatable); cells are dealt to workers by estimated "
                        "wall time, with a default latency where none is given (runs/walltime.py)")
    p.set_defaults(fn=cmd_suite_plan)
    w = ssub.add_parser("worker", help="run one worker of a plan into its shared log folder (Inspect's "
                                       "INSPECT_EVAL_SET_SELECTION); re-run to resume",
                        epilog="Exit codes: 0 its cells complete, 1 unfinished cells or a budget stop, 2 bad input, "
                               "75 another worker holds this selection's lease (run again later, or --wait), "
                               "130 after Ctrl-C, 143 after SIGTERM.")
    w.add_argument("selection", help="a selection file of the plan (DIR/workers/worker-I.json)")
    w.add_argument("--display", default="plain", choices=["full", "rich", "plain", "log", "none"])
    w.add_argument("--wait", action="store_true", help="when another worker holds this selection's lease, wait "
                   "for it to end (default: refuse, exit 75)")
    w.add_argument("--lease-timeout", type=positive_number, default=DEFAULT_LEASE_TIMEOUT, metavar="SECONDS",
                   help="a lease whose heartbeat is older than this is taken over (its worker was killed); "
                        f"default {DEFAULT_LEASE_TIMEOUT:g}")
    w.add_argument("--incomplete-action", choices=["retry", "error"], default="retry",
                   help="samples a crashed attempt left in flight: run them again (retry, Inspect's default) or "
                        "close them as errors (Inspect's recovery, incomplete_action='error')")
    w.add_argument("--incomplete-max", type=float, metavar="N",
                   help="with --incomplete-action error: when more samples than this were in flight (a count, or a "
                        "proportion of the cell's samples below 1), run them again instead")
    w.set_defaults(fn=cmd_suite_worker)
    m = ssub.add_parser("merge", help="merge the finished shards of a plan's sharded cells into one log per cell "
                                      "(suite plan --shards; a shard's worker does it when it finishes last)")
    m.add_argument("plan", help="the plan folder (suite plan --out DIR)")
    m.set_defaults(fn=cmd_suite_merge)
    s = ssub.add_parser("show", help="print the tasks a suite expands to")
    s.add_argument("suite")
    s.set_defaults(fn=cmd_suite_show)
