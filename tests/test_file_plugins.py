"""Plugins without packaging: a bare .py file or module through
CONFLICT_EVAL_PLUGINS (any process, including `inspect eval`) and `--plugin`
on the conflict-eval command line, listed with where they came from."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from conflict_eval.cli import main
from conflict_eval.components.manager import ENV_VAR, PluginError, clear_plugin_sources, components

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "plugin" / "conflict_eval_example" / "__init__.py"

PLUGIN = '''
from inspect_ai.model import ChatMessageUser
from inspect_ai.scorer import Score, mean, scorer
from inspect_ai.solver import solver

from conflict_eval import ConflictQA, hookimpl


@solver
def shouting():
    async def solve(state, generate):
        record = state.metadata_as(ConflictQA)
        state.messages = [ChatMessageUser(content="FILE-PLUGIN PROMPT: " + record.question.upper())]
        return await generate(state)
    return solve


@scorer(metrics=[mean()])
def replied():
    async def score(state, target):
        return Score(value=int(bool(state.output.completion.strip())))
    return score


@hookimpl
def conflict_eval_register_methods():
    return {"shouting": shouting}


@hookimpl
def conflict_eval_register_metrics():
    return {"replied": replied}
'''


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    clear_plugin_sources()
    yield
    clear_plugin_sources()


@pytest.fixture
def plugin_file(tmp_path) -> Path:
    path = tmp_path / "my_methods.py"
    path.write_text(PLUGIN)
    return path


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    return {**env, **extra}


def test_bare_file_through_env_var_runs_in_inspect_eval(plugin_file, tmp_path):
    """The headline case: a .py file, no package, used by `inspect eval conflict_eval/run`."""
    env = _env(**{ENV_VAR: str(plugin_file)})
    listed = subprocess.run([sys.executable, "-m", "conflict_eval.cli", "list"], capture_output=True, text=True,
                            env=env, timeout=300, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.strip().startswith("shouting"))
    assert f"from plugin my_methods (file {plugin_file.resolve()}, via {ENV_VAR})" in line
    run = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "conflict_eval/run", "-T", "method=shouting",
         "-T", "dataset=demo", "-T", "scorer=replied", "--model", "scripted/x", "--limit", "2",
         "--log-dir", str(tmp_path / "logs"), "--display", "none"],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.status == "success" and len(log.samples) == 2
    assert all(s.messages[0].text.startswith("FILE-PLUGIN PROMPT: ") for s in log.samples)
    assert log.results.scores[0].name == "replied" and log.results.scores[0].metrics["mean"].value == 1.0
    assert log.eval.metadata["plugins"]["method"] == "my_methods"


def test_plugin_flag_with_file_and_module(plugin_file, tmp_path, monkeypatch, capsys):
    assert main(["--plugin", str(plugin_file), "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["method"]["shouting"]["origin"] == f"file {plugin_file.resolve()}, via --plugin"
    assert listed["method"]["end_to_end"]["origin"] == "built-in"
    clear_plugin_sources()
    pkg = tmp_path / "site"
    pkg.mkdir()
    (pkg / "extra_methods_mod.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(pkg))
    assert main(["--plugin", "extra_methods_mod", "list"]) == 0
    out = capsys.readouterr().out
    assert "from plugin extra_methods_mod (module extra_methods_mod, via --plugin)" in out


def test_example_plugin_runs_with_plugin_flag(tmp_path, capsys):
    """The example plugin's package works as a directory too (`conflict-eval --plugin DIR run`).
    A copy under other names: the installed example (README's test command) already
    registers the originals, and a name registered twice is an error."""
    import shutil

    copy = tmp_path / "example_copy"
    shutil.copytree(EXAMPLE.parent, copy)
    init = copy / "__init__.py"
    init.write_text(init.read_text().replace('"verdict_first"', '"verdict_first_copy"')
                    .replace('"capital_swaps"', '"capital_swaps_copy"').replace('"evidence_following"',
                                                                              '"evidence_following_copy"'))
    code = main(["--plugin", str(copy), "run", "--method", "verdict_first_copy", "--dataset", "demo",
                 "--scorer", "evidence_following_copy", "--model", "scripted/x", "-M", 'reply="VERDICT: A"',
                 "--limit", "2", "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    assert code == 0
    assert "evidence_following" in capsys.readouterr().out
    assert components()["method"]["verdict_first_copy"].plugin == "example_copy"


def test_env_var_with_several_entries_and_module_names(plugin_file, tmp_path, monkeypatch):
    other = tmp_path / "pkgdir" / "more_parts"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text(PLUGIN.replace('"shouting"', '"shouting2"').replace('"replied"', '"replied2"'))
    monkeypatch.setenv(ENV_VAR, os.pathsep.join([str(plugin_file), str(other)]))
    found = components()
    assert found["method"]["shouting"].plugin == "my_methods"
    assert found["method"]["shouting2"].plugin == "more_parts"
    assert found["metric"]["replied2"].origin.startswith("file ") and ENV_VAR in found["metric"]["replied2"].origin
    monkeypatch.delenv(ENV_VAR)
    assert "shouting" not in components()["method"]  # the env var is read again when it changes


@pytest.mark.parametrize("content, name, message", [
    (None, "missing.py", "no such plugin file"),
    ("raise RuntimeError('boom')\n", "broken.py", "failed to import: RuntimeError: boom"),
    (PLUGIN, "demo.py", "plugin 'demo' from"),  # the name of a built-in plugin
    (PLUGIN.replace('"shouting"', '"end_to_end"'), "dup_method.py", "method 'end_to_end' is registered by two plugins"),
])
def test_bad_plugin_sources_are_clear_errors(tmp_path, monkeypatch, content, name, message):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    monkeypatch.setenv(ENV_VAR, str(path))
    with pytest.raises(PluginError, match=message) as err:
        components()
    assert ENV_VAR in str(err.value) or "registered by two plugins" in str(err.value)
    monkeypatch.delenv(ENV_VAR)
    components()  # a good configuration loads again


def test_bad_plugin_flag_is_an_error_exit(capsys):
    assert main(["--plugin", "no_such_plugin_module_xyz", "list"]) == 2
    assert "--plugin: cannot import plugin module 'no_such_plugin_module_xyz'" in capsys.readouterr().err
