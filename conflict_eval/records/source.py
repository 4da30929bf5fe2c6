"""The code that ran: the git commit of the conflict-eval checkout this process
imported, recorded in every cell's task metadata (``conflict_eval_source``) and
on the leaderboard's provenance (``git_commit``).

Inspect records the checkout of the *working directory* (``eval.revision``);
a ``suite worker`` runs from its plan folder, where there is none, and a run
started from another repository would record that one. The package's own
folder says which code ran, wherever the command was started.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path
from typing import Any


def _git(folder: Path, *args: str) -> str | None:
    try:
        res = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() if res.returncode == 0 else None


def git_commit() -> str | None:
    """The commit of the conflict-eval checkout this process imported (None when
    it was installed from a package). The one git-commit reader of the core: the
    suite runner records it per cell, the leaderboard per page."""
    return source_info()["git_commit"]


@functools.lru_cache(maxsize=1)
def source_info() -> dict[str, Any]:
    """``{"git_commit": sha or None, "dirty": bool}`` of the checkout holding
    ``conflict_eval`` (None when it was installed from a package). ``dirty``:
    tracked files differ from the commit."""
    folder = Path(__file__).resolve().parent.parent  # conflict_eval/
    commit = _git(folder, "rev-parse", "HEAD") or None
    if commit is None:
        return {"git_commit": None, "dirty": False}
    status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    return {"git_commit": commit, "dirty": bool(status)}
