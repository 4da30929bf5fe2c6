"""``conflict-eval reproduce list`` and ``conflict-eval reproduce CARD --model M``.

Run a reproduction card (:mod:`conflict_eval.runs.cards`): print the cost
estimate (:mod:`conflict_eval.runs.estimate`), run the card's tasks with
Inspect (like ``conflict-eval run``: SIGTERM is handled as Ctrl-C, logs close
as cancelled, exit 130/143), then print the paper's values beside ours
(:mod:`conflict_eval.runs.reproduce`).
"""

from __future__ import annotations

import sys
import time

from conflict_eval.cli.options import DEFAULT_MODEL, parse_pairs
from conflict_eval.cli.run import _newest_log
from conflict_eval.runs import reproduce
from conflict_eval.runs.cards import (compare, data_of_logs, find_card, metric_values, render_comparisons,
                                     shipped_cards)
from conflict_eval.runs.reproduce import estimate_card, parse_failure_counts, sample_values, task_label


def cmd_reproduce(args) -> int:
    import yaml

    from conflict_eval.runs.signals import SigtermAsSigint

    if args.card == "list":
        return cmd_list(args)
    card = find_card(args.card)
    try:
        overrides = parse_pairs(args.task_arg, "-T")  # NAME=VALUE, values read as YAML
        model_args = parse_pairs(args.model_arg, "-M")
    except yaml.YAMLError as exc:
        raise ValueError(f"-T/-M values are read as YAML; quote this one: {exc}") from None
    model = args.model or DEFAULT_MODEL
    print(f"card: {card.id}  ({card.paper}; {card.source})")
    print("estimate:")
    print(estimate_card(card, model, limit=args.limit, overrides=overrides,
                        model_cost_config=args.model_cost_config))
    if args.estimate_only:
        return 0
    started = time.time()
    logs: list = []
    with SigtermAsSigint() as term:
        try:
            logs = reproduce.run_card(card, model, limit=args.limit, overrides=overrides, log_dir=args.log_dir,
                            display=args.display, model_args=model_args)
        except KeyboardInterrupt:
            logs = []
    if not logs or any(log.status == "cancelled" for log in logs):
        print(f"interrupted ({term.received or 'SIGINT'})", file=sys.stderr)
        locations = [log.location for log in logs] or [_newest_log(args.log_dir, started)]
        for loc in filter(None, locations):
            loc = str(loc).removeprefix("file://")
            print(f"log: {loc}\nresume: inspect eval-retry {loc}", file=sys.stderr)
        return 143 if term.received == "SIGTERM" else 130
    for log in logs:
        print(f"log: {log.location}  status: {log.status}")
    failed = [log for log in logs if log.status != "success"]
    if failed:
        for log in failed:
            if log.error is not None:
                print(f"error: {log.error.message}", file=sys.stderr)
        print("not compared: a task did not succeed", file=sys.stderr)
        return 1
    scored, _, errors = sample_values(logs)
    parse_failures, step_samples, steps = parse_failure_counts(logs)
    values = metric_values(scored, card.metric, card.among)
    print()
    total = len(scored) + errors
    in_steps = f": {steps} unreadable step replies in {step_samples} samples" if steps else ""
    print(f"samples: {total} run, {errors} errored, {parse_failures} parse failures{in_steps} "
          f"(scored as the card's scorer rules, never as a right answer), {len(values)} with the metric")
    if total and (parse_failures + errors) * 2 > total:
        print(f"warning: {100 * (parse_failures + errors) / total:.0f}% of the samples are parse failures "
              "or errors; our value mostly measures the replies' format")
    print(render_comparisons(card, compare(card, logs[0].eval.model, values, data_of_logs(logs))))
    return 0


def cmd_list(args) -> int:
    cards = shipped_cards()
    width = max(len(c.id) for c in cards)
    for c in cards:
        models = ", ".join(r.model for r in c.results)
        print(f"{c.id.ljust(width)}  {c.paper}\n{''.ljust(width)}  {c.source}")
        print(f"{''.ljust(width)}  tasks: {'; '.join(task_label(n, a) for n, a in c.tasks)}; "
              f"metric: {c.metric}; paper n: {c.paper_n or 'not stated'}; models: {models}")
    return 0


def add_cli_commands(sub) -> None:
    p = sub.add_parser("reproduce", help="run a reproduction card: a paper's number beside ours (reproduce list)",
                       description="conflict-eval reproduce list | conflict-eval reproduce CARD --model M [--limit N]")
    p.add_argument("card", help="'list', a shipped card id, or a card file (.yaml)")
    p.add_argument("--model", help=f"any Inspect model (default {DEFAULT_MODEL})")
    p.add_argument("-M", dest="model_arg", action="append", default=[], metavar="NAME=VALUE", help="model argument")
    p.add_argument("-T", dest="task_arg", action="append", default=[], metavar="NAME=VALUE",
                   help="override a task argument of every task of the card, e.g. -T path=FILE")
    p.add_argument("--limit", type=int, help="samples per task (the verdict is then 'not comparable' unless n matches)")
    p.add_argument("--log-dir", default="logs")
    p.add_argument("--display", default="plain", choices=["full", "rich", "plain", "log", "none"])
    p.add_argument("--model-cost-config", help="Inspect model cost config (YAML/JSON) for the estimate's $")
    p.add_argument("--estimate-only", action="store_true", help="print the estimate and stop")
    p.set_defaults(fn=cmd_reproduce)
