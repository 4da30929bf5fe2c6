"""`suite status` in `inspect ctl --log-dir`'s words (issue 45, item 4): a `started` log is
`running`; one whose log has not changed for 10 minutes (Inspect's _QUIET_SECONDS) is flagged as
a stopped eval process; errored samples have their own column."""

import time

from conflict_eval.runs.status import QUIET_SECONDS, TaskStatus, render_status, status_json


def test_a_quiet_running_log_is_flagged_as_inspect_ctl_flags_it():
    now = time.time()
    rows = [TaskStatus("m", "quiet", "started", 1, 4, updated_at=now - QUIET_SECONDS - 120),
            TaskStatus("m", "busy", "started", 2, 4, updated_at=now - 5),
            TaskStatus("m", "closed", "success", 3, 4, errors=1, updated_at=now - 4000)]
    table = render_status(rows)
    lines = {line.split()[-1]: line.split() for line in table.splitlines() if line.startswith("  ") and " m " in line}
    assert lines["quiet"][:3] == ["running", "1/4", "0"] and lines["busy"][:3] == ["running", "2/4", "0"]
    assert lines["closed"][:3] == ["partial", "3/4", "1"]  # a finished log is never "quiet"
    assert "m x quiet: running, but its log has not changed for 12 min " in table
    assert " s -- its eval process may have stopped" in table
    assert "m x busy: running" not in table and "m x closed" not in table
    quiet = {r["label"]: r["quiet_s"] for r in status_json(rows)}
    assert quiet["quiet"] >= QUIET_SECONDS + 120 and quiet["busy"] is None and quiet["closed"] is None


def test_the_threshold_is_inspects_own():
    """Read from the installed Inspect's source (its constant is private, so not imported): fails when
    Inspect changes the rule `suite status` copies."""
    import re
    from pathlib import Path

    import inspect_ai

    source = (Path(inspect_ai.__file__).parent / "_cli" / "ctl" / "_log_dir.py").read_text(encoding="utf-8")
    [expr] = re.findall(r"^_QUIET_SECONDS = ([0-9 *]+)$", source, flags=re.M)
    assert eval(expr, {}) == QUIET_SECONDS  # noqa: S307 -- digits and '*' only, matched above
