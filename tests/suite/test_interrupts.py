"""Suites interrupted for real (a subprocess, a scripted model that holds its
4th reply until the test has sent its signal): SIGINT, SIGTERM, SIGKILL and a
budget stop each leave an incomplete suite that says so, and the same command
resumes it with every sample exactly once.

One interrupted process per signal, and every check of that signal is made on
it: the SIGINT run (``--display plain``) is also the one whose cancelled sample
the leaderboard counts and whose display must not print Inspect's success line;
the SIGTERM run (``--display rich``, turned into SIGINT inside the process) checks
the same on rich's display. The resumes run in the test process (the signal was
the subprocess's part; prices a cost config gives Inspect end with the test,
tests/conftest.py)."""

import json
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

from inspect_ai.log import list_eval_logs, read_eval_log

from conflict_eval.cli import main
from conflict_eval.runs.status import task_statuses

SUITE = """name: slow
models:
  - model: scripted/x
    args: {hold: "HOLD", hold_after: 3, reply: "B</a>"}
    max_connections: 1
defaults: {config: {max_tokens: 16}, limit: 8}
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo, conflict_type: temporal}
eval: {max_tasks: 1, max_samples: 1}
"""
EXPECTED = {"end_to_end/demo": 8, "end_to_end/demo(conflict_type=temporal)": 5}  # demo: 5 temporal items


def _says_complete(text: str) -> bool:
    """The word "complete" on its own, as a success verdict says it. Not a plain substring
    test: "INCOMPLETE", "incomplete" and the --allow-incomplete flag that the leaderboard
    command printed for an unfinished suite must name all contain it."""
    return re.search(r"\bcomplete\b", text) is not None


def _args(suite: Path, log_dir: Path, *extra: str) -> list[str]:
    return ["suite", "run", str(suite), "--log-dir", str(log_dir), "--display", "none", *extra]


def _cmd(suite: Path, log_dir: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "conflict_eval.cli", *_args(suite, log_dir, *extra)]


def _interrupt(cmd: list[str], log_dir: Path, sig, signal_when_held) -> subprocess.CompletedProcess:
    """Run ``cmd``; once 3 samples are done and the 4th is waiting on the model, send ``sig``."""
    return signal_when_held(cmd, log_dir.parent / "hold", sig)


def _assert_no_inspect_success_line(res: subprocess.CompletedProcess) -> None:
    """Inspect's eval_set ends an interrupted run with "Completed all tasks in
    '...' successfully"; with a display on, that line must not reach the
    terminal above the INCOMPLETE verdict."""
    out = res.stdout + res.stderr
    assert "successfully" not in out and "Completed all tasks" not in out
    assert "Task interrupted" in out  # Inspect's display did print (the filter drops only that line)


def _suite(tmp_path) -> Path:
    path = tmp_path / "slow.yaml"
    (tmp_path / "hold").mkdir()
    path.write_text(SUITE.replace("HOLD", (tmp_path / "hold").as_posix()))
    return path


def _release(tmp_path) -> None:
    """Let the scripted model answer every call from now on (the resuming run)."""
    (tmp_path / "hold" / "release").touch()


def _assert_exactly_once(log_dir: Path) -> None:
    """The log each task is judged by holds every sample once, scored; no other
    successful log of the task exists beside it."""
    statuses = task_statuses(log_dir)
    assert {s.label: (s.done, s.total) for s in statuses} == {k: (n, n) for k, n in EXPECTED.items()}
    for s in statuses:
        ids = [x.id for x in read_eval_log(s.log).samples]
        assert len(ids) == len(set(ids)) == EXPECTED[s.label]
    successes = [read_eval_log(i, header_only=True) for i in list_eval_logs(str(log_dir))]
    assert sum(1 for h in successes if h.status == "success") == len(EXPECTED)


def _assert_resumes(capsys, tmp_path, suite, log_dir, *extra):
    """The same command resumes (in this process: the signal handling was the
    subprocess's part; a cost config's prices, process-wide in Inspect, end with
    the test: tests/conftest.py)."""
    _release(tmp_path)
    capsys.readouterr()
    code = main(_args(suite, log_dir, *extra))
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "suite slow: 2 task run(s), complete" in out
    _assert_exactly_once(log_dir)


def test_sigint_lists_unfinished_tasks_then_resumes(tmp_path, capsys, signal_when_held):
    suite, log_dir = _suite(tmp_path), tmp_path / "logs"
    res = _interrupt(_cmd(suite, log_dir, "--display", "plain"), log_dir, signal.SIGINT, signal_when_held)
    assert res.returncode == 130, res.stdout + res.stderr
    assert not _says_complete(res.stdout)  # neither "complete" nor a success verdict
    assert "INCOMPLETE, interrupted (SIGINT)" in res.stdout
    verdict = res.stdout[res.stdout.index("suite slow:"):]  # the table below the verdict (not Inspect's display)
    lines = {line.split()[-1]: line for line in verdict.splitlines() if "scripted/x" in line}
    assert "cancelled" in lines["end_to_end/demo"] and "/8" in lines["end_to_end/demo"]
    assert "0/5" in lines["end_to_end/demo(conflict_type=temporal)"]  # never started, total known
    _assert_no_inspect_success_line(res)  # on Inspect's plain display
    _assert_cancelled_samples_are_not_errors(tmp_path, log_dir)
    # `suite status` prints the same verdict without running anything
    capsys.readouterr()
    status = main(["suite", "status", str(log_dir), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert status == 1 and data["complete"] is False
    assert {t["label"]: t["status"] for t in data["tasks"]}["end_to_end/demo"] == "cancelled"
    assert data["stop"]["conflict_eval_stop_reason"] == "SIGINT"
    # the task that never started has the total `suite run` showed (the suite's record), in both forms
    assert {t["label"]: t["total"] for t in data["tasks"]}["end_to_end/demo(conflict_type=temporal)"] == 5
    main(["suite", "status", str(log_dir)])
    assert re.search(r"not started\s+0/5\s", capsys.readouterr().out)
    # the table command it printed works on the unfinished suite and shows that cell as not started
    hint = next(line for line in res.stdout.splitlines() if line.startswith("table"))
    cmd = shlex.split(hint.split(": ", 1)[1])
    assert cmd[:2] == ["conflict-eval", "leaderboard"] and "--allow-incomplete" in cmd
    assert main([*cmd[1:], "--out", str(tmp_path / "board"), "--bootstrap", "0"]) == 0
    assert "not started 0/5" in (tmp_path / "board" / "leaderboard.md").read_text()
    _assert_resumes(capsys, tmp_path, suite, log_dir)
    assert main(["suite", "status", str(log_dir)]) == 0


def _assert_cancelled_samples_are_not_errors(tmp_path, log_dir):
    """A sample cut off by Ctrl-C (Inspect records ``CancelledError`` in the
    cancelled log) is counted as cancelled, not as an error of the model."""
    from conflict_eval.report import build_leaderboard

    [log] = [read_eval_log(i) for i in list_eval_logs(str(log_dir))]
    assert log.status == "cancelled"
    cut = [s.id for s in log.samples if s.error is not None and s.error.message.startswith("CancelledError")]
    assert len(cut) >= 1  # one sample runs at a time: the held one was in flight
    row, never = build_leaderboard([log_dir], None, allow_incomplete=True, bootstrap=0)["rows"]
    assert row.task == "end_to_end/demo" and row.cancelled == len(cut) and row.errors == 0
    # the second task never started: a cell of its own, not hidden (its manifest entry, no log)
    assert never.status.describe() == "not started, 0/5 samples" and never.calls is None
    statuses = task_statuses(log_dir)  # `suite run`'s and `suite status`'s table: no error either
    assert any(s.status == "cancelled" for s in statuses) and all(s.errors == 0 for s in statuses)
    out = tmp_path / "board"
    main(["leaderboard", str(log_dir), "--out", str(out), "--allow-incomplete", "--bootstrap", "0"])
    md = (out / "leaderboard.md").read_text()
    assert "| errors | cancelled |" in md and f"| 0 | {len(cut)} |" in md
    assert "<th>errors</th><th>cancelled</th>" in (out / "leaderboard.html").read_text()
    assert json.loads((out / "leaderboard.json").read_text())["rows"][0]["cancelled"] == len(cut)


def test_the_filter_drops_only_inspects_success_line():
    """The console filter drops Inspect's success line, however rich wrapped it, and nothing else."""
    from conflict_eval.runs.signals import _is_inspect_verdict

    assert _is_inspect_verdict("Completed all tasks in 'logs/x' successfully\n")
    assert _is_inspect_verdict("\x1b[1;34mCompleted all tasks in\n'/a/very/long/log/dir'\nsuccessfully\x1b[0m\n")
    assert not _is_inspect_verdict("Did not successfully complete all tasks in 'logs/x'.\n")
    assert not _is_inspect_verdict("Completed all tasks in 'logs/x' successfully\nsomething else\n")


def test_the_filter_drops_only_a_banner_of_our_own_hooks():
    from conflict_eval.runs.signals import _is_own_banner

    assert _is_own_banner("\x1b[34minspect_ai v0.3.285\x1b[0m\n- hooks enabled: 0\n\n")
    assert _is_own_banner("inspect_ai v0.3.285\n- hooks enabled: 1\n  conflict_eval/conflict_eval_verdict: "
                          "conflict-eval: a suite's verdict comes \nfrom its logs\n")
    assert not _is_own_banner("inspect_ai v0.3.285\n- hooks enabled: 1\n  mine/audit: a user's hook\n")
    assert not _is_own_banner("inspect_ai v0.3.285\n- telemetry enabled: x\n- hooks enabled: 0\n")


def test_a_resume_with_nothing_to_run_prints_only_the_suite_verdict(tmp_path, capsys):
    """A re-run of a complete suite runs nothing: no Inspect banner, no "Completed all
    tasks" line, just the suite's own verdict (the re-run in a fresh process: Inspect
    prints its banner once per process; the first run, in this one, only completes the
    suite). Its log names the dataset (Inspect's header line read "dataset: (samples)"
    for suite tasks)."""
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.replace('args: {hold: "HOLD", hold_after: 3, reply: "B</a>"}', 'args: {reply: "B</a>"}')
                     .replace("limit: 8", "limit: 2"))
    log_dir = tmp_path / "logs"
    assert main(_args(suite, log_dir)) == 0, capsys.readouterr()
    assert {read_eval_log(i, header_only=True).eval.dataset.name for i in list_eval_logs(str(log_dir))} == {"demo"}
    again = subprocess.run(_cmd(suite, log_dir), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    out = again.stdout + again.stderr
    assert "suite slow: 2 task run(s), complete" in again.stdout
    assert "inspect_ai v" not in out and "hooks enabled" not in out and "Completed all tasks" not in out


def test_sigterm_closes_logs_as_cancelled(tmp_path, capsys, signal_when_held):
    suite, log_dir = _suite(tmp_path), tmp_path / "logs"
    res = _interrupt(_cmd(suite, log_dir, "--display", "rich"), log_dir, signal.SIGTERM, signal_when_held)
    assert res.returncode == 143, res.stdout + res.stderr
    assert not _says_complete(res.stdout) and "suite slow: INCOMPLETE, stopped by SIGTERM" in res.stdout
    _assert_no_inspect_success_line(res)  # on rich's display (SIGTERM reaches Inspect as SIGINT)
    headers = [read_eval_log(i, header_only=True) for i in list_eval_logs(str(log_dir))]
    assert headers and all(h.status == "cancelled" for h in headers)  # not left "started"
    assert json.loads((log_dir / "suite-stop.json").read_text())["conflict_eval_stop_reason"] == "SIGTERM"
    _assert_resumes(capsys, tmp_path, suite, log_dir)


def test_kill_leaves_started_logs_that_status_reports_and_a_rerun_resumes(tmp_path, capsys, signal_when_held):
    suite, log_dir = _suite(tmp_path), tmp_path / "logs"
    res = _interrupt(_cmd(suite, log_dir), log_dir, signal.SIGKILL, signal_when_held)
    assert res.returncode == -signal.SIGKILL
    assert main(["suite", "status", str(log_dir)]) == 1
    out = capsys.readouterr().out
    assert "INCOMPLETE" in out and "running" in out and not _says_complete(out)  # a `started` log, in inspect ctl's word
    _assert_resumes(capsys, tmp_path, suite, log_dir)


def test_budget_stops_then_a_larger_budget_resumes(tmp_path, capsys):
    suite, log_dir = _suite(tmp_path), tmp_path / "logs"
    _release(tmp_path)  # no hold: the budget alone stops this run
    costs = tmp_path / "costs.yaml"  # $10 per 1M tokens: each call ~90 words ~ $0.0009
    costs.write_text("scripted/x: {input: 10.0, output: 10.0, input_cache_write: 10.0, input_cache_read: 10.0}\n")
    res = subprocess.run(_cmd(suite, log_dir, "--model-cost-config", str(costs), "--budget", "0.004"),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "stopped by the budget" in res.stdout and not _says_complete(res.stdout)
    stop = json.loads((log_dir / "suite-stop.json").read_text())
    assert stop["conflict_eval_stop_reason"] == "budget" and stop["spent_usd"] >= 0.004
    assert {t["task"] for t in stop["tasks"]} == set(EXPECTED)
    # the spend already in the logs counts: the same budget stops at once
    capsys.readouterr()
    assert main(_args(suite, log_dir, "--model-cost-config", str(costs), "--budget", "0.004")) == 2
    assert "already record" in capsys.readouterr().err
    _assert_resumes(capsys, tmp_path, suite, log_dir, "--model-cost-config", str(costs), "--budget", "1")
    assert not (log_dir / "suite-stop.json").exists()
    # Inspect priced every call itself (the cost config, with the test model registered)
    for info in list_eval_logs(str(log_dir)):
        usage = read_eval_log(info, header_only=True).stats.model_usage["scripted/x"]
        assert usage.total_cost == (usage.input_tokens * 10 + usage.output_tokens * 10) / 1e6 or \
            abs(usage.total_cost - (usage.input_tokens * 10 + usage.output_tokens * 10) / 1e6) < 1e-9


def test_error_log_is_unfinished_and_a_rerun_resumes_it(tmp_path, capsys):
    """A crash on one sample (the `flaky` test model) leaves an `error` log: the
    suite is not complete (exit 1, the task listed), and the same command
    resumes it with every sample once."""
    flag = tmp_path / "crash"
    flag.write_text("x")
    suite = tmp_path / "s.yaml"
    suite.write_text(f"""name: crashy
models:
  - model: flaky/x
    args: {{crash_flag: "{flag}"}}
defaults: {{limit: 4}}
eval: {{retry_attempts: 1}}
tasks:
  - task: conflict_eval/run
    args: {{method: end_to_end, dataset: demo}}
""")
    cmd = ["suite", "run", str(suite), "--log-dir", str(tmp_path / "logs"), "--display", "none"]
    assert main([*cmd, "--estimate"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:3] == ["model", "task", "samples"])
    assert head < next(i for i, line in enumerate(lines) if line.startswith("suite crashy"))  # estimate first
    assert "INCOMPLETE, some tasks did not finish" in out and not _says_complete(out)
    assert any(line.split()[0] == "error" and "end_to_end/demo" in line for line in out.splitlines()
               if line.startswith("  "))
    flag.unlink()
    assert main(cmd) == 0
    assert "suite crashy: 1 task run(s), complete" in capsys.readouterr().out
    [s] = task_statuses(tmp_path / "logs")
    ids = [x.id for x in read_eval_log(s.log).samples]
    assert (s.done, s.total) == (4, 4) and sorted(ids) == sorted(set(ids)) and len(ids) == 4
