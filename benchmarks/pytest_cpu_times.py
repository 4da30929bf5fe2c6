"""A pytest plugin: CPU seconds per test (this process, all its threads, and the
subprocesses it waited for), for ranking tests on a machine too loaded for wall
times to mean much (CPU time is close to what the test costs on quiet cores).

    PYTHONPATH=benchmarks python -m pytest -p pytest_cpu_times [--cpu-times-out FILE]

Prints the 25 costliest files at the end; ``--cpu-times-out`` writes every
test's ``cpu_s`` and ``wall_s`` (setup, call and teardown) as JSON lines. Works
under pytest-xdist (``-n``): each worker measures its own tests and the figures
travel to the controller with the test's teardown report. Used for
``benchmarks/results/test_suite_time.md``.
"""

from __future__ import annotations

import json
import resource
import time
from collections import Counter

import pytest

_rows: list[dict] = []
_start: dict[str, tuple[float, float]] = {}


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def pytest_addoption(parser):
    parser.addoption("--cpu-times-out", default=None, help="write per-test CPU and wall seconds (JSON lines)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid, location):
    _start[nodeid] = (_cpu(), time.monotonic())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "teardown" and item.nodeid in _start:
        cpu, wall = _start.pop(item.nodeid)
        report.user_properties.append(("cpu_times", (round(_cpu() - cpu, 3), round(time.monotonic() - wall, 3))))


def pytest_runtest_logreport(report):
    """Runs in the process that reports (the controller under xdist)."""
    if report.when != "teardown":
        return
    for key, value in report.user_properties:
        if key == "cpu_times":
            row = {"test": report.nodeid, "cpu_s": value[0], "wall_s": value[1]}
            worker = getattr(report, "node", None)
            if worker is not None:
                row["worker"] = worker.gateway.id
            _rows.append(row)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    per_file: Counter = Counter()
    for row in _rows:
        per_file[row["test"].split("::")[0]] += row["cpu_s"]
    terminalreporter.section("CPU seconds per file (top 25)")
    terminalreporter.write_line(f"total {sum(per_file.values()):.1f} s CPU over {len(_rows)} tests")
    for name, cpu in per_file.most_common(25):
        terminalreporter.write_line(f"{cpu:8.1f}  {name}")
    out = config.getoption("--cpu-times-out")
    if out:
        with open(out, "w", encoding="utf-8") as handle:
            for row in _rows:
                handle.write(json.dumps(row) + "\n")
