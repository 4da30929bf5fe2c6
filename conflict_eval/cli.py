"""The ``conflict-eval`` command line.

    conflict-eval list                       # methods, datasets, metrics and their plugins
    conflict-eval run                        # end_to_end on demo with the offline model
    conflict-eval run --method end_to_end --dataset demo --model openai/gpt-4o -T conflict_type=temporal
    conflict-eval score --metric token_f1 preds.jsonl
    conflict-eval reproduce list             # reproduction cards: a paper's number beside ours

``run`` is a thin wrapper over ``inspect eval conflict_eval/run``; use
``inspect`` directly for everything else it offers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "conflict_eval/smollm2"


def _parse_task_args(pairs: Sequence[str]) -> dict[str, Any]:
    import yaml

    options: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise SystemExit(f"error: -T expects name=value, got {pair!r}")
        key, value = pair.split("=", 1)
        options[key.strip()] = yaml.safe_load(value) if value else value
    return options


def cmd_list(args: argparse.Namespace) -> int:
    from conflict_eval.components.manager import KINDS, components

    found = components()
    if args.json:
        print(json.dumps(
            {kind: {n: {"plugin": c.plugin, "distribution": c.distribution, "origin": c.origin}
                    for n, c in found[kind].items()} for kind in KINDS},
            indent=2,
        ))
        return 0
    for kind in KINDS:
        print(f"{kind}s:")
        width = max((len(n) for n in found[kind]), default=0)
        for name, c in found[kind].items():
            origin = c.plugin + (f" [{c.distribution}]" if c.distribution else "")
            if c.origin != "entry point":  # a file, module or run-time plugin: say where it came from
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


def _env_default(value: Any, var: str, convert=str) -> Any:
    """A flag's value, else Inspect's environment variable for it (as ``inspect eval`` does)."""
    import os

    if value is not None:
        return value
    raw = os.environ.get(var)
    if raw is None or not raw.strip():
        return None
    try:
        return convert(raw.strip())
    except ValueError:
        raise ValueError(f"environment variable {var}={raw!r} is not a valid value") from None


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
    options = _parse_task_args(args.task_arg)
    if args.path and "path" in options:
        raise ValueError("give the dataset file once: --path or -T path=, not both")
    path = args.path or options.pop("path", None)
    scorer = args.scorer or options.pop("scorer", None)
    # the registered task, not a bare composed Task: its log records
    # `conflict_eval/run` and the arguments, so `inspect eval-retry LOG` can rebuild it
    task = registry_create("task", "conflict_eval/run", method=args.method, dataset=args.dataset,
                           scorer=scorer, path=path, **options)
    model_args = _parse_task_args(args.model_arg)
    max_tokens = _env_default(args.max_tokens, "INSPECT_EVAL_MAX_TOKENS", int)
    log_dir = args.log_dir or _env_default(None, "INSPECT_LOG_DIR") or "logs"
    started = time.time()
    logs: list = []
    with SigtermAsSigint() as term:
        try:
            logs = inspect_eval(
                task,
                model=_env_default(args.model, "INSPECT_EVAL_MODEL") or DEFAULT_MODEL,
                model_args=model_args,  # empty: inspect_ai.eval reads INSPECT_EVAL_MODEL_ARGS
                limit=_env_default(args.limit, "INSPECT_EVAL_LIMIT", int),
                log_dir=log_dir,
                **({"max_tokens": max_tokens} if max_tokens else {}),
                display=_env_default(args.display, "INSPECT_DISPLAY") or "plain",
            )
        except KeyboardInterrupt:
            logs = []
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
    options = _parse_task_args(args.option)
    scores = asyncio.run(score_rows(args.metric, rows, args.pred_field, args.gold_field, options))
    summary = _summarise(scores)
    if args.json:
        print(json.dumps({"metric": args.metric, "n": len(scores), **summary}))
    else:
        print(f"{args.metric} on {len(scores)} predictions from {path}")
        for key, value in summary.items():
            print(f"  {key}: {value:.4f}")
    return 0


def cmd_build_polluted_kb(args: argparse.Namespace) -> int:
    """Build a polluted HotpotQA knowledge base (Conflict Exposure §4.2-4.4, Figure 3)."""
    from conflict_eval.plugins.polluted_kb.build import build_polluted_kb, default_source
    from conflict_eval.plugins.polluted_kb.kb import save_kb

    types = tuple(t.strip() for t in args.types.split(",")) if args.types != "all" else ("I", "II", "III")
    source = Path(args.source) if args.source else default_source()
    if not source.is_file():
        raise SystemExit(f"error: no such file {source}")
    kb = build_polluted_kb(source, args.model, types=types, limit=args.limit, shuffle=args.shuffle,
                           seed=args.seed, prescreen=args.prescreen, k=args.k, retriever=args.retriever,
                           corpus=args.corpus)
    save_kb(kb, args.out)
    from conflict_eval.plugins.polluted_kb.build import build_report

    r = build_report(kb)
    print(f"{args.out}: {r['clean_documents']} clean + {r['injected_documents']} injected documents, "
          f"{r['questions']} questions ({r['questions'] - r['with_target']} without a misinformation target)")
    if kb.meta.corpus:
        c = kb.meta.corpus
        print(f"clean corpus from {c['kind']} {c['name']} ({c['passages']} passages); supporting paragraphs "
              f"found by text {c['supporting_by_text']}, by title {c['supporting_by_title']}, "
              f"added {c['supporting_added']}")
    print("targets rejected as too close to the gold answer: "
          + ", ".join(f"{n} {why} it" for why, n in r["target_rejected"].items())
          + f"; other target failures: {r['target_failed']}"
          + (f" ({', '.join(f'{n} {why}' for why, n in r['target_failed_reasons'].items())})"
             if r["target_failed_reasons"] else ""))
    if args.prescreen:
        print(f"pre-screening kept {sum(1 for q in kb.questions if q.prescreen and q.prescreen.kept)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="conflict-eval", description=__doc__.split("\n\n")[0],
                                     epilog="Exit codes: 0 success, 1 the eval did not succeed or an "
                                            "internal error, 2 bad option, file or record.")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error (default: a short message)")
    parser.add_argument("--plugin", action="append", default=[], metavar="PATH_OR_MODULE",
                        help="load plugins from a .py file, package directory or module name (repeatable); "
                             "CONFLICT_EVAL_PLUGINS does the same for every process, including inspect eval")
    sub = parser.add_subparsers(dest="command", required=True)

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
    p.add_argument("--display", choices=["full", "rich", "plain", "log", "none"],
                   help="default: INSPECT_DISPLAY, else plain")
    p.set_defaults(fn=cmd_run)

    p = sub.add_parser("score", help="score a predictions file (JSONL) with a metric")
    p.add_argument("predictions", help="JSONL rows with the prediction and gold fields")
    p.add_argument("--metric", required=True)
    p.add_argument("--pred-field", default="predicted")
    p.add_argument("--gold-field", default="gold")
    p.add_argument("-T", "-O", dest="option", action="append", default=[], metavar="NAME=VALUE",
                   help="metric option, e.g. -T normalizer=atomr (the same flag as run; -O is the old alias)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_score)

    p = sub.add_parser("build-polluted-kb",
                       help="build a polluted HotpotQA knowledge base (Conflict Exposure, Figure 3)")
    p.add_argument("--source", help="HotpotQA JSONL in IRCoT format (default: pinned upstream download)")
    p.add_argument("--model", default=DEFAULT_MODEL, help="model that writes the misinformation")
    p.add_argument("--types", default="all", help="pollution types: all, or a comma list of I,II,III")
    p.add_argument("--limit", type=int, help="number of questions to pollute")
    p.add_argument("--shuffle", action="store_true", help="pick the questions after a seeded shuffle")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--prescreen", action="store_true", help="§4.2 pre-screening on the clean corpus")
    p.add_argument("--k", type=int, default=5, help="documents retrieved when pre-screening")
    p.add_argument("--retriever", default="dense", choices=["dense", "bm25"])
    p.add_argument("--corpus", help="clean corpus: an index directory from `conflict-eval index build` or a "
                                    "corpus file it reads (e.g. BEIR HotpotQA corpus.jsonl, as in §4.2); "
                                    "default: pool the source's own paragraphs")
    p.add_argument("--out", required=True, help="KB file to write (JSON)")
    p.set_defaults(fn=cmd_build_polluted_kb)

    from conflict_eval.plugins.user_needs.cli import add_cli_commands as add_user_needs

    add_user_needs(sub)  # user-needs generate / prescreen / curves

    from conflict_eval.plugins.atomr.cli import add_cli_commands as add_atomr

    add_atomr(sub)  # atomr check-trees

    from conflict_eval.runs.cli import add_cli_commands  # suite run/show/status/estimate, leaderboard, lmeval-path

    add_cli_commands(sub)

    from conflict_eval.runs.reproduce import add_cli_commands as add_reproduce

    add_reproduce(sub)  # reproduce list / reproduce CARD

    from conflict_eval.index_cli import add_cli_commands as add_index

    add_index(sub)  # index build / info
    return parser


def _load_plugin_flags(args: argparse.Namespace) -> None:
    """``--plugin`` sources, loaded next to the entry-point plugins."""
    from conflict_eval.components.manager import add_plugin_source

    for spec in getattr(args, "plugin", None) or []:
        add_plugin_source(spec)


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors in what the user gave (options, parts, files, records): a short message, exit 2."""
    from conflict_eval.records.download import DownloadError
    from conflict_eval.components.manager import PluginError, UnknownComponentError
    from conflict_eval.records import DatasetError

    return (UnknownComponentError, PluginError, DatasetError, DownloadError, ValueError,
            FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line. Errors in options, files and records print
    ``error: ...`` on stderr and return 2; any other exception prints a
    one-line report and returns 1. ``--debug`` (anywhere on the line) shows
    the traceback instead."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    if debug:  # accepted after the subcommand too
        argv = [a for a in argv if a != "--debug"]
    args = build_parser().parse_args(argv)
    try:
        _load_plugin_flags(args)
        return args.fn(args)
    except SystemExit as exc:
        if isinstance(exc.code, str):  # raise SystemExit("error: ...") in a command
            if debug:
                raise
            print(exc.code, file=sys.stderr)
            return 2
        raise
    except KeyboardInterrupt:
        if debug:
            raise
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 -- classified below, re-raised with --debug
        if debug:
            raise
        if isinstance(exc, _user_errors()):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"error: {type(exc).__name__}: {exc}\n(an internal error; rerun with --debug for the "
              "traceback and report it)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
