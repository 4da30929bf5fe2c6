"""The ``conflict-eval`` command line: the parser, with every command grafted
on from its module, and :func:`main` (errors, exit codes, ``--debug``).

    conflict-eval list                       # methods, datasets, metrics and their plugins
    conflict-eval run                        # end_to_end on demo with the offline model
    conflict-eval run --method end_to_end --dataset demo --model openai/gpt-4o -T conflict_type=temporal
    conflict-eval score --metric token_f1 preds.jsonl
    conflict-eval reproduce list             # reproduction cards: a paper's number beside ours
    conflict-eval compare LOGS_A LOGS_B      # paired difference, intervals, exact test (any Inspect logs)
    conflict-eval model fetch                # the offline model's GGUF, fetched once for offline use
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from collections.abc import Sequence

from conflict_eval.cli.compare import add_cli_commands as add_compare
from conflict_eval.cli.index import add_cli_commands as add_index
from conflict_eval.cli.leaderboard import add_cli_commands as add_leaderboard
from conflict_eval.cli.model import add_cli_commands as add_model
from conflict_eval.cli.reproduce import add_cli_commands as add_reproduce
from conflict_eval.cli.run import add_cli_commands as add_run, add_lmeval_command
from conflict_eval.cli.suite import add_cli_commands as add_suite


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="conflict-eval", description="The ``conflict-eval`` command line.",
                                     epilog="Exit codes: 0 success, 1 the eval did not succeed or an "
                                            "internal error, 2 bad option, file or record.")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error (default: a short message)")
    parser.add_argument("--plugin", action="append", default=[], metavar="PATH_OR_MODULE",
                        help="load plugins from a .py file, package directory or module name (repeatable); "
                             "CONFLICT_EVAL_PLUGINS does the same for every process, including inspect eval")
    sub = parser.add_subparsers(dest="command", required=True)

    add_run(sub)  # list, run, score
    add_suite(sub)  # suite run/show/status/estimate
    add_leaderboard(sub)  # leaderboard
    add_compare(sub)  # compare A B (paired, any Inspect logs)
    add_lmeval_command(sub)  # lmeval-path

    add_reproduce(sub)  # reproduce list / reproduce CARD

    add_index(sub)  # index build / info
    add_model(sub)  # model fetch / path

    from conflict_eval.components.manager import add_plugin_commands

    # the units' own commands, through the plugin hook (built-ins: build-polluted-kb,
    # user-needs generate / prescreen / curves, atomr check-trees; third-party plugins too)
    add_plugin_commands(sub)
    return parser


def _load_plugin_flags(argv: list[str]) -> None:
    """``--plugin`` sources, loaded next to the entry-point plugins before the parser is
    built, so that their commands (hook ``conflict_eval_add_cli_commands``) are on it."""
    from conflict_eval.components.manager import add_plugin_source

    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--plugin", action="append", default=[])
    for spec in pre.parse_known_args(argv)[0].plugin:
        add_plugin_source(spec)


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors in what the user gave (options, parts, files, records): a short message, exit 2."""
    from conflict_eval.records.download import DownloadError
    from conflict_eval.components.manager import PluginError, UnknownComponentError
    from conflict_eval.records import DatasetError

    return (UnknownComponentError, PluginError, DatasetError, DownloadError, ValueError,
            FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)


def _model_args(args: argparse.Namespace) -> dict:
    """The ``-M`` arguments of the command line, if it takes them."""
    from conflict_eval.cli.options import parse_pairs

    try:
        return parse_pairs(getattr(args, "model_arg", None) or [], "-M")
    except ValueError:
        return {}


def _take_back_sigint() -> None:
    """Handle SIGINT even when it was inherited as ignored.

    A process started in the background by a shell without job control (``nohup
    conflict-eval suite run ... &``, a CI script) starts with SIGINT ignored, so
    Python never installs its KeyboardInterrupt handler. Ctrl-C, ``kill -INT`` and
    the suite budget's stop (which cancels the run with SIGINT, as Ctrl-C does)
    then do nothing, and a run stopped by its budget waits forever. Only an
    ignored SIGINT is replaced; a handler someone installed is kept."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line. Errors in options, files and records print
    ``error: ...`` on stderr and return 2; any other exception prints a
    one-line report and returns 1. ``--debug`` (anywhere on the line) shows
    the traceback instead."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _take_back_sigint()
    debug = "--debug" in argv
    if debug:  # accepted after the subcommand too
        argv = [a for a in argv if a != "--debug"]
    args = argparse.Namespace()
    try:
        _load_plugin_flags(argv)
        args = build_parser().parse_args(argv)
        if getattr(args, "json", False):  # stdout carries the JSON alone (Inspect's banner goes to stderr)
            args.json_out = sys.stdout
            with contextlib.redirect_stdout(sys.stderr):
                return args.fn(args)
        return args.fn(args)
    except SystemExit as exc:
        if isinstance(exc.code, str):  # raise SystemExit("error: ...") in a command
            if debug:
                raise
            print(exc.code, file=sys.stderr)
            return 2
        raise
    except BrokenPipeError:  # `conflict-eval ... | head`: the reader left; nothing to report
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        if debug:
            raise
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 -- classified below, re-raised with --debug
        if debug:
            raise
        from conflict_eval.cli.errors import explain, plain

        from conflict_eval.records.errors import argument_error
        from conflict_eval.runs.arguments import render

        from conflict_eval.runs.spec import model_arg_problem

        model = getattr(args, "model", None) or "the model"
        if (bad := model_arg_problem(exc, ", ".join(model) if isinstance(model, list) else model,
                                     _model_args(args))) is not None:
            print(f"error: {bad}", file=sys.stderr)
            return 2
        known = explain(exc)
        if known is not None:
            print(f"error: {known[0]}", file=sys.stderr)
            return known[1]
        if (needed := argument_error(exc)) is not None:  # told as the command takes the argument
            print(f"error: {plain(render(needed, getattr(args, 'data_context', 'task')))}", file=sys.stderr)
            return 2
        if isinstance(exc, _user_errors()):
            print(f"error: {plain(str(exc))}", file=sys.stderr)
            return 2
        print(f"error: {type(exc).__name__}: {plain(str(exc))}\n(an internal error; rerun with --debug for the "
              "traceback and report it)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
