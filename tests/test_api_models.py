"""API models out of the box: the `api` extra installs the OpenAI and
Anthropic clients, and with it `inspect eval conflict_eval/microact --model
openai/gpt-4o` needs nothing else. The OpenAI endpoint is a stand-in on
127.0.0.1 (nothing leaves the machine); the key is a dummy."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from openai_server import OpenAIServer

REPO = Path(__file__).resolve().parents[1]
REPLY = "<a>A</a>"


def test_api_extra_names_the_clients_the_readme_shows():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {d.split(">")[0].split("=")[0].strip() for d in extras["api"]}
    assert {"openai", "anthropic"} <= names
    readme = (REPO / "README.md").read_text()
    assert "[api]" in readme and "--model openai/" in readme


@pytest.fixture
def stand_in():
    with OpenAIServer(REPLY) as srv:
        yield srv


def test_inspect_eval_microact_with_openai_model(stand_in, tmp_path):
    pytest.importorskip("openai", reason="the api extra (pip install 'conflict-eval[api]') is not installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "INSPECT_EVAL_MODEL"))}
    env.update(OPENAI_API_KEY="sk-dummy-for-test", OPENAI_BASE_URL=stand_in.url, NO_PROXY="127.0.0.1",
               no_proxy="127.0.0.1")
    result = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "conflict_eval/microact", "--model", "openai/gpt-4o",
         "-T", "dataset=demo", "-T", "max_turns=2", "--limit", "1", "--log-dir", str(tmp_path / "logs"),
         "--display", "none", "--max-retries", "0"],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.status == "success", log.error
    assert log.eval.model == "openai/gpt-4o" and len(log.samples) == 1
    assert stand_in.seen, "the OpenAI client never called the stand-in"
    assert all(s["auth"] == "Bearer sk-dummy-for-test" for s in stand_in.seen)
    assert {s["body"].get("model") for s in stand_in.seen} == {"gpt-4o"}
    usage = log.samples[0].model_usage["openai/gpt-4o"]
    assert usage.input_tokens == sum(i for i, _ in stand_in.live_usage)  # the server's own count, every call
