"""A batch that cannot finish ends the run (issue 44): against a fault-injecting batch
provider (tests/openai_server.py ``fault=``), every sample is scored once or an error
naming its batch, request and cause; the logs close; a stop record says what happened;
the page counts every request the provider answered; a re-run resumes only the errors.
A refused batch creation is one line and a stop record; no printed or stored command
carries a secret of the base URL."""

import asyncio
import io
import json
import os
import signal
from collections import Counter

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from conflict_eval.runs import load_suite, run_suite

from openai_server import OpenAIServer

PRICE = {"input": 2.0, "output": 8.0, "input_cache_write": 2.0, "input_cache_read": 2.0}

# the "mixed" batch's 6 requests, by line of its output file: why each ends as an error
MIXED = ["the line is not valid JSON (cut short?)",  # 1: cut in half (answered: billed, unread)
         "the provider answered HTTP 500: simulated server error",  # 2: a per-line 500
         "the provider answered with an error (server_error: simulated server error)",  # 3: an error object
         "has no line for it",  # 4: its line carries an unknown custom_id (answered: billed, unread)
         "has no line for it",  # 5: its line is missing (answered: billed, unread)
         None]  # 6: answered and read


def _write_suite(tmp_path, models, extra="", limit=6, config="{max_retries: 1, timeout: 20}"):
    (tmp_path / "costs.yaml").write_text(json.dumps({f"openai/{m}": PRICE for m in models}))
    entries = "".join(f"  - model: openai/{m}\n    batch: {{size: {limit}, send_delay: 0.3, tick: 0.2}}\n"
                      for m in models)
    (tmp_path / "faults.yaml").write_text(
        f"name: faults\nmodels:\n{entries}{extra}"
        f"eval: {{model_cost_config: costs.yaml, retry_attempts: 0, max_tasks: {len(models)}}}\n"
        "tasks:\n  - task: conflict_eval/run\n    args: {method: end_to_end, dataset: demo}\n"
        f"    limit: {limit}\n    config: {config}\n")
    return tmp_path / "faults.yaml"


def _logs(log_dir):
    return [read_eval_log(i) for i in list_eval_logs(str(log_dir), recursive=True)]


def test_batch_faults_end_the_run_and_a_rerun_resumes_only_their_samples(tmp_path, monkeypatch, capsys):
    """Every output-file fault of the issue's table in one batch, and a batch cancelled in the
    provider's console: each sample is scored once or an error naming the batch, its request and
    the cause; the logs close as error; the stop record lists both batches; every request the
    server answered is read or counted billed-unread, on the page too, after the resume."""
    from conflict_eval.report.build import write_leaderboard
    from conflict_eval.report.spend import unread_requests
    from conflict_eval.runs.budget import read_stop

    logs_dir = tmp_path / "logs"
    path = _write_suite(tmp_path, ["flt-mixed", "flt-console"])
    srv = OpenAIServer("B</a>", delay=0.2, lifetime=120, fault={"flt-mixed": "mixed", "flt-console": "cancelled"})
    with srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
        run = run_suite(load_suite(path), logs_dir, display="none")
        assert not run.success and run.stop_reason == "incomplete"
        assert srv.running() == []
        first = dict(srv.batches)
        by_model = {b["lines"][0]["body"]["model"]: bid for bid, b in first.items()}
        ids = {m: [line["custom_id"] for line in first[bid]["lines"]] for m, bid in by_model.items()}
        err = capsys.readouterr().err
        mixed, console = by_model["flt-mixed"], by_model["flt-console"]
        assert (f"batch {mixed} (openai/flt-mixed): 1 of 6 result(s) readable; 2 request(s) have no line in its "
                "result file(s); 3 line(s) cannot be read; 1 line(s) answer no request of the batch; "
                "3 request(s) answered (billed) but not read") in err
        assert (f"batch {console} (openai/flt-console) will not finish: the provider reports the batch "
                "cancelled; its 6 request(s) end as errors") in err

        logs = {lg.eval.model: lg for lg in _logs(logs_dir)}
        assert sorted(logs) == ["openai/flt-console", "openai/flt-mixed"]
        assert {lg.status for lg in logs.values()} == {"error"}  # closed
        causes = {"flt-mixed": MIXED, "flt-console": ["the provider reports the batch cancelled"] * 6}
        for model, bid in by_model.items():
            for s in logs[f"openai/{model}"].samples:  # the sample's request: the one its error names
                cause = None
                if s.error is not None:
                    message = s.error.message
                    found = [n for n, cid in enumerate(ids[model]) if f"request {cid}" in message]
                    assert len(found) == 1, (message, ids[model])
                    [n] = found
                    cause = causes[model][n]
                    assert f"batch {bid} (openai/{model})" in message and cause in message, message
                    assert "pydantic" not in message and not s.scores
                else:
                    assert s.scores and s.output.completion.endswith("B</a>")
                    assert causes[model][5] is None  # only the mixed batch's last line was readable
        assert [s.error is None for s in logs["openai/flt-mixed"].samples].count(True) == 1
        # every request the server answered was read (a scored sample's usage) or is billed-unread
        assert srv.answered[mixed] == 4 and srv.answered[console] == 0
        stop = read_stop(logs_dir)
        assert stop["conflict_eval_stop_reason"] == "incomplete"
        unfinished = {b["id"]: b for b in stop["batches"]["unfinished"]}
        assert sorted(unfinished) == sorted([mixed, console])
        assert unfinished[mixed]["unread"] == 3 and "unread" not in unfinished[console]
        assert unread_requests([logs_dir]) == 3

        # the same run again: only the samples that ended as errors are sent, and all are answered
        srv.fault = None
        again = run_suite(load_suite(path), logs_dir, display="none")
        assert again.success, again.statuses
        second = [b for bid, b in srv.batches.items() if bid not in first]
        sent = Counter()
        for b in second:
            sent[b["lines"][0]["body"]["model"]] += len(b["lines"])
        assert sent == {"flt-console": 6, "flt-mixed": 5}
    for lg in _logs(logs_dir):
        if lg.status == "success":
            assert len(lg.samples) == 6 and all(s.error is None and s.scores for s in lg.samples)
    # the bill for what the first run could not read stays on the page after the resume
    paths = write_leaderboard([logs_dir], tmp_path / "out", bootstrap=0)
    assert "3 batched request(s) were answered (and billed) at the provider and never read" in paths["md"].read_text()


def test_a_batch_past_the_batch_timeout_is_cancelled_and_its_requests_end(tmp_path):
    """A batch the provider keeps in progress: the watch says its age and counts at a steady
    interval, and once it is older than the timeout cancels it at the provider and hands
    Inspect a failed batch, one error per request naming the batch, the request and the
    timeout. Driven through the model's own client (Inspect polls the same way)."""
    from conflict_eval.runs.batch_stop import BatchWatch

    said = []
    with OpenAIServer("B</a>", delay=60, lifetime=30, fault="stuck") as srv:
        model = srv.model("openai/flt-late")
        watch = BatchWatch(timeout=2.0, progress=0.2, say=said.append)
        assert watch.progress == 0.2 and BatchWatch(timeout=8).progress == 2  # a quarter of the timeout at most
        watch.watch("openai/flt-late", model)
        client = model.api.client
        lines = "".join(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
                                    "body": {"model": "flt-late", "messages": [{"role": "user", "content": "hi"}]}})
                        + "\n" for i in (1, 2))

        async def run():
            f = await client.files.create(file=("b.jsonl", io.BytesIO(lines.encode())), purpose="batch")
            b = await client.batches.create(input_file_id=f.id, endpoint="/v1/chat/completions",
                                            completion_window="24h")
            polls = []
            while not polls or polls[-1].status != "failed":
                await asyncio.sleep(0.25)
                polls.append(await client.batches.retrieve(b.id))
            return b.id, polls

        bid, polls = asyncio.run(run())
        assert srv.running() == [] and srv.counts["batches.cancel"] == 1
    assert {p.status for p in polls[:-1]} == {"in_progress"}
    assert [e.message for e in polls[-1].errors.data] == [
        f"batch {bid} (openai/flt-late): request r{i}: no result within the suite's batch_timeout (2 s; the batch "
        "was cancelled at the provider, and is cancelled there)" for i in (1, 2)]
    waiting = [s for s in said if s.startswith(f"batch {bid} (openai/flt-late): in_progress at the provider for 0m0")]
    # created_at is in whole seconds: the batch is over 2 s old after 1 to 2 s, 4 or more polls
    assert len(waiting) >= 3 and all(s.endswith("requests completed/total 0/2; ends as errors after batch_timeout "
                                                 "2 s") for s in waiting), said
    assert watch.record()["unfinished"] == [{"id": bid, "model": "openai/flt-late", "status": "cancelled",
                                             "requests": 2, "completed": 0, "cause": watch.batches[bid].cause}]


@pytest.mark.parametrize("fault,advice", [
    ("create-404", "the endpoint has no Batches API for this model: check the base URL, or run it without batch"),
    ("create-429", "the provider's batch queue or rate limit is full: wait, then run the same command again"),
])
def test_a_refused_batch_creation_is_one_line_and_a_stop_record(tmp_path, monkeypatch, capsys, fault, advice):
    """`suite run` against a provider refusing to create the batch: one line naming the status and
    what to do (no "internal error", no traceback), exit 1, the log closed, a stop record."""
    from conflict_eval.cli import main
    from conflict_eval.runs.budget import read_stop

    model = f"flt-{fault}"
    path = _write_suite(tmp_path, [model], limit=2, config="{max_retries: 0, timeout: 10}")
    with OpenAIServer("B</a>", delay=0.2, lifetime=60, fault=fault) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
        rc = main(["suite", "run", str(path), "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    err = capsys.readouterr().err
    status = int(fault.removeprefix("create-"))
    line = (f"the provider refused to create a batch for openai/{model}: HTTP {status} (simulated refusal "
            f"({status})); {advice}")
    assert rc == 1 and err.count(line) == 1, err
    assert "internal error" not in err and "Traceback" not in err
    [lg] = _logs(tmp_path / "logs")
    assert lg.status in ("error", "cancelled")
    stop = read_stop(tmp_path / "logs")
    assert stop["conflict_eval_stop_reason"] == "batch refused"
    assert stop["batches"]["refused"][0] == {"model": f"openai/{model}", "status": status,
                                             "message": f"simulated refusal ({status})"}


class _SigintOnPoll(Counter):
    """The server's request counts, sending SIGINT to this process at the first batch poll."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        if key == "batches.retrieve" and value == 1:
            os.kill(os.getpid(), signal.SIGINT)


def test_a_failed_cancel_prints_and_stores_no_secret_of_the_base_url(tmp_path, monkeypatch, capsys):
    """Ctrl-C of a suite whose base URL carries a password and a query key, the provider refusing
    the cancel: stderr, suite-stop.json and `suite status` give the cancel command with neither."""
    from conflict_eval.cli import main

    key = "sk-query-key-8d1f"
    srv = OpenAIServer("B</a>", delay=60, lifetime=60).start()
    srv.counts = _SigintOnPoll()
    srv.cancel_status = 500
    try:
        url = f"http://user:pw@127.0.0.1:{srv.port}/v1?key={key}"
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
        path = _write_suite(tmp_path, ["flt-secret"], limit=2)
        rc = main(["suite", "run", str(path), "--log-dir", str(tmp_path / "logs"), "--display", "none"])
        out = capsys.readouterr()
        assert rc == 130 and srv.counts["batches.cancel"] == 1, out.err
        assert main(["suite", "status", str(tmp_path / "logs")]) == 1
        status = capsys.readouterr()
    finally:
        srv.stop()
    [bid] = srv.batches
    # the OpenAI client joins a route to the base URL's query value (``/v1/?key=Kbatches``); the
    # command keeps that shape, with the key's value REDACTED
    command = (f"curl -X POST 'http://127.0.0.1:{srv.port}/v1/?key=REDACTEDbatches/{bid}/cancel' "
               "-H \"Authorization: Bearer $OPENAI_API_KEY\"")
    stop = (tmp_path / "logs" / "suite-stop.json").read_text()
    for text in (out.err, out.out, stop, status.out, status.err):
        assert "pw@" not in text and ":pw" not in text and key not in text
    assert command in out.err and command in status.out and json.dumps(command)[1:-1] in stop
    assert "HTTP 500: simulated cancel failure (500)" in out.err
