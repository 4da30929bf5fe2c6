"""Inspect's limits and cost config pass through a suite, as suite keys and as flags."""

from inspect_ai.log import list_eval_logs, read_eval_log

from conflict_eval.cli import main
from conflict_eval.runs import load_suite

SUITE = """name: lim
models: [scripted/x]
eval: {{cost_limit: 0.5, token_limit: 5000, time_limit: 60, model_cost_config: {costs}}}
tasks:
  - task: conflict_eval/run
    args: {{method: end_to_end, dataset: demo}}
"""


def test_suite_keys_and_flags_reach_inspect(tmp_path, capsys):
    (tmp_path / "costs.yaml").write_text("scripted/x: {input: 2.0, output: 4.0, input_cache_write: 2.0, "
                                         "input_cache_read: 2.0}\n")
    path = tmp_path / "s.yaml"
    path.write_text(SUITE.format(costs="costs.yaml"))  # relative to the suite file
    assert load_suite(path).eval["model_cost_config"] == str(tmp_path / "costs.yaml")
    log_dir = tmp_path / "logs"
    assert main(["suite", "run", str(path), "--log-dir", str(log_dir), "--display", "none", "--limit", "2"]) == 0
    [info] = list_eval_logs(str(log_dir))
    log = read_eval_log(info)
    cfg = log.eval.config
    assert (cfg.cost_limit, cfg.token_limit, cfg.time_limit) == (0.5, 5000, 60)
    assert [s.id for s in log.samples] == ["mis-01", "mis-02"]  # --limit 2
    usage = log.stats.model_usage["scripted/x"]  # priced by Inspect from the suite's cost config
    assert abs(usage.total_cost - (usage.input_tokens * 2.0 + usage.output_tokens * 4.0) / 1e6) < 1e-12
    # flags override the suite's keys
    assert main(["suite", "run", str(path), "--log-dir", str(tmp_path / "logs2"), "--display", "none",
                 "--limit", "1", "--cost-limit", "0.25", "--token-limit", "900", "--time-limit", "30"]) == 0
    [info] = list_eval_logs(str(tmp_path / "logs2"))
    cfg = read_eval_log(info, header_only=True).eval.config
    assert (cfg.cost_limit, cfg.token_limit, cfg.time_limit) == (0.25, 900, 30)
    capsys.readouterr()


def test_bad_budget_names_the_line(tmp_path):
    import pytest

    from conflict_eval.runs import SuiteError

    path = tmp_path / "s.yaml"
    path.write_text("name: b\nmodels: [scripted/x]\nbudget: -3\ntasks: [conflict_eval/run]\n")
    with pytest.raises(SuiteError, match=r"line 3: budget: budget must be a positive number"):
        load_suite(path)
