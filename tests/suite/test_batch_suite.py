"""Suites with `batch:` run through a provider's batch API: a two-model suite
against a local OpenAI-compatible batch server (tests/openai_server.py)."""

import json
from pathlib import Path
import os
import signal
from collections import Counter

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from conflict_eval.runs import load_suite, run_suite
from conflict_eval.runs.batching import BatchSettingError, check_batch, parse_batch_flag
from conflict_eval.runs.spec import SuiteError

from openai_server import OpenAIServer

PRICE = {"input": 2.0, "output": 8.0, "input_cache_write": 2.0, "input_cache_read": 2.0}  # USD per 1M tokens, list price of both fake models

# max_retries/timeout bound a run whose server has gone (Inspect retries a batch call for
# minutes otherwise); each test uses its own model names, since Inspect reuses a model
# instance (and its client's base URL) across runs in one process
SUITE = """name: batched
models:
  - model: openai/{a}
    batch: {{size: 4, send_delay: 0.3, tick: 0.2}}
  - model: openai/{b}
    batch: {batch_b}
eval: {{model_cost_config: costs.yaml, retry_attempts: 1}}
tasks:
  - task: conflict_eval/run
    args: {{method: end_to_end, dataset: demo}}
    limit: 4
    config: {{max_retries: 2, timeout: 60}}
"""


def _reply(prompt: str) -> str:
    return "B</a>"


# model b leaves the batch size to Inspect (its default) but not the timing: Inspect's
# default send delay and tick are 15 s each, 30 s of waiting for the same check;
# that `batch: true` reaches Inspect unchanged is checked without a server below
B_TIMING = "{send_delay: 0.3, tick: 0.2}"


def _suite(tmp_path, batch_b=B_TIMING, a="fake-a", b="fake-b"):
    (tmp_path / "costs.yaml").write_text(json.dumps({f"openai/{a}": PRICE, f"openai/{b}": PRICE}))
    path = tmp_path / "batched.yaml"
    path.write_text(SUITE.format(batch_b=batch_b, a=a, b=b))
    return load_suite(path)


@pytest.fixture
def server(monkeypatch):
    srv = OpenAIServer(_reply, delay=0.3, lifetime=240).start()
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    yield srv
    srv.stop()


def test_batch_values_are_checked(tmp_path):
    for ok in (True, False, 1000, {"size": 10, "send_delay": 5, "tick": 1, "max_batches": 3}):
        check_batch(ok)
    for bad in (0, -3, "yes", {"sise": 10}, {"size": "ten"}):
        with pytest.raises(BatchSettingError):
            check_batch(bad)
    assert parse_batch_flag("") is True and parse_batch_flag("500") == 500
    (tmp_path / "b.yaml").write_text("size: 50\ntick: 2\n")
    assert parse_batch_flag(str(tmp_path / "b.yaml")) == {"size": 50, "tick": 2}
    assert [m.batch for m in _suite(tmp_path).models] == [{"size": 4, "send_delay": 0.3, "tick": 0.2},
                                                          {"send_delay": 0.3, "tick": 0.2}]
    assert [m.batch for m in _suite(tmp_path, batch_b="true").models][1] is True
    (tmp_path / "bad.yaml").write_text("name: x\nmodels:\n  - model: openai/a\n    batch: {sise: 3}\n"
                                       "tasks: [conflict_eval/run]\n")
    with pytest.raises(SuiteError, match=r"line 4: models\[0\]\.batch: unknown BatchConfig field"):
        load_suite(tmp_path / "bad.yaml")


@pytest.mark.parametrize("value,expected", [("true", True), ("1000", 1000), ("false", False)])
def test_batch_reaches_inspect_unchanged(tmp_path, value, expected):
    """`batch: true` (Inspect's default size and timing) and `batch: N` are passed to
    Inspect's GenerateConfig as written; a mapping becomes a BatchConfig."""
    from inspect_ai.model import BatchConfig

    from conflict_eval.runs.run import build_cells, model_config

    suite = _suite(tmp_path, batch_b=value)
    assert model_config(suite.models[1]).batch == expected and type(model_config(suite.models[1]).batch) is type(expected)
    assert model_config(suite.models[0]).batch == BatchConfig(size=4, send_delay=0.3, tick=0.2)
    cells = build_cells(suite, connect=False)  # the suite's cost config
    assert {c.model.model: model_config(c.model).batch for c in cells}["openai/fake-b"] == expected


@pytest.mark.slow
def test_batched_suite_through_the_batches_endpoint(tmp_path, server):
    """Every sample answered once, through the Batches endpoint only; the page's
    cost is the list cost of the server's recorded usage at half price."""
    from conflict_eval.report.build import build_leaderboard

    suite = _suite(tmp_path)
    run = run_suite(suite, tmp_path / "logs", display="none")
    assert run.success, run.statuses
    # 4 samples x 2 models, one call each, all through batches. The only live calls are
    # Inspect's own once-per-model probe for reasoning summaries (openai provider,
    # Responses API), never a sample's prompt.
    assert [body["model"] for _, body in server.live] in (["fake-a", "fake-b"], ["fake-b", "fake-a"])
    assert all(body["input"] == "Please say 'hello, world'" for _, body in server.live)
    assert len(server.custom_ids) == 8 and len(set(server.custom_ids)) == 8
    assert server.counts["batches.create"] >= 2 and server.counts["files.content"] >= 2
    assert server.running() == []
    logs = [read_eval_log(i) for i in list_eval_logs(str(tmp_path / "logs"), recursive=True)]
    assert sorted(lg.eval.model for lg in logs) == ["openai/fake-a", "openai/fake-b"]
    for lg in logs:
        assert lg.status == "success" and len(lg.samples) == 4
        assert sorted(s.id for s in lg.samples) == sorted({s.id for s in lg.samples})
        assert all(s.output.completion.endswith("B</a>") and s.error is None for s in lg.samples)
    # by hand: list cost = in x 2 + out x 8 per 1M tokens; batch = half of it (prices.yaml batch.openai)
    tokens_in = sum(i for i, _ in server.usage)
    tokens_out = sum(o for _, o in server.usage)
    assert tokens_in > 0 and tokens_out == 8  # one word per reply
    expected = (tokens_in * 2.0 + tokens_out * 8.0) / 1e6 * 0.5
    board = build_leaderboard([tmp_path / "logs"], bootstrap=0)
    rows = board["rows"] if isinstance(board, dict) else board.rows
    total = sum(r.cost_total for r in rows)
    assert total == pytest.approx(expected, rel=1e-9)
    assert all("batch x0.5" in (r.cost_source or "") for r in rows)
    # each cell says how it was made (issue 44.6): its own model's batch setting, not the task's union;
    # the commit of the code that ran; a reproduce command repeating --batch and the cost config
    from conflict_eval.report.provenance import cell
    from conflict_eval.records.source import source_info

    made = {r.model: cell(board["provenance"], r.model, r.task) for r in rows}
    a, b = made["openai/fake-a"], made["openai/fake-b"]
    assert [c["batch"] for c in a["made"]["generate_config"]] == ['{"send_delay": 0.3, "size": 4, "tick": 0.2}']
    assert [c["batch"] for c in b["made"]["generate_config"]] == ['{"send_delay": 0.3, "tick": 0.2}']
    assert a["made"]["judges"] is None and b["made"]["judges"] is None  # not model-graded
    commit = source_info()["git_commit"]
    assert all(c["made"]["git_commit"] == [commit + (" (with uncommitted changes)" if source_info()["dirty"] else "")]
               if commit else ["none: conflict-eval was not run from a git checkout"] for c in (a, b))
    assert " --batch 4 " in a["command"] and " --batch --model-cost-config " in b["command"]
    assert all(c["command"].split("--model-cost-config ")[1].split()[0].endswith("/costs.yaml") for c in (a, b))
    assert str(tmp_path) not in a["command"] + b["command"]  # no machine path
    from conflict_eval.report import to_html, to_markdown

    page = to_markdown(board)
    [row_a] = [ln for ln in page.splitlines() if ln.startswith("| openai/fake-a | batch ")]
    assert "size" in row_a and "not model-graded" in row_a and (commit or "not run from a git checkout") in row_a
    assert '<table class="made">' in to_html(board)


@pytest.mark.slow
@pytest.mark.parametrize("fail,models,message", [
    ("failed", ("fake-c", "fake-d"), "simulated rejected batch"),
    # OpenAI writes expired requests to the error file with the string code "batch_expired";
    # Inspect 0.3.285 cannot read an error line (it fails the whole batch with a TypeError):
    # the watch (runs.batch_faults) gives each request the provider's own cause instead
    ("expired", ("fake-i", "fake-j"), "the provider answered with an error (batch_expired: This request could "
                                      "not be executed before the completion window expired.)"),
])
def test_failed_batch_becomes_sample_errors(tmp_path, monkeypatch, fail, models, message):
    """A rejected or expired batch is an error on each of its samples, never an answer."""
    with OpenAIServer(_reply, delay=0.2, fail=fail, lifetime=120) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
        suite = _suite(tmp_path, batch_b="{size: 4, send_delay: 0.3, tick: 0.2}", a=models[0], b=models[1])
        run = run_suite(suite, tmp_path / "logs", display="none", retry_attempts=0)
    assert not run.success
    assert srv.usage == [] and all("Question:" not in json.dumps(b) for _, b in srv.live)
    logs = [read_eval_log(i) for i in list_eval_logs(str(tmp_path / "logs"), recursive=True)]
    assert sorted(lg.eval.model for lg in logs) == [f"openai/{m}" for m in models]
    assert all(lg.status == "error" for lg in logs)
    for lg in logs:
        assert len(lg.samples) == 4
        for s in lg.samples:
            assert s.error is not None and message in s.error.message
            assert not s.scores


@pytest.mark.slow
def test_budget_stops_a_batched_run_cleanly(tmp_path, monkeypatch):
    """Each batched call reserves its estimated cost (at the batch price) before it is
    queued; a call that would pass the budget is never submitted. The stop waits for the
    submitted batch, so nothing is left running at the provider, and says what was sent."""
    from conflict_eval.runs.budget import read_stop
    from conflict_eval.runs.run import build_cells, cells_batch_budget

    with OpenAIServer(_reply, delay=0.3, lifetime=200) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
        suite = _suite(tmp_path, a="fake-g", b="fake-h")
        suite = type(suite)(**{**suite.__dict__, "models": suite.models[:1]})  # fake-g, batch size 4
        cells = build_cells(suite, connect=False)  # the suite's cost config
        batch, reserve = cells_batch_budget(cells)
        r = reserve["openai/fake-g"]
        assert batch == {"openai/fake-g": {"size": 4, "send_delay": 0.3, "tick": 0.2}} and r > 0
        budget = 2.5 * r  # room for two reservations: the third call is held back
        run = run_suite(suite, tmp_path / "logs", display="none", budget=budget)
        assert srv.running() == []  # nothing left at the provider
    assert not run.success and run.stop_reason == "budget"
    stop = read_stop(tmp_path / "logs")
    assert stop["conflict_eval_stop_reason"] == "budget"
    assert stop["submitted"]["calls"] == {"openai/fake-g": 2} and stop["submitted"]["held_back"] >= 1
    assert stop["submitted"]["batched_models"] == ["openai/fake-g"]
    assert len(srv.custom_ids) == 2  # the provider saw exactly the two admitted requests
    # the spend counted is what those two cost at the batch price (by hand from the server's usage)
    spent = sum(i * 2.0 + o * 8.0 for i, o in srv.usage) / 1e6 * 0.5
    assert run.spent_usd == pytest.approx(spent, rel=1e-9)
    [lg] = [read_eval_log(i) for i in list_eval_logs(str(tmp_path / "logs"), recursive=True)]
    assert lg.status == "cancelled"
    answered = [s for s in lg.samples if s.error is None and s.scores]
    assert len(answered) == 2  # the two answered samples were scored and kept, not thrown away


@pytest.mark.slow
def test_conflict_eval_run_batch_flag(tmp_path, monkeypatch):
    """`conflict-eval run --batch FILE` sends the task's calls through the Batches endpoint."""
    from conflict_eval.cli import main

    (tmp_path / "batch.yaml").write_text("size: 2\nsend_delay: 0.3\ntick: 0.2\n")
    with OpenAIServer(_reply, delay=0.2, lifetime=120) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
        rc = main(["run", "--model", "openai/fake-e", "--batch", str(tmp_path / "batch.yaml"), "--limit", "2",
                   "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    assert rc == 0
    assert len(srv.custom_ids) == 2 and srv.counts["batches.create"] >= 1
    assert all("Question:" not in json.dumps(b) for _, b in srv.live)
    [lg] = [read_eval_log(i) for i in list_eval_logs(str(tmp_path / "logs"))]
    assert lg.eval.model_generate_config.batch is not None or lg.plan.config.batch is not None


class _SignalOn(Counter):
    """The fake server's request counts, sending a signal to this process the first time
    a request is counted: the event, from the server's thread, before it answers."""

    def __init__(self, events: dict):
        super().__init__()
        self.events = dict(events)  # counts key -> signal

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        sig = self.events.pop(key, None)
        if sig is not None:
            os.kill(os.getpid(), sig)


def _batched_server(monkeypatch, signal_on: dict | None = None):
    """A server whose batches stay in progress (as a provider's do for hours) and that
    sends SIGINT to this process when Inspect first polls a batch (it holds the batch's
    ID then); ``signal_on`` adds or replaces {request counted: signal}."""
    srv = OpenAIServer(_reply, delay=60, lifetime=60).start()
    srv.counts = _SignalOn({"batches.retrieve": signal.SIGINT, **(signal_on or {})})
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    return srv


def test_ctrl_c_cancels_the_submitted_batches_then_a_rerun_resumes(tmp_path, monkeypatch, capsys):
    """Ctrl-C while a batch is in progress at the provider: the batch is cancelled there,
    the run says so, the stop record lists it, the log closes cancelled, and the same run
    again answers every sample exactly once."""
    from conflict_eval.runs.budget import read_stop

    srv = _batched_server(monkeypatch)
    try:
        suite = _suite(tmp_path, a="fake-k", b="fake-l")
        suite = type(suite)(**{**suite.__dict__, "models": suite.models[:1]})  # fake-k, batch size 4
        run = run_suite(suite, tmp_path / "logs", display="none")
        assert run.stop_reason == "SIGINT" and not run.success
        assert srv.counts["batches.create"] == 1 and srv.counts["batches.cancel"] == 1
        assert srv.running() == []  # nothing left at the provider
        [bid] = srv.batches
        err = capsys.readouterr().err
        assert "cancelled 1 batch(es) (4 requests) at the provider" in err
        expected = {"cancelled": [{"id": bid, "model": "openai/fake-k", "status": "cancelled", "requests": 4,
                                   "completed": 0}],
                    "finished_before_cancel": [], "still_running": [], "unwatched_models": []}
        assert run.batches == expected
        stop = read_stop(tmp_path / "logs")
        assert stop["conflict_eval_stop_reason"] == "SIGINT" and stop["batches"] == expected
        [lg] = [read_eval_log(i) for i in list_eval_logs(str(tmp_path / "logs"), recursive=True)]
        assert lg.status == "cancelled" and not [s for s in lg.samples if s.scores]
        from conflict_eval.cli import main

        capsys.readouterr()
        assert main(["suite", "status", str(tmp_path / "logs")]) == 1
        assert "batches: 1 cancelled at the provider (4 requests)\n" in capsys.readouterr().out
        srv.delay = 0.2  # the provider answers the resumed run's batch
        again = run_suite(suite, tmp_path / "logs", display="none")
        assert again.success, again.statuses
        assert again.batches is None and read_stop(tmp_path / "logs") is None
    finally:
        srv.stop()
    assert len(srv.custom_ids) == 4 and srv.counts["batches.create"] == 2  # only the new batch was answered
    logs = [read_eval_log(i) for i in list_eval_logs(str(tmp_path / "logs"), recursive=True)]
    [ok] = [lg for lg in logs if lg.status == "success"]
    ids = [s.id for s in ok.samples]
    assert len(ids) == len(set(ids)) == 4 and all(s.output.completion.endswith("B</a>") for s in ok.samples)


def test_sigterm_of_conflict_eval_run_cancels_its_batch(tmp_path, monkeypatch, capsys):
    """`conflict-eval run --batch` stopped by SIGTERM: exit 143, the log closes cancelled,
    and the batch it had submitted is cancelled at the provider."""
    from conflict_eval.cli import main

    (tmp_path / "batch.yaml").write_text("size: 2\nsend_delay: 0.3\ntick: 0.2\n")
    srv = _batched_server(monkeypatch, {"batches.retrieve": signal.SIGTERM})
    try:
        rc = main(["run", "--model", "openai/fake-m", "--batch", str(tmp_path / "batch.yaml"), "--limit", "2",
                   "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    finally:
        srv.stop()
    err = capsys.readouterr().err
    assert rc == 143, err
    assert "interrupted (SIGTERM)" in err and "cancelled 1 batch(es) (2 requests) at the provider" in err
    assert srv.running() == [] and srv.counts["batches.cancel"] == 1 and srv.custom_ids == []
    [lg] = [read_eval_log(i, header_only=True) for i in list_eval_logs(str(tmp_path / "logs"))]
    assert lg.status == "cancelled"


def test_a_second_ctrl_c_leaves_at_once_and_lists_the_batches(tmp_path, monkeypatch, capsys):
    """A second Ctrl-C while the batches are being cancelled stops at once; the batch is
    listed as possibly still running with the command that cancels it, on the console and
    in the stop record (written before the cancels began)."""
    from conflict_eval.runs.budget import read_stop

    srv = _batched_server(monkeypatch, {"batches.cancel": signal.SIGINT})
    try:
        suite = _suite(tmp_path, a="fake-n", b="fake-o")
        suite = type(suite)(**{**suite.__dict__, "models": suite.models[:1]})
        with pytest.raises(KeyboardInterrupt):
            run_suite(suite, tmp_path / "logs", display="none")
    finally:
        srv.stop()
    [bid] = srv.batches
    command = f"curl -X POST '{srv.base_url}/batches/{bid}/cancel' -H \"Authorization: Bearer $OPENAI_API_KEY\""
    err = capsys.readouterr().err
    assert "1 batch(es) may still be running at the provider" in err and command in err
    stop = read_stop(tmp_path / "logs")
    assert stop["conflict_eval_stop_reason"] == "SIGINT"
    assert [(b["id"], b["model"], b["cancel"]) for b in stop["batches"]["still_running"]] == \
        [(bid, "openai/fake-n", command)]
    assert "test-key-not-secret" not in json.dumps(stop)  # the key is never written


def test_batch_watch_reads_the_providers_answers_and_lists_what_it_could_not_cancel(capsys):
    """The watch learns a batch from its creation or its first poll (Together creates
    batches with another client), keeps the status the provider reports, and a cancel the
    provider refuses leaves the batch listed with its command; a model whose client it
    cannot see is reported as unwatched, not passed over."""
    import asyncio
    import io

    from inspect_ai.model import get_model
    from openai import AsyncOpenAI

    from conflict_eval.runs.batch_stop import BatchWatch

    with OpenAIServer(_reply, delay=60, lifetime=30) as srv:
        model = srv.model("openai/fake-p")
        hooks = model.api.http_client.event_hooks["response"]
        before = len(hooks)
        watch = BatchWatch()
        assert watch.watch("openai/fake-p", model) and watch.watch("openai/fake-p", model)
        assert len(hooks) == before + 1  # hooked once
        assert not watch.watch("anthropic/claude-x", get_model("mockllm/model"))
        client = model.api.client  # the model's own OpenAI client: its requests pass the hook
        other = AsyncOpenAI(base_url=srv.url, api_key="sk-other")  # not watched
        line = json.dumps({"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions",
                           "body": {"model": "fake-p", "messages": [{"role": "user", "content": "hi"}]}})

        async def submit():
            ids = []
            for c in (client, other):  # the second is made elsewhere, then polled by the model's client
                f = await c.files.create(file=("b.jsonl", io.BytesIO(line.encode())), purpose="batch")
                ids.append((await c.batches.create(input_file_id=f.id, endpoint="/v1/chat/completions",
                                                   completion_window="24h")).id)
            await client.batches.retrieve(ids[1])
            return ids

        a, b = asyncio.run(submit())
        assert sorted(x.id for x in watch.running()) == sorted([a, b])
        assert watch.batches[b].status == "in_progress" and watch.batches[b].requests == 1
        del srv.batches[b]  # the provider no longer knows it: its cancel fails (HTTP 404)
        record = watch.stop()
    err = capsys.readouterr().err
    assert "cancelled 1 batch(es) (1 requests) at the provider" in err
    assert f"{b} (openai/fake-p, 1 requests; HTTP 404: no batch {b})" in err
    assert "batches of anthropic/claude-x are not visible" in err
    assert [x["id"] for x in record["cancelled"]] == [a] and record["unwatched_models"] == ["anthropic/claude-x"]
    [left] = record["still_running"]
    assert left["id"] == b and left["cancel"] == (f"curl -X POST '{srv.base_url}/batches/{b}/cancel' "
                                                  "-H \"Authorization: Bearer $OPENAI_API_KEY\"")


def test_suite_status_lines_for_the_batches_a_stop_left():
    """By hand from a stop record: billed-but-unread requests and batches that may still run are said."""
    from conflict_eval.runs.batch_stop import batch_lines

    record = {"cancelled": [{"id": "b1", "model": "openai/x", "status": "cancelled", "requests": 10, "completed": 3}],
              "finished_before_cancel": [{"id": "b2", "model": "openai/x", "status": "completed", "requests": 5,
                                          "completed": 5}],
              "still_running": [{"id": "b3", "model": "openai/x", "status": "in_progress",
                                 "cancel": "curl -X POST 'http://h/v1/batches/b3/cancel'"}],
              "unwatched_models": ["anthropic/y"]}
    assert batch_lines(record) == [
        "batches: 1 cancelled at the provider (10 requests); 3 had already completed there: billed, "
        "results not read, not in the logs' cost",
        "batches: 1 finished at the provider before the cancel (5 requests): billed, results not read, "
        "not in the logs' cost",
        "batch b3 (openai/x) may still be running at the provider; cancel it: "
        "curl -X POST 'http://h/v1/batches/b3/cancel'",
        "batches of anthropic/y could not be seen, so were not cancelled: check the provider's console"]
    assert batch_lines(None) == [] and batch_lines({}) == []


def test_requests_billed_before_a_cancel_stay_on_the_page_after_a_resume(tmp_path):
    """A cancel's answered-but-unread requests are kept beside the logs (a resume clears the
    stop record, not the bill), counted once per batch, and said on the page; never priced."""
    from conflict_eval.report.build import write_leaderboard
    from conflict_eval.report.spend import unread_requests
    from conflict_eval.runs.batch_stop import keep_unread

    logs = tmp_path / "logs"
    path = tmp_path / "free.yaml"
    path.write_text("name: free\nmodels: [scripted/x]\ndefaults: {limit: 2}\ntasks:\n"
                    "  - task: conflict_eval/run\n    args: {method: end_to_end, dataset: demo}\n")
    assert run_suite(load_suite(path), logs, display="none").success
    stop = {"cancelled": [{"id": "b1", "model": "openai/x", "requests": 10, "completed": 3},
                          {"id": "b2", "model": "openai/x", "requests": 4, "completed": 0}],
            "finished_before_cancel": [{"id": "b3", "model": "openai/x", "requests": 5, "completed": 5}],
            "still_running": [], "unwatched_models": []}
    assert keep_unread(logs, {"cancelled": [], "finished_before_cancel": []}) is None
    keep_unread(logs, stop)
    keep_unread(logs, stop)  # the same batches twice (a second stop's record): counted once
    assert unread_requests([logs]) == 3 + 5
    paths = write_leaderboard([logs], tmp_path / "out", bootstrap=0)
    note = "8 batched request(s) were answered (and billed) at the provider and never read (before a cancel"
    assert note in paths["md"].read_text() and note in paths["html"].read_text()
    (logs / "unread-batches.jsonl").write_text("{\"at\": 1}\n")
    with pytest.raises(ValueError, match=r"unread-batches.jsonl: line 1: not a record of unread batches"):
        unread_requests([logs])


def test_ctrl_c_of_a_plan_worker_cancels_its_batches(tmp_path, monkeypatch, capsys):
    """A `suite worker` (many machines) interrupted while its batch is in progress cancels
    it at the provider too, and its stop record and the plan's status say so."""
    from conflict_eval.cli import main
    from conflict_eval.runs.plan import make_plan, read_plan
    from conflict_eval.runs.worker import run_worker

    srv = _batched_server(monkeypatch)
    try:
        suite = _suite(tmp_path, a="fake-w", b="fake-v")
        text = (tmp_path / "batched.yaml").read_text().replace("  - model: openai/fake-v\n    batch: "
                                                               + B_TIMING + "\n", "")
        (tmp_path / "one.yaml").write_text(text)
        assert [m.model for m in load_suite(tmp_path / "one.yaml").models] == ["openai/fake-w"]
        make_plan(str(tmp_path / "one.yaml"), tmp_path / "plan", workers=1)
        _, plan = read_plan(tmp_path / "plan")
        [w] = plan["workers"]
        run = run_worker(tmp_path / "plan" / w["selection"])
        assert run.stop_reason == "SIGINT" and not run.success
        assert srv.counts["batches.create"] == 1 and srv.counts["batches.cancel"] == 1 and srv.running() == []
        [bid] = srv.batches
        assert "cancelled 1 batch(es) (4 requests) at the provider" in capsys.readouterr().err
        stop = json.loads((Path(plan["log_dir"]) / f"worker-{w['worker']}-stop.json").read_text())
        assert stop["conflict_eval_stop_reason"] == "SIGINT"
        assert stop["batches"]["cancelled"] == [{"id": bid, "model": "openai/fake-w", "status": "cancelled",
                                                 "requests": 4, "completed": 0}]
        assert main(["suite", "status", str(tmp_path / "plan")]) == 1
        assert "  worker 1 batches: 1 cancelled at the provider (4 requests)" in capsys.readouterr().out
    finally:
        srv.stop()


@pytest.mark.parametrize("suite_sets, expected", [(None, True), (False, False)])
def test_plan_worker_carries_the_suites_batch_settings(tmp_path, monkeypatch, suite_sets, expected):
    """`suite worker` runs its cells with the suite's batch_timeout and, for batched models,
    continue_on_fail on unless the suite sets it, as `suite run` does (before: the default
    timeout and no continue_on_fail). Inspect's eval_set is replaced: no server, no batch."""
    import inspect_ai

    from conflict_eval.runs.batch_stop import BatchWatch
    from conflict_eval.runs.plan import make_plan, read_plan
    from conflict_eval.runs.worker import run_worker

    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never called
    _suite(tmp_path, a="fake-t", b="fake-u")
    text = (tmp_path / "batched.yaml").read_text().replace("  - model: openai/fake-u\n    batch: " + B_TIMING + "\n", "")
    text = text.replace("name: batched\n", "name: batched\nbatch_timeout: 1234\n")
    if suite_sets is not None:
        text = text.replace("retry_attempts: 1}", f"retry_attempts: 1, continue_on_fail: {str(suite_sets).lower()}}}")
    (tmp_path / "one.yaml").write_text(text)
    make_plan(str(tmp_path / "one.yaml"), tmp_path / "plan", workers=1)
    _, plan = read_plan(tmp_path / "plan")
    seen = {}
    monkeypatch.setattr(inspect_ai, "eval_set", lambda *a, **kw: seen.update(kw) or (True, []))
    monkeypatch.setattr(BatchWatch, "settle", lambda self, *a, **kw: seen.update(timeout=self.timeout))
    run_worker(tmp_path / "plan" / plan["workers"][0]["selection"])
    assert seen["timeout"] == 1234.0 and seen["continue_on_fail"] is expected
