"""The console-file swap of conflict_eval.runs.signals, checked against Inspect itself.

Inspect's ``eval_set`` ends with ``console.print("Completed all tasks in 'DIR'
successfully")`` on rich's global console whenever its display is on (only
``display="none"`` silences it, and with it the whole display); no log level,
option or environment variable turns that one line off. ``suite run`` judges a
suite from its logs and must not print that line after Ctrl-C, so
:class:`~conflict_eval.runs.signals.inspect_verdict_muted` routes rich's
console through a filter from Inspect's ``on_run_end`` hook. This test runs
Inspect's real ``eval_set`` and fails when Inspect changes what the swap
depends on: the line's wording, that it goes through rich's global console
after ``on_run_end``, or that the rest of the display still prints.

A subprocess: Inspect's display type and rich's console are process-wide.
"""

import os
import subprocess
import sys

from conflict_eval.runs.signals import _is_inspect_verdict

PROBE = """
import sys
import rich
from inspect_ai import Task, eval_set
from inspect_ai.dataset import Sample

from conflict_eval.runs.signals import _VerdictFilter, inspect_verdict_muted
from conflict_eval.testing import scripted_model


def run(log_dir, name):
    task = Task(dataset=[Sample(input="hi", target="hi")], name=name)
    return eval_set([task], log_dir=log_dir, model=scripted_model(["hi"]), display="plain")


run(sys.argv[1], "loud")
print("=== muted ===", flush=True)
with inspect_verdict_muted():
    run(sys.argv[2], "quiet")
print("=== restored", not isinstance(rich.get_console().file, _VerdictFilter), flush=True)
"""


def test_inspect_still_prints_the_line_the_swap_hides(tmp_path):
    loud, quiet = tmp_path / "loud", tmp_path / "quiet"
    done = subprocess.run([sys.executable, "-c", PROBE, str(loud), str(quiet)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stdout + done.stderr
    before, _, after = done.stdout.partition("=== muted ===")
    verdicts = [line for line in before.splitlines() if _is_inspect_verdict(line)]
    # Inspect prints its closing line, in the words the filter drops (else: revisit runs/signals.py)
    assert verdicts == [f"Completed all tasks in '{loud}' successfully"], before
    # muted: that line alone is gone; Inspect's display (task header, log path) still prints
    assert "Completed all tasks" not in after and "successfully" not in after, after
    assert "quiet (1 sample)" in after and "Log: " in after, after
    # and the console is given back afterwards
    assert "=== restored True" in after
