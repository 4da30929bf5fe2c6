"""Cost estimates before a run: the estimator API, the table, ``suite estimate --json``,
and estimate against actual on a scripted suite (within 25%)."""

import json

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from conflict_eval.report.accounting import log_costs
from conflict_eval.cli import main
from conflict_eval.runs import ModelSpec, load_suite, run_suite
from conflict_eval.runs.estimate import (
    Estimate,
    estimate_task,
    estimates_json,
    load_profiles,
    record_words,
    render_estimates,
)

# The benchmark's scripted reply (benchmarks/estimate_profiles.py): 35 words, so
# the profiles' output tokens per call are 35 for a word-counting model.
REPLY = ("The context says one thing and my own knowledge another, so I weigh the two: the passage is "
         "specific and recent, the alternative is generic. Both point to the first option in the end. "
         "<a>A</a>")

SUITE = """name: est
models: [scripted/x]
defaults: {limit: 6}
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
  - task: conflict_eval/run
    args: {method: cot, dataset: demo}
  - task: conflict_eval/run
    args: {method: gkp, dataset: demo, conflict_type: temporal}
"""


def test_profiles_ship_and_cover_the_measured_methods():
    data = load_profiles()
    assert {"end_to_end", "cot", "gkp", "microact"} <= set(data["methods"])
    assert data["methods"]["gkp"]["calls"] == 2.0  # knowledge generation, then the answer


def test_estimate_task_figures_by_hand():
    """end_to_end on 3 demo records: calls = 3 x 1; input = 3 x base + per_word x words;
    output = calls x output_per_call; $ from the given cost config (USD per 1M tokens)."""
    from conflict_eval.components.compose import compose_task

    prof = load_profiles()["methods"]["end_to_end"]
    samples = list(compose_task("end_to_end", "demo", None).dataset)[:3]
    words = sum(record_words(s) for s in samples)
    est = estimate_task("conflict_eval/run", {"method": "end_to_end", "dataset": "demo"}, "scripted/x", limit=3,
                        model_cost_config={"scripted/x": {"input": 2.0, "output": 10.0, "input_cache_write": 2.0,
                                                      "input_cache_read": 2.0}})
    assert est.samples == 3 and est.calls == 3 * prof["calls"] and est.profile == "end_to_end"
    assert est.input_tokens == pytest.approx(3 * prof["input_base"] + prof["input_per_word"] * words)
    assert est.output_tokens == pytest.approx(3 * prof["output_per_call"])
    assert est.cost_usd == pytest.approx((round(est.input_tokens) * 2.0 + round(est.output_tokens) * 10.0) / 1e6)
    assert est.price_source == "model-cost-config"
    # no price anywhere (the test model oracle/ is in no price table): $ unknown, never 0
    assert estimate_task("conflict_eval/run", {"method": "end_to_end", "dataset": "demo"}, "oracle/gold",
                         limit=1).cost_usd is None
    # the fallback price file's 0 for the scripted test models is no known bill: n/a, as on the page
    assert estimate_task("conflict_eval/run", {"method": "end_to_end", "dataset": "demo"}, "scripted/x",
                         limit=1).cost_usd is None
    # a real model: tokens scaled by tokens_per_word; price from genai-prices (not in the price file)
    api = estimate_task("conflict_eval/run", {"method": "end_to_end", "dataset": "demo"}, "openai/gpt-4o-mini",
                        limit=3)
    assert api.input_tokens == pytest.approx(est.input_tokens * load_profiles()["tokens_per_word"])
    assert api.price_source == "genai-prices" and api.cost_usd > 0


def test_unknown_method_uses_the_default_profile_and_says_so():
    est = estimate_task("conflict_eval/run", {"method": "end_to_end", "dataset": "demo"}, "scripted/x", limit=2)
    assert est.profile == "end_to_end"
    from conflict_eval.runs.estimate import estimate_samples

    other = estimate_samples([], "no_such_method", "scripted/x")
    assert other.profile == "default" and other.calls == 0


def test_table_and_json_totals():
    a = Estimate(2, 100, 20, 0.5, 2, "cot")
    b = Estimate(4, 300, 40, None, 2, "gkp")
    text = render_estimates([("m1", "cot/demo", a), ("m2", "gkp/demo", b)])
    lines = text.splitlines()
    assert lines[0].split()[:4] == ["model", "task", "samples", "calls"]
    assert "cot/demo" in text and "n/a" in lines[-1] and lines[-1].startswith("total")
    data = estimates_json([("m1", "cot/demo", a), ("m2", "gkp/demo", b)])
    assert data["total"] == {"calls": 6, "input_tokens": 400, "output_tokens": 60, "cost_usd": None}
    assert [c["task"] for c in data["cells"]] == ["cot/demo", "gkp/demo"]
    assert data["cells"][0]["per_sample"] == {"calls": 1.0, "input_tokens": 50, "output_tokens": 10, "cost_usd": 0.25}


def test_cli_estimate_json_shape(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(SUITE)
    costs = tmp_path / "costs.yaml"
    costs.write_text("scripted/x: {input: 1.0, output: 4.0, input_cache_write: 1.0, input_cache_read: 0.1}\n")
    assert main(["suite", "estimate", str(path), "--json", "--model-cost-config", str(costs)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"total", "cells"}
    assert set(data["total"]) == {"calls", "input_tokens", "output_tokens", "cost_usd", "live_usd", "batch_usd",
                                  "run_usd", "applies"}
    assert len(data["cells"]) == 3 and data["total"]["cost_usd"] > 0
    # scripted/ has no batch API: batch on or off it runs live, at the live price
    assert data["total"]["applies"] == "live"
    assert data["total"]["live_usd"] == data["total"]["batch_usd"] == data["total"]["run_usd"] \
        == pytest.approx(data["total"]["cost_usd"], abs=1e-6)
    assert data["total"]["calls"] == pytest.approx(sum(c["calls"] for c in data["cells"]))
    assert main(["suite", "estimate", str(path), "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "end_to_end/demo" in out and "gkp/demo(conflict_type=temporal)" in out and "total" in out


def test_estimate_within_25_percent_of_a_scripted_suite(tmp_path):
    """The suite's recorded estimate (task metadata ``conflict_eval_estimate``) against
    what the logs record, per cell and in total: calls and tokens within 25%."""
    path = tmp_path / "s.yaml"
    path.write_text(SUITE)
    suite = load_suite(path)
    run = run_suite(suite, tmp_path / "logs", models=[ModelSpec("scripted/x", None, {"reply": REPLY})],
                    display="none")
    assert run.success
    totals = {"est": [0.0, 0.0, 0.0], "act": [0, 0, 0]}
    for info in list_eval_logs(str(tmp_path / "logs")):
        log = read_eval_log(info)
        est = log.eval.metadata["conflict_eval_estimate"]
        assert set(est["per_sample"]) == set(est["total"]) == {"calls", "input_tokens", "output_tokens", "cost_usd"}
        costs = log_costs(log)
        actual = [sum(c.calls for c in costs), sum(c.input_tokens for c in costs), sum(c.output_tokens for c in costs)]
        for i, key in enumerate(("calls", "input_tokens", "output_tokens")):
            assert est["total"][key] == pytest.approx(actual[i], rel=0.25), (log.eval.metadata["suite"]["label"], key)
            totals["est"][i] += est["total"][key]
            totals["act"][i] += actual[i]
    for e, a in zip(totals["est"], totals["act"]):
        assert e == pytest.approx(a, rel=0.25)


@pytest.mark.parametrize("method, dataset, folder, n", [
    ("conflictqa_mc", "conflictqa", "conflictqa_strategyqa", 10),
    ("madam_rag", "ramdocs", "ramdocs", 6),
])
def test_measured_profile_predicts_held_out_records(tmp_path, shared_data, method, dataset, folder, n):
    """madam_rag and conflictqa_mc have measured profiles (benchmarks/estimate_profiles.py,
    fitted on the even-numbered of the first 40 records of their data): on odd-numbered
    records, never fitted on, the estimate matches the calls the scripted run makes
    (ConflictQA's prompt is one call: exactly) and its tokens within 25%."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai import task_with

    from conflict_eval.components.compose import compose_task
    from conflict_eval.runs.estimate import estimate_samples

    assert method in load_profiles()["methods"]  # not the default guess
    task = compose_task(method, dataset, None, path=str(shared_data / folder / "sample.jsonl"))
    held_out = list(task.dataset)[1:2 * n:2]
    est = estimate_samples(held_out, method, "scripted/bench")
    assert est.profile == method and est.samples == n
    [log] = inspect_eval(task_with(task, dataset=held_out), model="scripted/bench", model_args={"reply": REPLY},
                         log_dir=str(tmp_path), display="none", max_tokens=512)
    assert log.status == "success"
    costs = log_costs(read_eval_log(log.location))
    calls = sum(c.calls for c in costs)
    if method == "conflictqa_mc":
        assert est.calls == calls == n
    assert est.calls == pytest.approx(calls, rel=0.25)
    assert est.input_tokens == pytest.approx(sum(c.input_tokens for c in costs), rel=0.25)
    assert est.output_tokens == pytest.approx(sum(c.output_tokens for c in costs), rel=0.25)
