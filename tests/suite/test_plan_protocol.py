"""`suite plan` on Inspect's current worker protocol (issue 45, items 3 and 5; issue 44, item 5):
selections at schema 7 with pruning facets, cells dealt by estimated wall time, and hawk.yaml
valid against Hawk 3.7.2's EvalSetConfig.schema.json (vendored in tests/fixtures/hawk)."""

import json
from pathlib import Path

import pytest
import yaml

from conflict_eval.runs.plan import _deal, make_plan
from conflict_eval.runs.walltime import seconds_for

SCHEMA = Path(__file__).resolve().parents[1] / "fixtures" / "hawk" / "EvalSetConfig.schema.json"


def _validate(config: dict) -> None:
    from jsonschema import Draft202012Validator

    schema = json.loads(SCHEMA.read_text())
    errors = sorted(Draft202012Validator(schema).iter_errors(config), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


@pytest.fixture(scope="module")
def tiny_plan(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny") / "plan"
    return out, make_plan("tiny", out, workers=2)


def test_tiny_plan_writes_schema_7_selections_with_pruning_facets(tiny_plan):
    out, plan = tiny_plan
    capture = {t["identifier"]: t for t in json.loads((out / "capture.json").read_text())["tasks"]}
    for w in plan["workers"]:
        sel = json.loads((out / w["selection"]).read_text())
        assert sel["version"] == 7 and sel["eval_set_id"] == plan["eval_set_id"]
        [task] = sel["tasks"]
        # the facets are the capture's own (Inspect's task_args_hash), so the @task wrapper can match them
        assert task["registry_name"] == capture[task["identifier"]]["registry_name"] == w["cells"][0]
        assert task["args_hash"] == capture[task["identifier"]]["args_hash"]


def test_tiny_plan_hawk_yaml_validates_against_hawk_3_7_2(tiny_plan):
    out, plan = tiny_plan
    hawk = yaml.safe_load((out / "hawk.yaml").read_text())
    _validate(hawk)
    [tasks] = hawk["tasks"]
    assert tasks["package"] == "conflict-eval" and tasks["name"] == "conflict_eval"
    assert [i["name"] for i in tasks["items"]] == ["run", "run"]
    assert tasks["items"][1]["args"] == {"method": "end_to_end", "dataset": "demo", "conflict_type": "temporal"}
    assert [len(i["sample_ids"]) for i in tasks["items"]] == [2, 2]  # the suite's limit: 2, as explicit ids
    # the shared generation config (max_tokens: 16) travels on the model, with its connection limit
    assert hawk["models"] == [{"package": "conflict-eval", "name": "conflict_eval",
                               "items": [{"name": "smollm2", "args": {"config": {"max_tokens": 16,
                                                                                 "max_connections": 1}}}]}]
    assert hawk["metadata"]["conflict_eval"]["not_exported"] == []


RICH = """name: Rich_Suite
models:
  - model: openai/gpt-4o-mini
    max_connections: 4
    batch: true
    args: {base_url: "http://user:pw@llm.example/v1?key=SECRETKEY"}
  - model: scripted/x
    args: {reply: "A</a>", delay: 0.5}
defaults: {limit: 3}
eval:
  token_limit: 5000
  model_cost_config: {openai/gpt-4o-mini: {input: 0.15, output: 0.6, input_cache_write: 0.15,
                                           input_cache_read: 0.075},
                      scripted/x: {input: 0, output: 0, input_cache_write: 0, input_cache_read: 0}}
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
    seeds: [1, 2]
    config: {max_tokens: 32}
  - task: conflict_eval/run
    args: {method: cot, dataset: demo}
"""


def test_hawk_yaml_carries_models_costs_judges_and_says_what_it_cannot(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")  # capture builds the model; no call is made
    (tmp_path / "rich.yaml").write_text(RICH)
    plan = make_plan(str(tmp_path / "rich.yaml"), tmp_path / "plan", workers=2,
                     model_roles={"grader": "openai/gpt-4o", "grader_2": "openai/gpt-4.1-mini"})
    text = (tmp_path / "plan" / "hawk.yaml").read_text()
    assert "pw" not in text.replace("pw\n", "") and "SECRETKEY" not in text  # redacted, as everywhere
    hawk = yaml.safe_load(text)
    _validate(hawk)
    assert hawk["eval_set_id"] == plan["eval_set_id"].lower().replace("_", "-")
    assert hawk["token_limit"] == 5000
    assert hawk["model_cost_config"]["openai/gpt-4o-mini"] == {"input": 0.15, "output": 0.6,
                                                               "input_cache_write": 0.15, "input_cache_read": 0.075}
    # judges as single-model roles
    assert hawk["model_roles"] == {"grader": {"package": "inspect-ai", "items": [{"name": "openai/gpt-4o"}]},
                                   "grader_2": {"package": "inspect-ai",
                                                "items": [{"name": "openai/gpt-4.1-mini"}]}}
    [builtin] = hawk["models"]
    gpt, scripted = builtin["items"]
    assert gpt["args"]["config"] == {"max_connections": 4, "batch": True}
    assert gpt["args"]["base_url"] == "http://llm.example/v1?key=REDACTED" and "api_key" not in gpt["args"]
    assert scripted == {"name": "scripted/x", "args": {"reply": "A</a>", "delay": 0.5}}
    items = hawk["tasks"][0]["items"]
    assert [len(i["sample_ids"]) for i in items] == [3, 3]
    not_exported = hawk["metadata"]["conflict_eval"]["not_exported"]
    assert {"task": "end_to_end/demo", "config": {"max_tokens": 32}} in not_exported  # configs differ per entry
    assert {"task": "end_to_end/demo", "seeds": [1, 2]} in not_exported
    # the roles reach the workers' eval set (plan.json) and the plain Inspect command
    assert plan["model_roles"]["grader_2"] == "openai/gpt-4.1-mini"
    assert "--model-role grader=openai/gpt-4o" in plan["plain_command"]
    # dealt by time: the scripted cells wait 0.5 s per call, one connection at a time (Inspect's
    # default 10, capped by the 3 samples): 3 cells x 3 calls x 0.5 s / 3; the API cells 2 s a call / 3
    by_model = {}
    for c in plan["cells"]:
        by_model.setdefault(c["model"], []).append(c["estimated_s"])
    assert all(s == pytest.approx(3 * 1 * 0.5 / 3) for s in by_model["scripted/x"][:2])
    assert sum(w["estimated_s"] for w in plan["workers"]) == pytest.approx(sum(c["estimated_s"] for c in plan["cells"]))


def test_cells_are_dealt_by_wall_time_not_dollars():
    """Issue 44: the $0 local-model cells all went to one worker (4 min 29 s against 1 min 49 s)."""
    local = seconds_for("conflict_eval/smollm2", calls=24, output_tokens=24 * 64, samples=24)
    api = seconds_for("openai/gpt-4o-mini", calls=24, output_tokens=24 * 64, samples=24, max_connections=10)
    assert local == pytest.approx(24 * 0.69 + 24 * 64 / 72.1) and api == pytest.approx(24 * 2.0 / 10)
    cells = [{"name": f"l{i}", "estimated_s": local, "estimated_usd": 0.0} for i in range(4)] + \
            [{"name": f"a{i}", "estimated_s": api, "estimated_usd": 1.0} for i in range(4)]
    shares = _deal(cells, 2)
    assert [sorted(c["name"][0] for c in s) for s in shares] == [["a", "a", "l", "l"]] * 2
    times = [sum(c["estimated_s"] for c in s) for s in shares]
    assert times[0] == pytest.approx(times[1])
    # unknown time (scripted cells, no delay): equal counts, in plan order
    flat = [{"name": f"c{i}", "estimated_s": 0.0} for i in range(5)]
    assert [[c["name"] for c in s] for s in _deal(flat, 2)] == [["c0", "c2", "c4"], ["c1", "c3"]]


def test_a_measured_latency_replaces_the_default():
    from conflict_eval.runs.spec import SuiteError
    from conflict_eval.runs.walltime import parse_latencies

    assert parse_latencies(["openai/gpt-4o-mini=0.5"]) == {"openai/gpt-4o-mini": 0.5}
    for bad in ("openai/gpt-4o-mini", "x=nan", "x=-1", "x=inf", "=1"):
        with pytest.raises(SuiteError, match="bad --latency"):
            parse_latencies([bad])
    assert seconds_for("openai/x", calls=10, output_tokens=0, samples=10, max_connections=5, latency=0.5) == 1.0


def test_a_cell_task_is_built_alone(tiny_plan, monkeypatch):
    """tasks.py's cell_NNN() builds only its own model and task entry (so, with the selection's
    facets pruning the other @task bodies, a worker loads only its own datasets; measured with
    Inspect's pruning in benchmarks/results/worker_startup.md)."""
    import conflict_eval.runs.run as run
    from conflict_eval.runs.plan import _plan_cell

    out, plan = tiny_plan
    seen = []

    class Built:
        label, task = plan["cells"][1]["label"], object()

    def record(suite, *args, models=None, **kwargs):
        seen.append(([t.label for t in suite.tasks], [m.model for m in models]))
        return [Built]

    monkeypatch.setattr(run, "build_cells", record)
    _plan_cell.cache_clear()
    assert _plan_cell(str(out / "plan.json"), "cell_002") is Built.task
    assert seen == [(["end_to_end/demo(conflict_type=temporal)"], ["conflict_eval/smollm2"])]
    _plan_cell.cache_clear()


def test_a_cell_of_an_older_or_changed_plan_is_refused_by_name(tiny_plan, tmp_path):
    from conflict_eval.runs.plan import _plan_cell
    from conflict_eval.runs.spec import SuiteError

    out, plan = tiny_plan
    old = {**plan, "cells": [{k: v for k, v in c.items() if k != "task_index"} for c in plan["cells"]]}
    (tmp_path / "plan.json").write_text(json.dumps(old))
    with pytest.raises(SuiteError, match=r"plan.json: cell cell_001 is no longer in suite .*make the plan again"):
        _plan_cell(str(tmp_path / "plan.json"), "cell_001")
    (tmp_path / "plan.json").write_text("{not json")
    with pytest.raises(SuiteError, match=r"plan.json: not a plan file"):
        _plan_cell(str(tmp_path / "plan.json"), "cell_001")
