"""Errors a model provider trips over: one line with the fix, exit 2 (usage) or 1
(run failed), never "internal error" nor raw rich markup; every ``--json`` output
parses from standard output alone. And the endpoint as it was used, with no
secret written anywhere: runs against a loopback OpenAI-compatible server."""

import json
import time
from pathlib import Path

import pytest

from conflict_eval.cli import main
from conflict_eval.report import write_leaderboard
from conflict_eval.components.endpoint import redact, redact_url, resolve_endpoint

from openai_server import OpenAIServer, free_port

OPENAI_SUITE = """
name: oa
models: [{model: openai/local-model, args: {responses_api: false}}]
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
    limit: 2
"""

SCRIPTED_SUITE = OPENAI_SUITE.replace("{model: openai/local-model, args: {responses_api: false}}", "scripted/x")

KEY_VARS = ("OPENAI_API_KEY", "AZUREAI_OPENAI_API_KEY", "AZURE_OPENAI_API_KEY")


@pytest.fixture
def suites(tmp_path):
    (tmp_path / "oa.yaml").write_text(OPENAI_SUITE)
    (tmp_path / "scripted.yaml").write_text(SCRIPTED_SUITE)
    return tmp_path


def _one_line_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err
    assert "internal error" not in err and "[bold]" not in err and "[/" not in err, err
    return lines[0]


def test_missing_api_key(suites, monkeypatch, capsys):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    with OpenAIServer() as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        code = main(["suite", "run", str(suites / "oa.yaml"), "--log-dir", str(suites / "logs"), "--display", "none"])
    line = _one_line_error(capsys.readouterr().err)
    assert code == 2 and "set OPENAI_API_KEY" in line


def test_foreign_log_in_the_folder(suites, capsys):
    logs = str(suites / "logs")
    assert main(["suite", "run", str(suites / "scripted.yaml"), "--log-dir", logs, "--display", "none"]) == 0
    other = suites / "other.yaml"
    other.write_text(SCRIPTED_SUITE.replace("dataset: demo}", "dataset: demo, conflict_type: temporal}"))
    capsys.readouterr()
    code = main(["suite", "run", str(other), "--log-dir", logs, "--display", "none"])
    line = _one_line_error(capsys.readouterr().err)
    assert code == 2 and "--log-dir-allow-dirty" in line and ".eval" in line
    # the flag it names is accepted, and the suite's own status ignores the foreign log
    assert main(["suite", "run", str(other), "--log-dir", logs, "--display", "none", "--log-dir-allow-dirty"]) == 0


def test_estimate_over_the_budget_does_not_start(suites, capsys):
    logs = suites / "logs"
    code = main(["suite", "run", str(suites / "scripted.yaml"), "--model", "openai/gpt-4o-mini", "--estimate",
                 "--budget", "0.00001", "--log-dir", str(logs)])
    line = _one_line_error(capsys.readouterr().err)
    assert code == 2 and "over the budget" in line and "raise --budget" in line
    assert not logs.exists()


def test_misspelt_provider(suites, capsys):
    code = main(["suite", "estimate", str(suites / "scripted.yaml"), "--model", "opnai/gpt-4o"])
    line = _one_line_error(capsys.readouterr().err)
    assert code == 2 and "unknown provider 'opnai'" in line


def test_missing_folder(tmp_path, capsys):
    code = main(["suite", "status", str(tmp_path / "nowhere")])
    line = _one_line_error(capsys.readouterr().err)
    assert code == 2 and "no such log directory" in line and "0 of 0" not in line


def test_unreachable_endpoint_fails_fast_with_no_secret(suites, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://user:SECRET@127.0.0.1:{free_port()}/v1")
    start = time.monotonic()
    code = main(["suite", "run", str(suites / "oa.yaml"), "--log-dir", str(suites / "logs"), "--display", "none"])
    out = capsys.readouterr()
    line = _one_line_error(out.err)
    assert code == 1 and "cannot reach http://127.0.0.1:" in line and "OPENAI_BASE_URL" in line
    assert time.monotonic() - start < 60
    assert "SECRET" not in out.out + out.err


def test_unpriced_model_is_n_a_in_the_estimate(suites, capsys):
    # a model name no other test prices (Inspect's model database is per process)
    assert main(["suite", "estimate", str(suites / "scripted.yaml"), "--model", "scripted/never-priced"]) == 0
    [total] = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("total ")]
    assert "n/a" in total and "$0.0000" not in total


def test_offline_default_suite_estimate_advice_fits_a_suite(monkeypatch, capsys):
    monkeypatch.setenv("CONFLICT_EVAL_OFFLINE", "1")
    code = main(["suite", "estimate", "default", "--model", "openai/gpt-4o-mini", "--limit", "1"])
    out, err = capsys.readouterr()
    if code == 0:  # the estimate lists the tasks it has no data for, each with the advice
        assert "no figures (data not available here)" in out
        assert "-T path=" not in out and "`args:`" in out
        return
    line = _one_line_error(err)
    assert code == 2 and "-T path=" not in line and "args:" in line


@pytest.mark.parametrize("argv", [["suite", "estimate", "{suite}", "--json"], ["suite", "status", "{logs}", "--json"],
                                  ["list", "--json"]])
def test_every_json_output_parses_from_stdout_alone(suites, capsys, argv):
    logs = suites / "logs"
    if "{logs}" in argv:  # a folder to read (the other commands read none)
        assert main(["suite", "run", str(suites / "scripted.yaml"), "--log-dir", str(logs), "--display", "none"]) == 0
    capsys.readouterr()
    main([a.format(suite=suites / "scripted.yaml", logs=logs) for a in argv])
    json.loads(capsys.readouterr().out)


def test_redaction():
    assert redact_url("http://user:TOK@host:8/v1?api_key=K&x=1#frag") == "http://host:8/v1?api_key=REDACTED&x=1"
    assert redact("see https://a:b@h/p?token=T and ftp://h2") == "see https://h/p?token=REDACTED and ftp://h2"
    assert resolve_endpoint("openai/m", environ={"OPENAI_BASE_URL": "http://u:S@127.0.0.1:9/v1"}) == {
        "url": "http://127.0.0.1:9/v1", "source": "environment OPENAI_BASE_URL"}
    assert resolve_endpoint("openai-api/deepseek/m", environ={"DEEPSEEK_BASE_URL": "http://h/v1"})["url"] == "http://h/v1"
    assert resolve_endpoint("openai/m", environ={})["source"] == "provider default"


@pytest.mark.parametrize("userinfo", ["", "user:SECRET@"])
def test_endpoint_from_the_environment_is_on_the_page_and_no_secret_anywhere(suites, monkeypatch, capsys, userinfo):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    logs, out = suites / "logs", suites / "page"
    with OpenAIServer() as srv:
        url = srv.url.replace("http://", f"http://{userinfo}") + ("?api_key=SECRET" if userinfo else "")
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        assert main(["suite", "run", str(suites / "oa.yaml"), "--log-dir", str(logs), "--display", "none"]) == 0
        assert main(["suite", "status", str(logs)]) == 0
        assert srv.seen and all("chat/completions" in s["path"] for s in srv.seen)
    assert main(["leaderboard", str(logs), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    md = (out / "leaderboard.md").read_text()
    assert f"endpoint: {srv.url}" in md and "(environment OPENAI_BASE_URL)" in md and "default endpoint" not in md
    assert f"--model-base-url {srv.url}" not in md  # Inspect recorded no flag; the command leaves the env to the user
    written = [p for p in out.rglob("*") if p.is_file()] + [p for p in logs.rglob("*.json") if p.is_file()]
    assert len(written) >= 6
    for p in written:
        assert "SECRET" not in p.read_text(errors="replace"), p
    assert "SECRET" not in printed.out + printed.err


def test_base_url_flag_with_a_token_is_redacted_on_the_page(tmp_path, monkeypatch, capsys):
    """A plain `inspect eval --model-base-url http://user:TOKEN@.../v1?key=TOKEN`: Inspect logs
    the URL (its own log); the page, the command and the printed table do not."""
    from inspect_ai import eval as inspect_eval

    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with OpenAIServer() as srv:
        url = srv.url.replace("http://", "http://user:TOKEN@") + "?key=TOKEN"
        log, = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo"},
                            model="openai/local-model", model_base_url=url, model_args={"responses_api": False},
                            limit=2, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success"
    paths = write_leaderboard([tmp_path / "logs"], tmp_path / "page")
    for p in paths.values():
        text = Path(p).read_text()
        assert "TOKEN" not in text, p
    md = paths["md"].read_text()
    assert f"{srv.url}?key=REDACTED (--model-base-url / base_url model arg)" in md
    assert f"--model-base-url '{srv.url}?key=REDACTED'" in md


def test_estimate_json_in_a_fresh_process_has_no_banner_on_stdout(suites):
    """Inspect prints its banner once per process, on the first model it builds."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "conflict_eval.cli", "suite", "estimate", str(suites / "oa.yaml"),
                          "--model", "openai/gpt-4o-mini", "--json"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["total"]["calls"] == 2.0


@pytest.mark.parametrize("how", ["inspect eval", "conflict-eval run"])
def test_endpoint_from_the_environment_is_recorded_by_our_tasks(tmp_path, monkeypatch, capsys, how):
    """A plain `inspect eval` (and `conflict-eval run`) of our task against an endpoint taken
    from OPENAI_BASE_URL: the task records it (secrets stripped) and the page shows it,
    not "not recorded"."""
    from inspect_ai import eval as inspect_eval

    monkeypatch.setenv("OPENAI_API_KEY", "x")
    logs = tmp_path / "logs"
    model = f"openai/env-{how.split()[0]}"  # Inspect reuses a model (and its client's URL) per name in a process
    with OpenAIServer() as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url.replace("http://", "http://user:SECRET@") + "?key=SECRET")
        if how == "inspect eval":
            [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo"},
                                 model=model, model_args={"responses_api": False}, limit=2,
                                 log_dir=str(logs), display="none", max_retries=0)
            assert log.status == "success"
        else:
            assert main(["run", "--method", "end_to_end", "--dataset", "demo", "--model", model,
                         "-M", "responses_api=false", "--limit", "2", "--log-dir", str(logs),
                         "--display", "none"]) == 0
        assert srv.seen
    paths = write_leaderboard([logs], tmp_path / "page")
    md = paths["md"].read_text()
    assert f"{srv.url}?key=REDACTED (environment OPENAI_BASE_URL)" in md and "not recorded (Inspect" not in md, [ln for ln in md.splitlines() if "endpoint" in ln]
    for p in paths.values():
        assert "SECRET" not in Path(p).read_text(), p
