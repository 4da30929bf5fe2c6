"""One home for each batch rule: the price of a batched call
(``pricing.PriceTable.usd`` / ``batch_usd``, both from ``batch_fraction``), which models of a log ran batched
(``batched_models``), and no batch price without a published discount."""

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import GenerateConfig, ModelCost, ModelUsage

import conflict_eval.pricing as bp
from conflict_eval.pricing import PriceTable, packaged
from conflict_eval.report.build import build_leaderboard
from conflict_eval.runs.batch_estimate import batch_view, render
from conflict_eval.runs.budget import _Budget, spent_in_logs
from conflict_eval.runs.estimate import Estimate
from conflict_eval.runs.spec import load_suite

SUITE = """name: priced
models:
  - model: openai/gpt-4o-mini
    batch: true
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
    limit: 2
"""


def test_every_batched_figure_comes_from_batch_fraction(tmp_path, monkeypatch):
    """Swap the one function for a made-up batch price (a quarter of the list price):
    the plan's cell estimate, the suite's and a worker's per-call reservations, the
    estimate's batch column and the budget's count all follow it, so none applies a
    batch factor of its own."""
    from conflict_eval.runs.plan import make_plan
    from conflict_eval.runs.run import build_cells, cells_batch_budget
    from conflict_eval.runs.worker import plan_batch_budget

    monkeypatch.setattr(PriceTable, "batch_fraction", lambda self, model: (0.25, "made up"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    (tmp_path / "s.yaml").write_text(SUITE)
    suite = load_suite(str(tmp_path / "s.yaml"))
    [cell] = build_cells(suite, connect=False)
    listed = cell.estimate.cost_usd
    assert listed and listed > 0
    per_call = listed / cell.estimate.calls

    _, reserve = cells_batch_budget([cell])
    assert reserve == {"openai/gpt-4o-mini": pytest.approx(per_call * 0.25)}
    plan = make_plan(str(tmp_path / "s.yaml"), tmp_path / "plan", workers=1)
    assert plan["cells"][0]["estimated_usd"] == pytest.approx(listed * 0.25)
    assert plan_batch_budget(plan, plan["cells"])[1] == {"openai/gpt-4o-mini": pytest.approx(per_call * 0.25)}
    view = batch_view("openai/gpt-4o-mini", True, cell.estimate, "end_to_end", {})
    assert view.batch_usd == pytest.approx(listed * 0.25) and view.run_usd == view.batch_usd
    budget = _Budget(1.0, 0.0, packaged(), batch={"openai/gpt-4o-mini": True})
    budget.add("openai/gpt-4o-mini", ModelUsage(input_tokens=10**6, output_tokens=0, total_cost=0.15))
    assert budget.spent == pytest.approx(0.15 * 0.25)


def _log(tmp_path: Path, *, plan_batch, model_batch, roles: bool = False) -> Path:
    """A real Inspect log (scripted model), re-labelled as a gpt-4o-mini run with these
    batch settings and a usage of 1M input tokens (list price $0.15; a grader's too)."""
    from inspect_ai.model import ModelConfig

    log_dir = tmp_path / f"logs-{plan_batch}-{model_batch}-{roles}"
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo"},
                         model="scripted/x", model_args={"reply": "A</a>"}, limit=1, log_dir=str(log_dir),
                         display="none")
    log = read_eval_log(log.location)
    log.eval.model = "openai/gpt-4o-mini"
    log.eval.model_generate_config = GenerateConfig(batch=model_batch)
    log.plan.config = GenerateConfig(batch=plan_batch)
    usage = {"openai/gpt-4o-mini": ModelUsage(input_tokens=10**6, output_tokens=0, total_tokens=10**6)}
    if roles:  # a grader called without batch (Inspect passes no eval-wide batch on to roles)
        log.eval.model_roles = {"grader": ModelConfig(model="openai/gpt-4o", config=GenerateConfig())}
        usage["openai/gpt-4o"] = ModelUsage(input_tokens=10**6, output_tokens=0, total_tokens=10**6)
    log.stats.model_usage = usage
    for s in log.samples:
        s.model_usage = {}
    write_eval_log(log, log.location)
    return log_dir


@pytest.mark.parametrize("plan_batch,model_batch,on", [
    (True, False, True),  # `inspect eval --batch` over a model config without it: Inspect batches
    (False, True, False),  # the eval's generate config turns it off: Inspect does not batch
    (None, True, True),  # a suite's `batch:` (the model's own config) alone
    (None, None, False),
])
def test_page_and_budget_agree_on_what_ran_batched(tmp_path, plan_batch, model_batch, on):
    log_dir = _log(tmp_path, plan_batch=plan_batch, model_batch=model_batch)
    expected = 0.15 * (0.5 if on else 1.0)  # by hand: 1M input tokens at $0.15/1M, half price batched
    [row] = build_leaderboard([log_dir], bootstrap=0)["rows"]
    assert row.cost_total == pytest.approx(expected)
    prices = {"openai/gpt-4o-mini": ModelCost(input=0.15, output=0.6, input_cache_write=0.15, input_cache_read=0.15)}
    assert spent_in_logs(log_dir, PriceTable.load(prices=prices)) == pytest.approx(expected)


def test_a_grader_without_batch_is_at_list_price_in_a_batched_log(tmp_path):
    log_dir = _log(tmp_path, plan_batch=None, model_batch=True, roles=True)
    [row] = build_leaderboard([log_dir], bootstrap=0)["rows"]
    assert row.cost_total == pytest.approx(0.15 * 0.5 + 2.50)  # gpt-4o's 1M input tokens at list price
    prices = {m: ModelCost(input=p, output=0, input_cache_write=p, input_cache_read=p)
              for m, p in (("openai/gpt-4o-mini", 0.15), ("openai/gpt-4o", 2.50))}
    assert spent_in_logs(log_dir, PriceTable.load(prices=prices)) == pytest.approx(0.15 * 0.5 + 2.50)


def test_no_batch_price_without_a_published_discount():
    """grok has a batch API in Inspect but prices.yaml gives it no sourced discount:
    its batch figure is n/a, never the live price shown as a batch price; the budget
    counts such calls at the list price (an upper bound)."""
    assert "grok" in bp.BATCH_PROVIDERS and "grok" not in packaged().discounts
    est = Estimate(calls=10, input_tokens=1000, output_tokens=100, cost_usd=0.02, samples=10, price_source="x")
    view = batch_view("grok/grok-3", True, est, "end_to_end", {})
    assert view.batch_usd is None and view.run_usd is None and "n/a" in view.batch_source
    table = render([("grok/grok-3", "end_to_end/demo", est, view)])
    [line] = [ln for ln in table.splitlines() if ln.startswith("grok/grok-3")]
    assert "n/a" in line and line.count("$0.0200") == 1  # the live price, and no batch price
    assert packaged().batch_usd("grok/grok-3", 0.02, True) is None
    assert packaged().batch_usd("grok/grok-3", 0.02, True, upper_bound=True) == 0.02
    assert packaged().batch_usd("grok/grok-3", 0.02, False) == 0.02  # live: its list price
    budget = _Budget(1.0, 0.0, packaged(), batch={"grok/grok-3": True})
    budget.add("grok/grok-3", ModelUsage(input_tokens=1, output_tokens=1, total_cost=0.3))
    assert budget.spent == pytest.approx(0.3)
    # every discount the file does give names its source
    assert all(e.source.strip() for e in packaged().discounts.values())
