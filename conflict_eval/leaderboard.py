"""Deprecated: use :mod:`conflict_eval.report` (kept importable for one release).

Every name this module had is re-exported from the ``report`` subpackage.
"""

import warnings

from conflict_eval.report import *  # noqa: F401,F403
from conflict_eval.report import __all__  # noqa: F401
from conflict_eval.report.build import write_leaderboard  # noqa: F401
from conflict_eval.report.format import slug as _slug  # noqa: F401
from conflict_eval.report.grouping import canonical_task_name  # noqa: F401
from conflict_eval.report.logs import PARSE_KEY  # noqa: F401

warnings.warn("conflict_eval.leaderboard is deprecated; import from conflict_eval.report",
              DeprecationWarning, stacklevel=2)
