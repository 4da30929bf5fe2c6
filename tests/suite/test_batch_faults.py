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


def _write_suite(tmp_path, models, limit=6, config="{max_retries: 1, timeout: 20}"):
    (tmp_path / "costs.yaml").write_text(json.dumps({f"openai/{m}": PRICE for m in models}))
    entries = "".join(f"  - model: openai/{m}\n    batch: {{size: {limit}, send_delay: 0.3, tick: 0.2}}\n"
                      for m in models)
    (tmp_path / "faults.yaml").write_text(
        f"name: faults\nmodels:\n{entries}"
        f"eval: {{model_cost_config: costs.yaml, retry_attempts: 0, max_tasks: {len(models)}}}\n"
        "tasks:\n  - task: conflict_eval/run\n    args: {method: end_to_end, dataset: demo}\n"
        f"    limit: {limit}\n    config: {config}\n")
    return tmp_path / "faults.yaml"


def test_batch_timeout_is_a_positive_number_of_seconds(tmp_path):
    from conflict_eval.runs.batch_stop import BATCH_TIMEOUT
    from conflict_eval.runs.spec import SuiteError

    path = _write_suite(tmp_path, ["flt-x"])
    assert load_suite(path).batch_timeout is None and BATCH_TIMEOUT == 26 * 3600
    for value, ok in (("600", 600.0), ("1.5", 1.5), ("0", None), ("-3", None), (".inf", None), ("true", None)):
        path.write_text(path.read_text().split("batch_timeout")[0].rstrip("\n") + f"\nbatch_timeout: {value}\n")
        if ok is None:
            with pytest.raises(SuiteError, match=r"batch_timeout must be a positive number"):
                load_suite(path)
        else:
            assert load_suite(path).batch_timeout == ok


def _logs(log_dir):
    return [read_eval_log(i) for i in list_eval_logs(str(log_dir), recursive=True)]


def test_batch_faults_end_the_run_and_a_rerun_resumes_only_their_samples(tmp_path, monkeypatch, capsys):
    """Every output-file fault of the issue's table in one batch: each sample is scored once or an
    error naming the batch, its request and the cause; the log closes as error; the stop record
    lists the batch; every request the server answered is read or counted billed-unread (kept
    after the resume, for the page: test_batch_suite); a re-run sends only the errors."""
    from conflict_eval.report.spend import unread_requests
    from conflict_eval.runs.budget import read_stop

    logs_dir = tmp_path / "logs"
    path = _write_suite(tmp_path, ["flt-mixed"])
    with OpenAIServer("B</a>", delay=0.2, lifetime=120, fault="mixed") as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
        run = run_suite(load_suite(path), logs_dir, display="none")
        assert not run.success and run.stop_reason == "incomplete"
        [(bid, batch)] = srv.batches.items()
        ids = [line["custom_id"] for line in batch["lines"]]
        assert (f"batch {bid} (openai/flt-mixed): 1 of 6 result(s) readable; 2 request(s) have no line in its "
                "result file(s); 3 line(s) cannot be read; 1 line(s) answer no request of the batch; "
                "3 request(s) answered (billed) but not read") in capsys.readouterr().err

        [lg] = _logs(logs_dir)
        assert lg.status == "error" and len(lg.samples) == 6  # closed; every sample ran to its end
        causes = []
        for s in lg.samples:  # the sample's request: the one its error names
            if s.error is None:
                assert s.scores and s.output.completion.endswith("B</a>")
                causes.append(None)
                continue
            message = s.error.message
            found = [n for n, cid in enumerate(ids) if f"request {cid}" in message]
            assert len(found) == 1 and f"batch {bid} (openai/flt-mixed)" in message, message
            assert MIXED[found[0]] in message and "pydantic" not in message and not s.scores, message
            causes.append(MIXED[found[0]])
        assert sorted(causes, key=str) == sorted(MIXED, key=str)
        # every request the server answered (lines 1, 4, 5, 6) is read or billed-unread
        read = sum(1 for s in lg.samples if s.error is None and s.model_usage)
        assert srv.answered[bid] == 4 and read == 1
        stop = read_stop(logs_dir)
        assert stop["conflict_eval_stop_reason"] == "incomplete"
        [unfinished] = stop["batches"]["unfinished"]
        assert unfinished["id"] == bid and unfinished["unread"] == 3 == srv.answered[bid] - read
        assert unread_requests([logs_dir]) == 3

        # the same run again: only the samples that ended as errors are sent, and all are answered
        srv.fault = None
        again = run_suite(load_suite(path), logs_dir, display="none")
        assert again.success, again.statuses
        assert sum(len(b["lines"]) for b in srv.batches.values()) == 6 + 5
    [done] = [lg for lg in _logs(logs_dir) if lg.status == "success"]
    assert len(done.samples) == 6 and all(s.error is None and s.scores for s in done.samples)
    assert unread_requests([logs_dir]) == 3  # the bill stays after the resume


def test_a_cancelled_or_late_batch_ends_each_request_with_its_cause():
    """Driven through the model's own client, as Inspect polls: a batch cancelled in the
    provider's console, and one kept in progress past the timeout (said at a steady interval,
    then cancelled at the provider), each come to Inspect as a failed batch with one error per
    request naming the batch, the request and the cause (Inspect makes each a sample's error:
    test_batch_suite.test_failed_batch_becomes_sample_errors)."""
    from conflict_eval.runs.batch_stop import BatchWatch

    said = []
    with OpenAIServer("B</a>", delay=60, lifetime=30, fault={"flt-console": "cancelled", "flt-late": "stuck"}) as srv:
        srv.delay = 0.1  # the console batch is cancelled at its first poll after this
        model = srv.model("openai/flt-late")
        watch = BatchWatch(timeout=1.0, progress=0.2, say=said.append)
        assert watch.progress == 0.2 and BatchWatch(timeout=8).progress == 2  # a quarter of the timeout at most
        watch.watch("openai/flt-late", model)
        client = model.api.client

        async def submit(name):
            lines = "".join(json.dumps({"custom_id": f"{name}-r{i}", "method": "POST", "url": "/v1/chat/completions",
                                        "body": {"model": name, "messages": [{"role": "user", "content": "hi"}]}})
                            + "\n" for i in (1, 2))
            f = await client.files.create(file=("b.jsonl", io.BytesIO(lines.encode())), purpose="batch")
            b = await client.batches.create(input_file_id=f.id, endpoint="/v1/chat/completions",
                                            completion_window="24h")
            polls = []
            while not polls or polls[-1].status != "failed":
                await asyncio.sleep(0.25)
                polls.append(await client.batches.retrieve(b.id))
            return b.id, polls

        async def both():
            return await asyncio.gather(submit("flt-console"), submit("flt-late"))

        (console, console_polls), (late, late_polls) = asyncio.run(both())
        assert srv.running() == [] and srv.counts["batches.cancel"] == 1  # the late one, cancelled there
    assert [p.status for p in console_polls] == ["failed"]
    assert [e.message for e in console_polls[-1].errors.data] == [
        f"batch {console} (openai/flt-late): request flt-console-r{i}: the provider reports the batch cancelled"
        for i in (1, 2)]
    assert {p.status for p in late_polls[:-1]} == {"in_progress"} and len(late_polls) >= 4
    assert [e.message for e in late_polls[-1].errors.data] == [
        f"batch {late} (openai/flt-late): request flt-late-r{i}: no result within the suite's batch_timeout (1 s; the "
        "batch was cancelled at the provider, and is cancelled there)" for i in (1, 2)]
    waiting = [s for s in said if s.startswith(f"batch {late} (openai/flt-late): in_progress at the provider for ")
               and s.split("for ", 1)[1].split(" s;")[0].replace(".", "").isdigit()]
    assert len(waiting) >= 3 and all(s.endswith("requests completed/total 0/2; ends as errors after batch_timeout "
                                                 "1 s") for s in waiting), said
    assert f"batch {console} (openai/flt-late) will not finish: the provider reports the batch cancelled; its 2 " \
        "request(s) end as errors" in said
    record = {b["id"]: b for b in watch.record()["unfinished"]}
    assert record[late] == {"id": late, "model": "openai/flt-late", "status": "cancelled", "requests": 2,
                            "completed": 0, "cause": watch.batches[late].cause}
    assert record[console]["status"] == "cancelled" and "unread" not in record[console]


def test_a_refused_batch_creation_is_one_line_and_a_stop_record(tmp_path, monkeypatch, capsys):
    """`suite run` against a provider refusing to create the batch: one line naming the status and
    what to do (no "internal error", no traceback), exit 1, the log closed, a stop record. 429
    and 5xx take the same way after Inspect's retries; their lines are checked by hand below."""
    from conflict_eval.cli import main
    from conflict_eval.runs.batch_stop import refusal_line
    from conflict_eval.runs.budget import read_stop

    fault, advice = "create-404", ("the endpoint has no Batches API for this model: check the base URL, or run it "
                                   "without batch")
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
    assert refusal_line({"model": "openai/x", "status": 429, "message": "Too many batches"}) == (
        "the provider refused to create a batch for openai/x: HTTP 429 (Too many batches); the provider's batch "
        "queue or rate limit is full: wait, then run the same command again (it resumes)")
    assert refusal_line({"model": "openai/x", "status": 503, "message": "unavailable"}) == (
        "the provider refused to create a batch for openai/x: HTTP 503 (unavailable); the provider's batch service "
        "failed: run the same command again later (it resumes)")


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


def test_readable_results_by_hand():
    """One file by hand: what passes to Inspect, each other request's cause, and the count of
    answered lines (a 200 response, or a line cut short) against those read."""
    from conflict_eval.runs.batch_faults import missing_errors, readable_results

    body = {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "A"}}]}
    ok = json.dumps({"custom_id": "a", "response": {"status_code": 200, "body": body}, "error": None})
    lines = [ok,  # read
             ok,  # "a" again: a second answer to one request is not read
             json.dumps({"custom_id": "b", "response": {"status_code": 200, "body": {"id": "x"}}}),  # bad body
             ok.replace('"a"', '"c"')[:40],  # cut short; its custom_id is still legible
             ok.replace('"a"', '"zz"'),  # no request of the batch
             json.dumps({"custom_id": "d", "response": {"status_code": 429, "body": {"error": {"message": "slow"}}}})]
    got = readable_results("\n".join(lines).encode(), "file-1", "batch_1", "openai/m", ["a", "b", "c", "d", "e"],
                           "/v1/chat/completions")
    assert got.text == (ok + "\n").encode() and got.read == 1
    assert got.answered == 5 and got.seen == {"a", "b", "c", "d"} and got.unknown == ["a", "zz"]
    where = "batch batch_1 (openai/m): line {} of file file-1: request {}: "
    assert got.errors["b"].startswith(where.format(3, "b") + "the response body does not parse (")
    assert got.errors["c"].startswith(where.format(4, "c") + "the line is not valid JSON (cut short?): ")
    assert got.errors["d"] == where.format(6, "d") + "the provider answered HTTP 429: slow"
    assert missing_errors("batch_1", "openai/m", ["e"], ["file-1"]) == {
        "e": "batch batch_1 (openai/m): request e: the provider reports the batch completed but its result file "
             "(file-1) has no line for it"}
