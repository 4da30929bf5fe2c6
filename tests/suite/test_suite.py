"""Suite files: parsing errors name the line; the default suite covers every
registered paper task; runs go through eval-set (resume)."""


import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from conflict_eval.cli import main
from conflict_eval.components.catalog import load_registry
from conflict_eval.runs import (
    GENERIC_TASK,
    ModelSpec,
    SuiteError,
    load_suite,
    paper_tasks,
    registered_tasks,
    run_suite,
)


def _load(tmp_path, text):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return load_suite(path)


GOOD = """name: t
models:
  - scripted/x
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
"""


def test_good_suite_parses(tmp_path):
    suite = _load(tmp_path, GOOD)
    assert suite.name == "t"
    assert [m.model for m in suite.models] == ["scripted/x"]
    [t] = suite.tasks
    assert (t.task, t.label, t.args, t.seeds, t.line) == (
        "conflict_eval/run", "end_to_end/demo", {"method": "end_to_end", "dataset": "demo"}, (None,), 5)


def test_unknown_task_names_the_line(tmp_path):
    with pytest.raises(SuiteError) as err:
        _load(tmp_path, GOOD.replace("task: conflict_eval/run", "task: conflict_eval/nope"))
    msg = str(err.value)
    assert "s.yaml, line 5: tasks[0].task: unknown task 'conflict_eval/nope'" in msg
    assert "conflict_eval/run" in msg  # lists what is registered


def test_unknown_task_gets_did_you_mean(tmp_path):
    with pytest.raises(SuiteError, match=r"unknown task 'conflict_eval/microat' \(did you mean 'conflict_eval/microact'"):
        _load(tmp_path, GOOD.replace("task: conflict_eval/run", "task: conflict_eval/microat"))


def test_unknown_parameter_names_the_line(tmp_path):
    text = GOOD.replace("dataset: demo}", "dataset: demo, max_turnz: 3}")
    with pytest.raises(SuiteError) as err:
        _load(tmp_path, text)
    assert "line 6: tasks[0].args.max_turnz: unknown parameter 'max_turnz'" in str(err.value)


def test_unknown_parameter_of_a_fixed_signature_task(tmp_path):
    fixed = [n for n, fn in registered_tasks().items() if n != GENERIC_TASK
             and not any(p.kind is p.VAR_KEYWORD for p in __import__("inspect").signature(fn).parameters.values())]
    assert fixed, "no registered task with a fixed signature"
    text = f"name: t\nmodels: [scripted/x]\ntasks:\n  - task: {fixed[0]}\n    args:\n      bogus_option: 1\n"
    with pytest.raises(SuiteError) as err:
        _load(tmp_path, text)
    assert f"line 6: tasks[0].args.bogus_option: unknown parameter 'bogus_option' for task '{fixed[0]}'" in str(err.value)


def test_unknown_component_names_the_line(tmp_path):
    with pytest.raises(SuiteError) as err:
        _load(tmp_path, GOOD.replace("dataset: demo}", "dataset: demoo}"))
    assert "line 6: tasks[0].args.dataset: unknown dataset 'demoo'" in str(err.value)


@pytest.mark.parametrize("model, why", [
    ("gpt-4o", "bad model string 'gpt-4o': expected 'provider/model-name'"),
    ("nosuchprovider/m", "unknown provider 'nosuchprovider'"),
])
def test_bad_model_string_names_the_line(tmp_path, model, why):
    with pytest.raises(SuiteError) as err:
        _load(tmp_path, GOOD.replace("  - scripted/x", f"  - {model}"))
    assert "line 3: models[0].model: " in str(err.value) and why in str(err.value)


def test_all_problems_reported_at_once(tmp_path):
    text = """name: t
colour: blue
models:
  - model: openai/gpt-4o
    max_connections: 0
tasks:
  - task: conflict_eval/run
    limit: -1
    seeds: [1, 1]
    config: {max_tokenz: 3}
"""
    with pytest.raises(SuiteError) as err:
        _load(tmp_path, text)
    msg = str(err.value)
    assert msg.startswith("5 problem(s) in suite file")
    for line, what in [(2, "unknown key 'colour'"), (5, "max_connections must be a positive integer"),
                       (8, "limit must be a positive integer"), (9, "seeds must be a list of distinct"),
                       (10, "unknown generate config field 'max_tokenz'")]:
        assert f"line {line}: " in msg and what in msg


def test_invalid_yaml_names_the_line(tmp_path):
    with pytest.raises(SuiteError, match=r"s.yaml, line 3: invalid YAML: mapping values are not allowed"):
        _load(tmp_path, "name: t\ntasks:\n  - task: a: b\n")


def test_duplicate_labels_rejected(tmp_path):
    text = GOOD + "  - task: conflict_eval/run\n    args: {method: end_to_end, dataset: demo}\n"
    with pytest.raises(SuiteError, match="label 'end_to_end/demo' appears twice"):
        _load(tmp_path, text)


def test_default_suite_covers_every_registered_paper_task():
    suite = load_suite("default")
    in_suite = {t.task for t in suite.tasks}
    registry_tasks = {t for e in load_registry()["methods"].values() for t in e.get("tasks", [])}
    registry_tasks |= {t for e in load_registry()["datasets"].values() for t in e.get("tasks", [])}
    registry_tasks |= {t for e in load_registry()["metrics"].values() for t in e.get("tasks", [])}
    missing = (registry_tasks | set(registered_tasks())) - {GENERIC_TASK} - in_suite
    assert not missing, f"registered tasks missing from the default suite: {missing}"
    assert GENERIC_TASK not in in_suite
    assert in_suite == set(paper_tasks())


def test_new_task_joins_default_suite_without_code_changes(tmp_path, monkeypatch):
    """A new ``tasks/<name>/task.py`` folder joins the default suite (found
    through public Inspect API: ``registry_info`` on the module's functions)."""
    import conflict_eval.tasks as tasks_pkg

    folder = tmp_path / "zz_new_paper_task"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "task.py").write_text(
        "from inspect_ai import Task, task\n\n\n"
        "@task\n"
        "def zz_new_paper_task() -> Task:\n"
        "    return Task(dataset=[])\n")
    monkeypatch.setattr(tasks_pkg, "__path__", [*tasks_pkg.__path__, str(tmp_path)])
    assert "conflict_eval/zz_new_paper_task" in {t.task for t in load_suite("default").tasks}


def _samples(log_dir):
    out = {}
    for info in list_eval_logs(str(log_dir), recursive=True):
        log = read_eval_log(info)
        out.setdefault(log.eval.metadata["suite"]["label"], []).extend(s.id for s in log.samples)
    return out


def test_run_and_resume(tmp_path, tiny_suite_text):
    suite = load_suite("tiny")
    models = [ModelSpec("scripted/x", 2, {"reply": "B</a>"})]
    ok, logs = run_suite(suite, tmp_path / "full", models=models, display="none")
    assert ok and len(logs) == 2
    assert _samples(tmp_path / "full") == {"end_to_end/demo": ["mis-01", "mis-02"],
                                          "end_to_end/demo(conflict_type=temporal)": ["tmp-01", "tmp-02"]}
    log = read_eval_log(logs[0].location, header_only=True)
    assert log.eval.metadata["suite"]["suite"] == "tiny" and log.plan.config.max_tokens == 16
    # re-running finds the tasks complete and runs nothing new
    before = sorted(p.name for p in (tmp_path / "full").glob("*.eval"))
    ok, _ = run_suite(suite, tmp_path / "full", models=models, display="none")
    assert ok and sorted(p.name for p in (tmp_path / "full").glob("*.eval")) == before


def test_seeds_become_separate_runs(tmp_path):
    text = GOOD.replace("dataset: demo}", "dataset: demo}\n    limit: 1\n    seeds: [1, 2]")
    suite = _load(tmp_path, text)
    ok, logs = run_suite(suite, tmp_path / "logs", models=[ModelSpec("scripted/x")], display="none")
    assert ok
    seeds = sorted(read_eval_log(lg.location, header_only=True).plan.config.seed for lg in logs)
    assert seeds == [1, 2]


def test_cli_suite_run_and_show(tmp_path, capsys):
    assert main(["suite", "show", "tiny"]) == 0
    assert "end_to_end/demo(conflict_type=temporal): conflict_eval/run" in capsys.readouterr().out
    code = main(["suite", "run", "tiny", "--model", "scripted/x", "-M", "reply=C</a>",
                 "--log-dir", str(tmp_path), "--display", "none"])
    out = capsys.readouterr().out
    assert code == 0 and "suite tiny: 2 task run(s), complete" in out
    assert main(["suite", "run", "tiny", "--model", "gpt4", "--log-dir", str(tmp_path)]) == 2
    assert "--model: bad model string 'gpt4'" in capsys.readouterr().err
