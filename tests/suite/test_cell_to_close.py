"""A cell whose samples are all done but whose log Inspect closed as
``cancelled`` (a SIGTERM between the last score and the closing of the log:
too narrow to hit with a signal, so the log is put in that state directly,
as Inspect's cancel path writes it: status ``cancelled``, results over every
sample). The suite table says what is true and what a re-run does; the
re-run does just that: it reuses every sample and only closes the log."""

from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log

from conflict_eval.cli import main
from conflict_eval.runs.status import TaskStatus, render_status, status_json

SUITE = """name: closing
models:
  - model: scripted/x
    args: {reply: "B</a>"}
defaults: {config: {max_tokens: 16}, limit: 3}
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
"""


def test_the_table_tells_a_cancelled_log_with_every_sample_done_apart():
    rows = [TaskStatus("m", "to-close", "cancelled", 20, 20), TaskStatus("m", "cut", "cancelled", 7, 20),
            TaskStatus("m", "running", "started", 20, 20), TaskStatus("m", "ok", "success", 20, 20)]
    table = render_status(rows)
    lines = {line.split()[-1]: line for line in table.splitlines() if line.startswith("  ") and " m " in line}
    assert lines["to-close"].split()[:4] == ["cancelled,", "to", "close", "20/20"]
    assert lines["cut"].split()[:2] == ["cancelled", "7/20"]  # samples left: resumed, not just closed
    assert lines["running"].split()[:2] == ["running", "20/20"]  # its run may still be closing it (Inspect's word)
    assert lines["ok"].split()[:2] == ["done", "20/20"]
    assert "a re-run reuses all its samples (no model call) and only writes the finished log" in table
    assert "to close" not in render_status(rows[1:])
    assert [r["to_close"] for r in status_json(rows)] == [True, False, False, False]


def test_suite_status_and_the_rerun_of_a_cell_left_to_close(tmp_path, capsys):
    suite, logs = tmp_path / "s.yaml", tmp_path / "logs"
    suite.write_text(SUITE)
    args = ["suite", "run", str(suite), "--log-dir", str(logs), "--display", "none"]
    assert main(args) == 0
    [info] = list_eval_logs(str(logs))
    log = read_eval_log(info)
    uuids = sorted(s.uuid for s in log.samples)
    assert (log.results.completed_samples, log.results.total_samples, len(uuids)) == (3, 3, 3)
    log.status = "cancelled"
    write_eval_log(log, info.name)
    capsys.readouterr()

    assert main(["suite", "status", str(logs)]) == 1
    out = capsys.readouterr().out
    assert "cancelled, to close  3/3" in out and "no model call" in out

    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "resuming: all 3 sample(s) are done; this run only closes 1 cancelled log(s), no model call" in out
    assert "suite closing: 1 task run(s), complete" in out and "to close" not in out.split("resuming")[1]
    [info] = list_eval_logs(str(logs))
    closed = read_eval_log(info)
    assert closed.status == "success"
    assert sorted(s.uuid for s in closed.samples) == uuids  # the same samples: none was run again
