"""`conflict-eval run` honours Inspect's environment settings like `inspect
eval` does (INSPECT_LOG_DIR, INSPECT_EVAL_MODEL, INSPECT_EVAL_LIMIT, a .env
file); `score` takes -T like `run`."""

import json
import os

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from conflict_eval.cli import main

VARS = ("INSPECT_LOG_DIR", "INSPECT_EVAL_MODEL", "INSPECT_EVAL_LIMIT", "INSPECT_DISPLAY", "INSPECT_EVAL_MAX_TOKENS")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    saved = {v: os.environ.get(v) for v in VARS}
    for v in VARS:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.chdir(tmp_path)
    yield
    for v, value in saved.items():  # a .env file loaded by a test sets variables directly
        if value is None:
            os.environ.pop(v, None)
        else:
            os.environ[v] = value


def _logs(path):
    return [read_eval_log(i) for i in list_eval_logs(str(path))]


def test_run_writes_where_inspect_log_dir_says(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "from-env"))
    assert main(["run", "--model", "scripted/x", "--limit", "1", "--display", "none"]) == 0
    [log] = _logs(tmp_path / "from-env")
    assert log.status == "success"
    assert not (tmp_path / "logs").exists()
    assert str(tmp_path / "from-env") in capsys.readouterr().out
    # a flag still wins over the environment
    assert main(["run", "--model", "scripted/x", "--limit", "1", "--display", "none",
                 "--log-dir", str(tmp_path / "flag")]) == 0
    assert len(_logs(tmp_path / "flag")) == 1 and len(_logs(tmp_path / "from-env")) == 1


def test_run_takes_model_and_limit_from_inspect_env(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_EVAL_MODEL", "scripted/from-env")
    monkeypatch.setenv("INSPECT_EVAL_LIMIT", "2")
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    assert main(["run", "--log-dir", str(tmp_path / "l")]) == 0
    [log] = _logs(tmp_path / "l")
    assert log.eval.model == "scripted/from-env" and len(log.samples) == 2


def test_run_reads_a_dotenv_file(tmp_path):
    (tmp_path / ".env").write_text("INSPECT_LOG_DIR=dotenv-logs\nINSPECT_EVAL_MODEL=scripted/dotenv\n")
    assert main(["run", "--limit", "1", "--display", "none"]) == 0
    [log] = _logs(tmp_path / "dotenv-logs")
    assert log.eval.model == "scripted/dotenv"


@pytest.mark.parametrize("flag", ["-T"])
def test_score_option_flag(tmp_path, flag, capsys):
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"predicted": "The Eiffel Tower!", "gold": "the eiffel tower"}) + "\n")
    assert main(["score", "--metric", "token_f1", flag, "normalizer=squad", "--json", str(preds)]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 1.0
    assert main(["score", "--metric", "token_f1", flag, "normaliser=squad", str(preds)]) == 2
    assert "did you mean 'normalizer'" in capsys.readouterr().err

    # the old alias -O is gone: one flag for task, metric and scorer options
    with pytest.raises(SystemExit):
        main(["score", "--metric", "token_f1", "-O", "normalizer=squad", str(preds)])

@pytest.mark.parametrize("where", ["env", "flag"])
def test_run_with_base_url_in_inspect_eval_model_args(tmp_path, monkeypatch, where):
    """A base_url given only in INSPECT_EVAL_MODEL_ARGS (no -M) on a non-batch run: before,
    Inspect read the variable again and called get_model with base_url twice (TypeError,
    exit 1). Now the run reaches the server once per sample, as with -M base_url=."""
    from openai_server import OpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-for-test")
    with OpenAIServer(reply="<a>A</a>", delay=0) as srv:
        flags = []
        if where == "env":
            monkeypatch.setenv("INSPECT_EVAL_MODEL_ARGS", f"base_url={srv.url} responses_api=false")
        else:
            monkeypatch.delenv("INSPECT_EVAL_MODEL_ARGS", raising=False)
            flags = ["-M", f"base_url={srv.url}", "-M", "responses_api=false"]
        rc = main(["run", "--model", "openai/gpt-4o", "--limit", "1", "--display", "none",
                   "--log-dir", str(tmp_path / "l"), *flags])
        calls = srv.counts.get("live", 0)
    assert rc == 0 and calls == 1
    [log] = _logs(tmp_path / "l")
    assert log.status == "success" and log.eval.model_base_url == srv.url
    assert log.eval.metadata["conflict_eval_endpoint"]["openai/gpt-4o"]
