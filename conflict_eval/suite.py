"""Deprecated: use :mod:`conflict_eval.runs` (kept for one release).

Every public name of the old ``conflict_eval.suite`` module is re-exported
from its new home in ``conflict_eval.runs`` (commands: ``conflict_eval.cli``).
"""

import warnings

from conflict_eval.runs import *  # noqa: F401,F403
from conflict_eval.runs import __all__  # noqa: F401
from conflict_eval.cli import leaderboard as _leaderboard, run as _run, suite as _suite
from conflict_eval.cli.run import cmd_lmeval_path  # noqa: F401
from conflict_eval.cli.suite import cmd_suite_run, cmd_suite_show  # noqa: F401
from conflict_eval.runs.registered import provider_known as _provider_known  # noqa: F401
from conflict_eval.runs.spec import EVAL_KEYS, MODEL_KEYS, SUITE_KEYS, TASK_KEYS  # noqa: F401


def add_cli_commands(sub) -> None:
    """The ``suite``, ``leaderboard`` and ``lmeval-path`` subcommands (now in :mod:`conflict_eval.cli`)."""
    _suite.add_cli_commands(sub)
    _leaderboard.add_cli_commands(sub)
    _run.add_lmeval_command(sub)


warnings.warn("conflict_eval.suite is deprecated; import from conflict_eval.runs", DeprecationWarning, stacklevel=2)
