"""Deprecated: use :mod:`conflict_eval.runs` (kept for one release).

Every public name of the old ``conflict_eval.suite`` module is re-exported
from its new home in ``conflict_eval.runs``.
"""

import warnings

from conflict_eval.runs import *  # noqa: F401,F403
from conflict_eval.runs import __all__  # noqa: F401
from conflict_eval.runs.cli import (  # noqa: F401
    add_cli_commands,
    cmd_lmeval_path,
    cmd_suite_run,
    cmd_suite_show,
)
from conflict_eval.runs.registered import provider_known as _provider_known  # noqa: F401
from conflict_eval.runs.spec import EVAL_KEYS, MODEL_KEYS, SUITE_KEYS, TASK_KEYS  # noqa: F401

warnings.warn("conflict_eval.suite is deprecated; import from conflict_eval.runs", DeprecationWarning, stacklevel=2)
