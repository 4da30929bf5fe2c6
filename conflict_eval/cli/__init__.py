"""The command line: ``conflict-eval`` and its subcommands.

What belongs here: the parser and error handling (``main``), the one
``NAME=VALUE`` parser and flag defaults (``options``), and one module per
group of commands: ``run`` (list, run, score, lmeval-path), ``suite``,
``leaderboard``, ``reproduce`` and ``index``. A command does its work through the core
package it fronts (``runs``, ``report``, ``retrieval``, ``components``);
nothing in the core imports this package. A plugin adds its own commands
with an ``add_cli_commands(sub)`` function in its folder, grafted on in
:func:`conflict_eval.cli.main.build_parser`.

``conflict_eval.cli:main`` is the console script; note that the package
attribute ``main`` is that function, so reach the module itself with
``from conflict_eval.cli.main import ...``.
"""

from conflict_eval.cli.main import build_parser, main
from conflict_eval.cli.options import DEFAULT_MODEL
from conflict_eval.cli.run import cmd_list, cmd_run, cmd_score, score_rows

__all__ = ["DEFAULT_MODEL", "build_parser", "cmd_list", "cmd_run", "cmd_score", "main", "score_rows"]
