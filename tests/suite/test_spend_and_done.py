"""Every call paid for is on the page, and one count of done: after a budget stop
and after the resume, the page's $ total equals the budget counter and the sum
of the logs' header model usage; `suite status` and the leaderboard agree on
the done samples (a `suite run`, stopped for real by the budget hook: its SIGINT
cancels the run as Ctrl-C does). The command runs in this process through
``cli.main`` (the exit code it returns is the one ``python -m conflict_eval.cli``
exits with): no process boundary is under test here (test_interrupts.py stops a
`suite run` process by its budget)."""

import json

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from conflict_eval.cli import main
from conflict_eval.report import build_leaderboard
from conflict_eval.pricing import load_model_cost_config
from conflict_eval.runs.status import task_statuses

SUITE = """name: paid
models:
  - model: scripted/x
    args: {delay: 0.3, reply: "B</a>"}
    max_connections: 4
defaults: {config: {max_tokens: 16}, limit: 8}
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
eval: {max_tasks: 1, max_samples: 3}
"""


def _headers_usd(log_dir) -> float:
    return sum(read_eval_log(i, header_only=True).stats.model_usage["scripted/x"].total_cost
               for i in list_eval_logs(str(log_dir), recursive=True))


def _board(log_dir, costs):
    return build_leaderboard([log_dir], bootstrap=0, cost_config=load_model_cost_config(costs),
                             allow_incomplete=True)


@pytest.mark.slow
def test_budget_stop_and_resume_every_dollar_on_the_page_and_one_done_count(tmp_path, capsys):
    suite, log_dir, costs = tmp_path / "paid.yaml", tmp_path / "logs", tmp_path / "costs.yaml"
    suite.write_text(SUITE)
    costs.write_text("scripted/x: {input: 10.0, output: 10.0, input_cache_write: 10.0, input_cache_read: 10.0}\n")
    cmd = ["suite", "run", str(suite), "--log-dir", str(log_dir), "--display", "none", "--model-cost-config", str(costs)]
    capsys.readouterr()
    code = main(cmd + ["--budget", "0.003"])
    stop = capsys.readouterr()
    assert code == 1 and "stopped by the budget" in stop.out, stop.out + stop.err
    counter = json.loads((log_dir / "suite-stop.json").read_text())["spent_usd"]
    (row,) = _board(log_dir, costs)["rows"]
    (status,) = task_statuses(log_dir)
    assert row.cost_total == pytest.approx(_headers_usd(log_dir)) == pytest.approx(counter)
    assert status.done == row.status.done == row.n  # suite status and the leaderboard: one count
    assert f"{status.done}/8" in stop.out  # the budget stop message too
    code = main(cmd + ["--budget", "1"])
    done = capsys.readouterr()
    assert code == 0, done.out + done.err
    assert f"resuming: {status.done} sample(s) already done" in done.out  # the resume counts the same way
    (row,) = _board(log_dir, costs)["rows"]
    assert row.n == 8
    assert row.cost_total == pytest.approx(_headers_usd(log_dir))
    # the samples' own cost, and what was paid beyond it (calls cut off in flight, run again)
    assert row.cost_total >= row.cost_per_sample * 8 - 1e-12
    assert row.rerun_share == pytest.approx((row.cost_total - row.cost_per_sample * 8) / row.cost_total)
