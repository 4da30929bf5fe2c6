"""One plan, three worker processes, one shared flat log folder (Inspect's
INSPECT_EVAL_SET_CAPTURE / INSPECT_EVAL_SET_SELECTION protocol): one worker is
killed mid-way and started again (in the test's process: a worker process
costs seconds of imports, and the restart's claim is about the folder and the
lease the killed process left); the suite ends complete, the leaderboard
builds, and every sample is in the folder exactly once."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from conflict_eval.runs.plan import make_plan, read_plan
from conflict_eval.runs.worker import plan_statuses

SUITE = """name: spread
models:
  - model: scripted/slow
    max_connections: 1
    args: {reply: "A</a>", hold: "{hold}", hold_after: 1}
  - model: scripted/fast
    args: {reply: "B</a>"}
defaults: {limit: 4}
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
  - task: conflict_eval/run
    args: {method: cot, dataset: demo}
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo, conflict_type: temporal}
"""


def _worker(tmp_path, selection) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "conflict_eval.cli", "suite", "worker", str(selection),
                             "--display", "none"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait_until(predicate, timeout=300.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        threading.Event().wait(0.05)  # polling a file the worker writes; no fixed wait for an outcome
    return False


def _logs_of(log_dir: Path, cell: str) -> list:
    return [i for i in list_eval_logs(str(log_dir)) if f"_{cell.replace('_', '-')}_" in Path(i.name).name]


@pytest.mark.slow
def test_three_workers_one_killed_and_restarted(tmp_path, capsys):
    hold = tmp_path / "hold"  # the slow model answers one call per process, then holds until hold/release
    hold.mkdir()
    (tmp_path / "spread.yaml").write_text(SUITE.replace("{hold}", str(hold)))
    plan = make_plan(str(tmp_path / "spread.yaml"), tmp_path / "plan", workers=3, budget=3.0)
    plan_file, plan = read_plan(tmp_path / "plan")
    capture = json.loads((tmp_path / "plan" / "capture.json").read_text())
    assert capture["version"] == 3 and len(capture["tasks"]) == 6  # 2 models x 3 tasks
    assert sorted(len(w["cells"]) for w in plan["workers"]) == [2, 2, 2]
    assert [w["budget_usd"] for w in plan["workers"]] == [1.0, 1.0, 1.0]  # no cost estimate: equal shares
    log_dir = Path(plan["log_dir"])
    sel = {w["worker"]: tmp_path / "plan" / w["selection"] for w in plan["workers"]}
    victim_cell = next(c for c in plan["workers"][0]["cells"]
                       if next(x for x in plan["cells"] if x["name"] == c)["model"] == "scripted/slow")

    procs = {i: _worker(tmp_path, s) for i, s in sel.items()}
    from conflict_eval.cli import main

    # a second worker on worker 2's selection while worker 2 runs (a scheduler's retry, two terminals):
    # refused at once, naming the holder, before it reads or writes any log (in this process: cheap)
    lease_2 = log_dir / "worker-2.lease"
    # (every worker has a slow cell, held until hold/release: worker 2 cannot end before that)
    assert _wait_until(lambda: lease_2.exists() or procs[2].poll() is not None)
    assert procs[2].poll() is None, procs[2].communicate()[0]
    capsys.readouterr()
    assert main(["suite", "worker", str(sel[2]), "--display", "none"]) == 75
    err = capsys.readouterr().err
    assert f"not run: another worker runs this selection: process {procs[2].pid} on host" in err
    # kill worker 1 once it is inside its slow cell: that cell's log has started and the slow
    # model is holding a reply (it cannot finish the cell until hold/release exists), so the
    # kill is mid-way by construction; the wait is for those events, never a fixed sleep
    deadline = time.monotonic() + 300
    killed_mid_way = False
    while time.monotonic() < deadline and not killed_mid_way:
        try:
            procs[1].wait(timeout=0.1)
            break  # worker 1 ended before it held: fails below
        except subprocess.TimeoutExpired:
            pass
        logs = _logs_of(log_dir, victim_cell)
        if (hold / "held").exists() and logs and read_eval_log(logs[0], header_only=True).status == "started":
            procs[1].send_signal(signal.SIGKILL)
            procs[1].wait(timeout=60)
            killed_mid_way = True
    assert killed_mid_way, "worker 1 finished before it could be killed"
    assert read_eval_log(_logs_of(log_dir, victim_cell)[0], header_only=True).status == "started"
    mid = plan_statuses(plan)
    assert not all(s.complete for s in mid)

    (hold / "release").touch()  # the other workers' slow cells and the restarted worker run through
    # worker 1 started again, in this process while workers 2 and 3 still run (the boundary under test is
    # the SIGKILL above: what the restart reads is the folder and the dead holder's lease, not a process)
    capsys.readouterr()
    code = main(["suite", "worker", str(sel[1]), "--display", "none"])
    out = "".join(capsys.readouterr())
    assert code == 0, out
    assert f"resumed from their logs: {victim_cell}" in out
    assert "took over a stale lease: process" in out  # the killed worker's lease: its process is gone
    for i in (2, 3):
        o = procs[i].communicate(timeout=600)[0]
        assert procs[i].returncode == 0, o

    # `suite status` reads the folder only: in this process (the workers' boundary is what is tested above)
    capsys.readouterr()
    code = main(["suite", "status", str(tmp_path / "plan")])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "all tasks done" in out and "worker 3:" in out
    # the folder holds one complete log per cell: the killed attempt was resumed and set aside
    infos = list_eval_logs(str(log_dir), recursive=False)
    assert len(infos) == 6 and all(Path(i.name).parent == Path(infos[0].name).parent for i in infos)
    aside = list_eval_logs(str(log_dir / "attempts"))
    worker_1 = [f"_{c.replace('_', '-')}_" for c in plan["workers"][0]["cells"]]  # the killed worker's cells
    assert any(f"_{victim_cell.replace('_', '-')}_" in Path(i.name).name for i in aside)
    assert all(any(c in Path(i.name).name for c in worker_1) for i in aside)
    seen = []
    for info in infos:
        lg = read_eval_log(info)
        assert lg.status == "success" and lg.eval.eval_set_id == plan["eval_set_id"]
        seen += [(lg.eval.model, lg.eval.metadata["suite"]["label"], s.id, s.epoch) for s in lg.samples]
    assert len(seen) == len(set(seen)) == 6 * 4
    from conflict_eval.report.build import build_leaderboard

    board = build_leaderboard([log_dir], bootstrap=0)
    assert len(board["rows"]) == 6 and all(r.n == 4 and r.complete for r in board["rows"])
    assert board["stats"]["duplicates_dropped"] == 0
    # workers ran from the plan folder, yet each cell names the commit of the code that ran (issue 44.6)
    from conflict_eval.report.provenance import cell
    from conflict_eval.records.source import source_info

    commits = {c for r in board["rows"] for c in cell(board["provenance"], r.model, r.task)["made"]["git_commit"]}
    src = source_info()
    if src["git_commit"]:  # (uncommitted changes may be flagged: not compared, the tree may change meanwhile)
        assert all(c.startswith(src["git_commit"]) for c in commits), commits
    else:
        assert commits == {"none: conflict-eval was not run from a git checkout"}


GKP_SUITE = """name: kept
models:
  - model: scripted/slow
    max_connections: 1
    args: {reply: "A</a>", hold: "{hold}", hold_after: 3}
defaults: {limit: 4}
tasks:
  - task: conflict_eval/run
    args: {method: gkp, dataset: demo}
"""


@pytest.mark.slow
def test_a_killed_attempt_is_set_aside_and_its_calls_count(tmp_path):
    """GKP makes two calls per sample; the model answers three, then holds: the second
    sample is killed in flight with its first call paid and in no header. After the
    resume the killed attempt and Inspect's -recovered copy are kept in attempts/, the
    page shows one complete cell, and its $ total (and the budget's count) includes that
    call: every input token the model was paid for, once."""
    from inspect_ai.event import ModelEvent

    from conflict_eval.report.build import build_leaderboard
    from conflict_eval.runs.budget import spent_in_logs
    from conflict_eval.runs.worker import run_worker

    hold = tmp_path / "hold"
    hold.mkdir()
    (tmp_path / "kept.yaml").write_text(GKP_SUITE.replace("{hold}", str(hold)))
    plan = make_plan(str(tmp_path / "kept.yaml"), tmp_path / "plan", workers=1)
    log_dir = Path(plan["log_dir"])
    sel = tmp_path / "plan" / plan["workers"][0]["selection"]
    proc = _worker(tmp_path, sel)
    deadline = time.monotonic() + 300
    while not (hold / "held").exists() and time.monotonic() < deadline:  # the event: a reply is held
        try:
            proc.wait(timeout=0.05)
            break  # the worker ended before it held: fails below
        except subprocess.TimeoutExpired:
            pass
    assert (hold / "held").exists(), proc.communicate()[0]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    (hold / "release").touch()
    assert run_worker(sel).success

    [final] = list_eval_logs(str(log_dir), recursive=False)
    aside = sorted(Path(i.name).name for i in list_eval_logs(str(log_dir / "attempts")))
    assert len(aside) == 2 and sum(n.endswith("-recovered.eval") for n in aside) == 1
    final_log = read_eval_log(final)
    kept_uuids = {s.uuid for s in final_log.samples}
    # by reading the logs: the final header's input tokens plus the answered calls of the
    # recovered copy's samples that the final log does not hold (the one killed in flight)
    recovered = read_eval_log(next(i for i in list_eval_logs(str(log_dir / "attempts"))
                                   if i.name.endswith("-recovered.eval")))
    lost = [ev.output.usage.input_tokens for s in recovered.samples if s.uuid not in kept_uuids
            for ev in s.events if isinstance(ev, ModelEvent) and ev.output is not None and ev.output.usage]
    assert len(lost) == 1 and lost[0] > 0  # the killed sample's first call
    tokens = final_log.stats.model_usage["scripted/slow"].input_tokens + sum(lost)
    price = {"scripted/slow": {"input": 1.0, "output": 0.0, "input_cache_write": 1.0,
                             "input_cache_read": 1.0}}  # $1 per 1M input tokens
    board = build_leaderboard([log_dir], bootstrap=0, cost_config=price)
    [row] = board["rows"]
    assert row.complete and row.n == 4 and board["stats"]["duplicates_dropped"] == 0
    assert row.cost_total == pytest.approx(tokens / 1e6)
    from conflict_eval.pricing import PriceTable  # the budget's own price form

    (tmp_path / "costs.yaml").write_text(
        "scripted/slow: {input: 1.0, output: 0.0, input_cache_write: 1.0, input_cache_read: 1.0}\n")
    assert spent_in_logs(log_dir, PriceTable.load(tmp_path / "costs.yaml")) == pytest.approx(tokens / 1e6)


@pytest.mark.slow
def test_crashed_samples_closed_as_errors_are_counted_as_errors(tmp_path, capsys):
    """`suite worker --incomplete-action error`: the last sample, which a SIGKILL left in flight (its
    first call answered, its second held), is closed as an error by Inspect's recovery; with every
    sample then final the log is finalized and nothing runs again (Inspect's rule: with samples still
    to run, the resume would run the errored one too). `suite status` counts it under errors."""
    from conflict_eval.cli import main
    from conflict_eval.runs.worker import run_worker

    hold = tmp_path / "hold"
    hold.mkdir()
    # two samples of two calls each: the first sample's calls and the second's first are answered
    suite = GKP_SUITE.replace("{hold}", str(hold)).replace("limit: 4", "limit: 2")
    (tmp_path / "kept.yaml").write_text(suite)
    plan = make_plan(str(tmp_path / "kept.yaml"), tmp_path / "plan", workers=1)
    sel = tmp_path / "plan" / plan["workers"][0]["selection"]
    proc = _worker(tmp_path, sel)
    assert _wait_until(lambda: (hold / "held").exists() or proc.poll() is not None)
    assert (hold / "held").exists(), proc.communicate()[0]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    (hold / "release").touch()
    run = run_worker(sel, incomplete_action="error")
    assert run.closed == [plan["cells"][0]["name"]]
    [status] = run.statuses
    assert status.errors == 1 and status.done == 1 and status.total == 2
    [final] = list_eval_logs(str(plan["log_dir"]), recursive=False)
    errors = [s.error.message for s in read_eval_log(final).samples if s.error]
    assert len(errors) == 1 and "in progress when the eval process was terminated" in errors[0]
    capsys.readouterr()
    assert main(["suite", "status", str(tmp_path / "plan")]) == 1  # not complete: one sample is an error
    out = capsys.readouterr().out
    assert "partial  1/2         1       scripted/slow" in out
