"""``conflict-eval list``, ``run``, ``score`` and ``lmeval-path``: the
components there are, one method on one dataset, a predictions file scored
with a metric, and where lm-evaluation-harness finds the exported tasks.

``run`` is a thin wrapper over ``inspect eval conflict_eval/run``; use
``inspect`` directly for everything else it offers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from conflict_eval.cli.options import DEFAULT_MODEL, env_default, parse_pairs, print_json


def cmd_list(args: argparse.Namespace) -> int:
    from conflict_eval.components.manager import KINDS, components

    found = components()
    if args.json:
        print_json(args,
            {kind: {n: {"plugin": c.plugin, "distribution": c.distribution, "origin": c.origin}
                    for n, c in found[kind].items()} for kind in KINDS},
            indent=2,
        )
        return 0
    for kind in KINDS:
        print(f"{kind}s:")
        width = max((len(n) for n in found[kind]), default=0)
        for name, c in found[kind].items():
            origin = c.plugin + (f" [{c.distribution}]" if c.distribution else "")
            if c.origin not in ("entry point", "built-in"):  # a file, module or run-time plugin: say where
                origin += f" ({c.origin})"
            print(f"  {name.ljust(width)}  from plugin {origin}")
        if not found[kind]:
            print("  (none)")
    return 0


def _results_table(log) -> str:
    rows = [("score", "metric", "value")]
    if log.results is not None:
        for score in log.results.scores:
            for metric in score.metrics.values():
                rows.append((score.name, metric.name, f"{metric.value:.4f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _newest_log(log_dir: str, since: float) -> str | None:
    """The newest log written to ``log_dir`` since ``since`` (the run's own)."""
    from inspect_ai.log import list_eval_logs

    found = [i for i in list_eval_logs(log_dir, recursive=False) if (i.mtime or 0) >= since - 1]
    return max(found, key=lambda i: i.mtime or 0).name if found else None


def cmd_run(args: argparse.Namespace) -> int:
    """``inspect eval conflict_eval/run`` in one command; honours Inspect's
    environment settings like ``inspect eval`` does: a ``.env`` file (searched
    upwards from the working directory), ``INSPECT_LOG_DIR``, ``INSPECT_EVAL_MODEL``,
    ``INSPECT_EVAL_MODEL_ARGS``, ``INSPECT_EVAL_LIMIT``, ``INSPECT_EVAL_MAX_TOKENS``,
    ``INSPECT_DISPLAY`` and whatever ``inspect_ai.eval`` itself reads
    (``INSPECT_LOG_LEVEL``, ``INSPECT_LOG_FORMAT``, ...). Flags win."""
    import time

    from dotenv import find_dotenv, load_dotenv
    from inspect_ai import eval as inspect_eval
    from inspect_ai.util import registry_create

    from conflict_eval.runs.signals import SigtermAsSigint

    dotenv_file = find_dotenv(usecwd=True)
    if dotenv_file:
        load_dotenv(dotenv_file, override=False)
    options = parse_pairs(args.task_arg, "-T")
    if args.path and "path" in options:
        raise ValueError("give the dataset file once: --path or -T path=, not both")
    path = args.path or options.pop("path", None)
    scorer = args.scorer or options.pop("scorer", None)
    # the registered task, not a bare composed Task: its log records
    # `conflict_eval/run` and the arguments, so `inspect eval-retry LOG` can rebuild it
    task = registry_create("task", "conflict_eval/run", method=args.method, dataset=args.dataset,
                           scorer=scorer, path=path, **options)
    model_args = parse_pairs(args.model_arg, "-M")
    # what the model is made with: -M, else INSPECT_EVAL_MODEL_ARGS (Inspect's own fallback)
    effective_args = model_args or parse_pairs(os.environ.get("INSPECT_EVAL_MODEL_ARGS", "").split(), "-M")
    model = env_default(args.model, "INSPECT_EVAL_MODEL") or DEFAULT_MODEL
    from inspect_ai import task_with
    from inspect_ai.model import get_model

    from conflict_eval.cli.model import ensure_offline_model
    from conflict_eval.components.endpoint import model_endpoint
    from conflict_eval.records.source import source_info
    from conflict_eval.runs.batching import generate_batch, parse_batch_flag

    batch = parse_batch_flag(args.batch)  # Inspect's GenerateConfig.batch, passed unchanged
    max_tokens = env_default(args.max_tokens, "INSPECT_EVAL_MAX_TOKENS", int)
    log_dir = args.log_dir or env_default(None, "INSPECT_LOG_DIR") or "logs"
    started = time.time()
    logs: list = []
    watch = None
    if batch is None:
        ensure_offline_model(model, effective_args)
    # The model is built here from -M, else INSPECT_EVAL_MODEL_ARGS, and handed to Inspect
    # made: given a model name and no model_args, Inspect reads that variable a second time
    # and, with base_url in it, called get_model with base_url twice (a TypeError).
    name, model = model, get_model(model, memoize=False, **effective_args)
    # the task was built before Inspect made the model (no active model to ask): record its
    # endpoint (a local model: its file and sha256) and the code that ran here
    task_with(task, metadata={**(task.metadata or {}), "conflict_eval_endpoint": {name: model_endpoint(model)},
                              "conflict_eval_source": source_info()})
    if batch is not None:  # so the batches it submits can be seen (runs.batch_stop)
        from conflict_eval.runs.batch_stop import BatchWatch

        watch = BatchWatch()
        watch.watch(name, model)
    with SigtermAsSigint() as term:
        try:
            logs = inspect_eval(
                task,
                model=model,
                limit=env_default(args.limit, "INSPECT_EVAL_LIMIT", int),
                log_dir=log_dir,
                **({"max_tokens": max_tokens} if max_tokens else {}),
                **({"batch": generate_batch(batch)} if batch is not None else {}),
                display=env_default(args.display, "INSPECT_DISPLAY") or "plain",
            )
        except KeyboardInterrupt:
            logs = []
        except Exception:  # noqa: BLE001 -- Inspect's batcher raises a refused batch creation out of eval
            if watch is None or not watch.refused:
                raise
            watch.say_refused()  # one line: the provider's status and what to do
            watch.settle(log_dir, False)
            return 1
        if watch is not None:
            watch.settle(log_dir, not logs or logs[0].status == "cancelled")
    if not logs or logs[0].status == "cancelled":
        location = logs[0].location if logs else _newest_log(log_dir, started)
        location = location.removeprefix("file://") if location else None
        print(f"interrupted ({term.received or 'SIGINT'})", file=sys.stderr)
        if location:
            print(f"log: {location}", file=sys.stderr)
            print(f"resume: inspect eval-retry {location}", file=sys.stderr)
        return 143 if term.received == "SIGTERM" else 130
    log = logs[0]
    print()
    print(f"task: {task.name}   model: {log.eval.model}   status: {log.status}")
    if log.results is not None:
        print(f"samples: {log.results.completed_samples}/{log.results.total_samples}")
    print(_results_table(log))
    print(f"log: {log.location}")
    location = str(log.location)
    print("view: inspect view --log-dir", location.rsplit("/", 1)[0] if "/" in location else ".")
    if log.status != "success":
        if log.error is not None:
            print(f"error: {log.error.message}", file=sys.stderr)
        return 1
    return 0


def _read_predictions(path: Path, pred_field: str, gold_field: str) -> list[dict[str, Any]]:
    from conflict_eval.records import read_jsonl

    rows, problems = [], []
    for where, row in read_jsonl(path):  # the loaders' reader: BOM, CRLF, blank lines
        if isinstance(row, BaseException):
            problems.append(f"{where}: invalid JSON ({getattr(row, 'msg', None) or row})")
            continue
        for field in (pred_field, gold_field):
            if not isinstance(row, dict) or field not in row:
                problems.append(f"{where}: field {field!r} is missing")
        if isinstance(row, dict) and not isinstance(row.get(pred_field, ""), str):
            problems.append(f"{where}: field {pred_field!r} must be a string")
        rows.append(row)
    if problems:
        raise SystemExit(f"error: {len(problems)} problem(s) in {path}:\n  " + "\n  ".join(problems))
    return rows


async def score_rows(metric: str, rows: list[dict[str, Any]], pred_field: str,
                     gold_field: str, options: dict[str, Any]):
    """Score prediction rows with a registered metric, without a model.

    Each row becomes a finished Inspect ``TaskState`` whose output is the
    prediction text; ``gold`` (a string or list of strings) is the target;
    ``choices`` and other keys of the row are kept as metadata.
    """
    from inspect_ai.model import ModelName, ModelOutput
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState

    from conflict_eval.components.manager import get_metric

    from conflict_eval.components.compose import route_options

    component = get_metric(metric)
    options = route_options({"metric": component}, options)["metric"]  # unknown options: an error naming the scorer
    scorer = component.factory(**options)
    results = []
    for i, row in enumerate(rows):
        choices = row.get("choices") or row.get("options")
        state = TaskState(
            model=ModelName("none/predictions-file"),
            sample_id=row.get("id", i),
            epoch=1,
            input=str(row.get("question", "")),
            messages=[],
            target=Target(row[gold_field]),
            choices=choices,
            output=ModelOutput.from_content("predictions-file", row[pred_field]),
            metadata={k: v for k, v in row.items() if k not in (pred_field, gold_field)},
        )
        results.append(await scorer(state, Target(row[gold_field])))
    return results


def _summarise(scores) -> dict[str, float]:
    totals: dict[str, list[float]] = {}
    for s in scores:
        value = s.value if isinstance(s.value, dict) else {"value": s.value}
        for key, v in value.items():
            if isinstance(v, bool | int | float):
                totals.setdefault(key, []).append(float(v))
    return {k: sum(v) / len(v) for k, v in totals.items()}


def cmd_score(args: argparse.Namespace) -> int:
    path = Path(args.predictions)
    if not path.is_file():
        raise SystemExit(f"error: no such file {path}")
    rows = _read_predictions(path, args.pred_field, args.gold_field)
    if not rows:
        raise SystemExit(f"error: {path} has no predictions")
    options = parse_pairs(args.option, "-T")
    scores = asyncio.run(score_rows(args.metric, rows, args.pred_field, args.gold_field, options))
    summary = _summarise(scores)
    if args.json:
        print_json(args, {"metric": args.metric, "n": len(scores), **summary})
    else:
        print(f"{args.metric} on {len(scores)} predictions from {path}")
        for key, value in summary.items():
            print(f"  {key}: {value:.4f}")
    return 0


def cmd_lmeval_path(args) -> int:
    from conflict_eval.lmeval import task_dir

    print(task_dir())
    return 0


def add_cli_commands(sub) -> None:
    """Register ``list``, ``run`` and ``score``."""
    p = sub.add_parser("list", help="list methods, datasets and metrics with their plugins")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(fn=cmd_list)

    p = sub.add_parser("run", help="run a method on a dataset (defaults: offline model, demo data)")
    p.add_argument("--method", default="end_to_end")
    p.add_argument("--dataset", default="demo")
    p.add_argument("--scorer", action="append", help="metric name (repeatable); default by dataset")
    p.add_argument("--path", help="local dataset file in the upstream format")
    p.add_argument("--model", help=f"any Inspect model (default: INSPECT_EVAL_MODEL, else {DEFAULT_MODEL})")
    p.add_argument("-M", dest="model_arg", action="append", default=[], metavar="NAME=VALUE",
                   help="model argument")
    p.add_argument("-T", dest="task_arg", action="append", default=[], metavar="NAME=VALUE",
                   help="option for the method, dataset or scorer")
    p.add_argument("--limit", type=int, help="number of samples (default: INSPECT_EVAL_LIMIT, else all)")
    p.add_argument("--max-tokens", type=int, help="new tokens per model call (default: INSPECT_EVAL_MAX_TOKENS, else 512)")
    p.add_argument("--log-dir", help="log directory (default: INSPECT_LOG_DIR, else ./logs)")
    p.add_argument("--batch", nargs="?", const="true", metavar="SIZE|FILE",
                   help="send the calls through the provider's batch API (Inspect's --batch: bare, a batch size, "
                        "or a YAML/JSON file of BatchConfig fields); about half price, answers within 24 h")
    p.add_argument("--display", choices=["full", "rich", "plain", "log", "none"],
                   help="default: INSPECT_DISPLAY, else plain")
    p.set_defaults(fn=cmd_run)

    p = sub.add_parser("score", help="score a predictions file (JSONL) with a metric")
    p.add_argument("predictions", help="JSONL rows with the prediction and gold fields")
    p.add_argument("--metric", required=True)
    p.add_argument("--pred-field", default="predicted")
    p.add_argument("--gold-field", default="gold")
    p.add_argument("-T", dest="option", action="append", default=[], metavar="NAME=VALUE",
                   help="metric option, e.g. -T normalizer=atomr_authors (the same flag as run)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_score)


def add_lmeval_command(sub) -> None:
    """Register ``lmeval-path``."""
    p = sub.add_parser("lmeval-path", help="print the directory to pass to lm_eval --include_path")
    p.set_defaults(fn=cmd_lmeval_path)
