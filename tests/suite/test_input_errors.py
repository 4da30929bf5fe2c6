"""Input that fails fast and says where (issue 44, Deliver 7): each bad input
below is one ``error:`` line naming the file (and line, or the argument), exit 2.
Everything runs in-process; none of these runs a model."""

from __future__ import annotations

import time

import pytest

from conflict_eval.cli import main

GOOD = """name: ok
models: [scripted/x]
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
    limit: 1
"""

# 9 levels of 9 aliases: 9**9 (387 million) strings once expanded, in fewer bytes than the 373
BOMB = "\n".join(["a: &a [x,x,x,x,x,x,x,x,x]"]
                 + [f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]" for p, n in zip("abcdefgh", "bcdefghi")]
                 + ["name: bomb", "models: [scripted/x]", "tasks: *i", ""])


def _error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err
    assert "internal error" not in err and "Traceback" not in err, err
    return lines[0]


def _suite(tmp_path, text: str, name: str = "s.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_nested_alias_bomb_is_refused_in_under_a_second(tmp_path, capsys):
    assert len(BOMB.encode()) <= 373
    path = _suite(tmp_path, BOMB)
    start = time.monotonic()
    assert main(["suite", "show", str(path)]) == 2
    assert time.monotonic() - start < 1.0
    line = _error(capsys)
    assert str(path) in line and "aliases" in line


def test_shared_aliases_under_the_bound_still_load(tmp_path, capsys):
    text = GOOD.replace("    limit: 1\n", "    limit: 1\n    config: &c {max_tokens: 8}\n") + \
        "  - task: conflict_eval/run\n    name: again\n    args: {method: end_to_end, dataset: demo}\n    config: *c\n"
    assert main(["suite", "show", str(_suite(tmp_path, text))]) == 0


def test_a_duplicate_key_names_both_lines(tmp_path, capsys):
    path = _suite(tmp_path, GOOD + "name: other\n")
    assert main(["suite", "show", str(path)]) == 2
    line = _error(capsys)
    assert f"{path}, line 7" in line and "duplicate key 'name'" in line and "line 1" in line


@pytest.mark.parametrize("budget", [".nan", ".inf", "-.inf", "0"])
def test_nan_and_infinite_budgets_in_the_file_are_refused(tmp_path, capsys, budget):
    path = _suite(tmp_path, GOOD + f"budget: {budget}\n")
    assert main(["suite", "show", str(path)]) == 2
    line = _error(capsys)
    assert f"{path}, line 7" in line and "budget" in line


def test_a_nan_cost_limit_in_the_file_is_refused(tmp_path, capsys):
    path = _suite(tmp_path, GOOD + "eval: {cost_limit: .nan}\n")
    assert main(["suite", "show", str(path)]) == 2
    assert "cost_limit must be a positive number (finite: no NaN or infinity), got nan" in _error(capsys)


@pytest.mark.parametrize("flag", ["--budget", "--cost-limit"])
@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_nan_and_infinite_budgets_on_the_command_line_are_refused(tmp_path, capsys, flag, value):
    with pytest.raises(SystemExit) as exc:
        main(["suite", "run", str(_suite(tmp_path, GOOD)), flag, value, "--log-dir", str(tmp_path / "logs")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: must be a positive number (finite: no NaN or infinity), got '{value}'" in err
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("name", ["../../evil", "a/b", "..", "a\\\\b"])
def test_a_suite_name_stays_inside_the_log_folder(tmp_path, capsys, name):
    path = _suite(tmp_path, GOOD.replace("name: ok", f'name: "{name}"'))
    assert main(["suite", "show", str(path)]) == 2
    line = _error(capsys)
    assert f"{path}, line 1" in line and "may not contain" in line


@pytest.mark.parametrize("name", ["../x", "/abs", "a/../../b"])
def test_a_task_name_stays_relative(tmp_path, capsys, name):
    path = _suite(tmp_path, GOOD.replace("    limit: 1\n", f'    limit: 1\n    name: "{name}"\n'))
    assert main(["suite", "show", str(path)]) == 2
    line = _error(capsys)
    assert f"{path}, line 7" in line and "task name" in line


def test_a_corrupt_plan_names_its_file(tmp_path, capsys):
    plan = tmp_path / "plan"
    plan.mkdir()
    (plan / "plan.json").write_text('{"version": 1, "cells": [', encoding="utf-8")
    assert main(["suite", "status", str(plan)]) == 2
    line = _error(capsys)
    assert str(plan / "plan.json") in line and "line 1" in line and "invalid JSON" in line


@pytest.mark.parametrize("price", [".inf", ".nan"])
def test_infinite_and_nan_prices_are_refused(tmp_path, capsys, price):
    costs = tmp_path / "costs.yaml"
    costs.write_text(f"scripted/x: {{input: {price}, output: 1, input_cache_write: 1, input_cache_read: 1}}\n")
    assert main(["suite", "estimate", str(_suite(tmp_path, GOOD)), "--model-cost-config", str(costs)]) == 2
    line = _error(capsys)
    assert str(costs) in line and "'input' must be a finite number >= 0" in line


def test_a_cost_config_with_a_duplicate_model_names_both_lines(tmp_path, capsys):
    costs = tmp_path / "costs.yaml"
    entry = "{input: 1, output: 1, input_cache_write: 1, input_cache_read: 1}"
    costs.write_text(f"scripted/x: {entry}\nscripted/x: {entry}\n")
    assert main(["suite", "estimate", str(_suite(tmp_path, GOOD)), "--model-cost-config", str(costs)]) == 2
    line = _error(capsys)
    assert f"{costs}, line 2" in line and "first given on line 1" in line


def test_an_unknown_model_argument_is_a_user_error_naming_it(tmp_path, capsys, monkeypatch):
    """``-M max_connections=2`` reaches the OpenAI client as a keyword it does not
    take; Inspect raises that TypeError while building the model, before any request."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    assert main(["run", "--model", "openai/gpt-4o-mini", "-M", "max_connections=2", "--limit", "1",
                 "--log-dir", str(tmp_path / "logs"), "--display", "none"]) == 2
    line = _error(capsys)
    assert "-M max_connections=2" in line and "openai/gpt-4o-mini takes no argument 'max_connections'" in line


def test_an_unknown_model_argument_in_a_suite_is_a_user_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    path = _suite(tmp_path, GOOD.replace("[scripted/x]", "[{model: openai/gpt-4o-mini, args: {colour: red}}]"))
    assert main(["suite", "run", str(path), "--log-dir", str(tmp_path / "logs"), "--display", "none"]) == 2
    assert "model argument -M colour='red': openai/gpt-4o-mini takes no argument 'colour'" in _error(capsys)
