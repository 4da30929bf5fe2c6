"""``conflict-eval suite run|show|status|estimate``: suites of tasks x models (:mod:`conflict_eval.runs`)."""

from __future__ import annotations

import json
import sys
from typing import Any

from conflict_eval.cli.options import parse_pairs, print_json
from conflict_eval.runs.spec import _MODEL_RE, ModelSpec, SuiteError, load_suite


def _models(args) -> list[ModelSpec] | None:
    if not args.model:
        return None
    bad = [m for m in args.model if not _MODEL_RE.match(m)]
    if bad:
        raise SuiteError(f"bad model string(s) {', '.join(map(repr, bad))}: expected 'provider/model-name'")
    from conflict_eval.runs.registered import provider_known

    for m in args.model:
        if not provider_known(m.split("/", 1)[0]):
            raise SuiteError(f"bad --model {m!r}: unknown provider {m.split('/', 1)[0]!r} (Inspect has no model API "
                             "of that name; check the spelling, e.g. openai/..., or install its package)")
    extra = parse_pairs(args.model_arg, "-M")
    return [ModelSpec(m, args.max_connections, extra) for m in args.model]


def _estimate_cells(args, suite, models):
    from conflict_eval.runs.run import build_cells, parse_shard

    from conflict_eval.records.download import DownloadError

    mcc = args.model_cost_config or suite.eval.get("model_cost_config")
    try:
        cells = build_cells(suite, parse_shard(args.shard), models=models, limit=args.limit, model_cost_config=mcc,
                            connect=False)
    except DownloadError as exc:  # a suite takes no -T: say where the file goes in a suite
        raise DownloadError(str(exc).replace(
            "pass it with -T path=FILE",
            "set `path: FILE` in that task's `args:` in a copy of the suite file (suite commands take no -T)")) \
            from None
    return [(c.model.model, c.label, c.estimate) for c in cells]


def _print_estimate(rows, as_json: bool, args=None) -> None:
    from conflict_eval.runs.estimate import estimates_json, render_estimates

    if as_json:
        print_json(args, estimates_json(rows), indent=2)
    else:
        print(render_estimates(rows))


def cmd_suite_estimate(args) -> int:
    suite = load_suite(args.suite)
    _print_estimate(_estimate_cells(args, suite, _models(args)), args.json, args)
    return 0


def cmd_suite_run(args) -> int:
    from conflict_eval.runs.run import parse_shard, run_suite
    from conflict_eval.runs.status import incomplete, render_status

    suite = load_suite(args.suite)
    models = _models(args)
    if args.estimate:
        rows = _estimate_cells(args, suite, models)
        _print_estimate(rows, False)
        print()
        _refuse_over_budget(rows, args.budget if args.budget is not None else suite.budget)
    log_dir = args.log_dir or f"logs/{suite.name}"
    options: dict[str, Any] = {"display": args.display, "max_tasks": args.max_tasks,
                               "model_cost_config": args.model_cost_config, "cost_limit": args.cost_limit,
                               "token_limit": args.token_limit, "time_limit": args.time_limit,
                               "log_dir_allow_dirty": args.log_dir_allow_dirty or None}
    _say_resume(log_dir, args.shard)
    run = run_suite(suite, log_dir, shard=parse_shard(args.shard), models=models, limit=args.limit,
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
    print(f"logs: {run.log_dir}")
    print(f"table: conflict-eval leaderboard {log_dir}")
    if not run.success:
        print("re-run the same command to resume the unfinished tasks"
              + (" (with a larger --budget)" if run.stop_reason == "budget" else ""), file=sys.stderr)
    return run.exit_code


def _say_resume(log_dir: str, shard: str | None) -> None:
    """Before a re-run: the samples already done, counted as `suite status` counts them."""
    from pathlib import Path

    from conflict_eval.runs.run import parse_shard, shard_log_dir
    from conflict_eval.runs.status import task_statuses

    out_dir = shard_log_dir(log_dir, parse_shard(shard))
    if not Path(out_dir).is_dir():
        return
    statuses = [s for s in task_statuses(out_dir) if s.status != "not started"]
    if statuses and not all(s.complete for s in statuses):
        done = sum(s.done for s in statuses)
        print(f"resuming: {done} sample(s) already done in {len(statuses)} task log(s); only the rest run")


def _refuse_over_budget(rows, budget: float | None) -> None:
    """``suite run --estimate``: an estimate over the budget does not start."""
    from conflict_eval.runs.estimate import total_of

    cost = total_of(rows).cost_usd
    if budget is not None and cost is not None and cost > budget:
        raise SuiteError(f"the estimate (${cost:.4f}) is over the budget (${budget:g}); nothing was run: "
                         "raise --budget, or lower --limit or the models")


def cmd_suite_status(args) -> int:
    from conflict_eval.runs.budget import read_stop
    from conflict_eval.runs.status import incomplete, render_status, status_json, task_statuses

    from pathlib import Path

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
    r.add_argument("--shard", help="run shard i of n of every dataset, e.g. 1/4 (logs to LOG_DIR/shard-i-of-n)")
    r.add_argument("--limit", type=int, help="at most N samples of every task (after the suite's limits)")
    r.add_argument("--model-cost-config", metavar="FILE",
                   help="Inspect model cost file (YAML/JSON: model -> input, output[, input_cache_write, "
                        "input_cache_read] USD per 1M tokens); the packaged price file is the fallback")


def add_cli_commands(sub) -> None:
    """Register the ``suite`` subcommands."""
    p = sub.add_parser("suite", help="run, estimate or check a suite of tasks x models (inspect eval-set)")
    ssub = p.add_subparsers(dest="suite_command", required=True)
    r = ssub.add_parser("run", help="run a suite file (resumes when re-run with the same --log-dir)",
                        epilog="Exit codes: 0 every task complete (from the logs), 1 unfinished tasks or a "
                               "budget stop, 130 after Ctrl-C (SIGINT), 143 after SIGTERM, 2 bad input.")
    r.add_argument("suite", help="suite YAML file, or a shipped suite name (default, tiny)")
    _model_flags(r)
    r.add_argument("--log-dir", help="default logs/<suite name>")
    r.add_argument("--max-tasks", type=int, help="tasks run in parallel")
    r.add_argument("--budget", type=float, metavar="USD", help="suite-wide budget in US dollars (overrides budget:)")
    r.add_argument("--cost-limit", type=float, metavar="USD", help="Inspect's per-sample cost limit")
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
    s.add_argument("log_dir")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_suite_status)
    s = ssub.add_parser("show", help="print the tasks a suite expands to")
    s.add_argument("suite")
    s.set_defaults(fn=cmd_suite_show)
