"""Model and grader failures are errors, never text (issue 32, Deliver 2).

The test OpenAI-compatible server on 127.0.0.1 (``tests/openai_server.py``)
answers chosen calls with an empty ``choices`` list, as some APIs do
under load. Driven through Inspect's own ``openai/`` provider (a dummy key,
``model_base_url``), Micro-Act, MADAM-RAG and the ConflictScore grader must
end the sample with an error (no score) and, under ``retry_on_error``, run
it again; no empty reply is ever scored. Nothing leaves the machine.
"""

from __future__ import annotations

import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from openai_server import OpenAIServer

from conflict_eval.answers.failures import ModelOutputError, checked, output_failure
from conflict_eval.testing import scripted_model, scripted_output

pytest.importorskip("openai", reason="the api extra (pip install 'conflict-eval[api]') is not installed")


@pytest.fixture
def fault_server(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    servers: list[OpenAIServer] = []

    def make(reply, fail) -> OpenAIServer:
        """``reply(prompt)`` answers each call, except those ``fail(n, prompt)`` picks (1-based), which get
        ``"choices": []``; ``prompts`` records every call's prompt, ``failed`` those of the failed calls."""
        servers.append(OpenAIServer(reply, empty=fail).start())
        return servers[-1]

    yield make
    for s in servers:
        s.stop()


def nth(*numbers: int):
    """Fail the calls with these numbers."""
    return lambda n, prompt: n in numbers


def _errored_unscored(log, fragment="empty 'choices' list"):
    assert log.status == "error"
    for sample in log.samples or []:
        assert sample.error is not None and fragment in sample.error.message
        assert not sample.scores
    return log


# --------------------------------------------------------------------------
# the helper itself


def test_checked_rejects_failed_outputs_and_keeps_replies():
    assert output_failure(ModelOutput(model="m", choices=[])) == "the API returned an empty 'choices' list"
    for stop in ("unknown", "content_filter"):
        with pytest.raises(ModelOutputError, match=f"stop reason '{stop}'"):
            checked(ModelOutput.from_content("m", "  ", stop_reason=stop), "the grader")
    errored = ModelOutput.from_content("m", "", stop_reason="stop", error="upstream overloaded")
    with pytest.raises(ModelOutputError, match="upstream overloaded"):
        checked(errored)
    # what the model wrote stays text: empty at a normal stop, or text with any stop reason
    for output in (scripted_output(""), scripted_output("", stop_reason="max_tokens"),
                   scripted_output("B", stop_reason="content_filter")):
        assert checked(output) is output


@pytest.mark.parametrize("method", ["cot", "end_to_end"])
def test_generate_state_turns_inspects_index_error_into_the_same_error(method, log_dir):
    """Solvers that call Inspect's ``generate(state)`` fail on an empty
    ``choices`` list with the same error (not Inspect's bare IndexError)."""
    def empty(*args):  # usage set, so mockllm downloads no tokenizer
        return ModelOutput(model="m", choices=[], usage=ModelUsage(input_tokens=1, output_tokens=0, total_tokens=1))

    model = get_model("mockllm/model", custom_outputs=empty, memoize=False)
    [log] = inspect_eval("conflict_eval/run", task_args={"method": method, "dataset": "demo"}, model=model,
                         limit=1, log_dir=log_dir, display="none")
    _errored_unscored(log)
    assert "ModelOutputError" in log.samples[0].error.traceback


# --------------------------------------------------------------------------
# through a real API client: Micro-Act, MADAM-RAG, the ConflictScore grader


def test_microact_empty_choices_errors_the_sample(fault_server, log_dir):
    server = fault_server(lambda p: "<a>A</a>", nth(2))
    [log] = inspect_eval("conflict_eval/microact", task_args={"dataset": "demo", "max_turns": 2},
                         model=server.model(), limit=1, log_dir=log_dir, display="none")
    _errored_unscored(log)
    assert "Micro-Act" in log.samples[0].error.message
    assert len(server.prompts) == 2  # nothing after the failed call


def test_microact_empty_choices_is_retried(fault_server, log_dir):
    server = fault_server(lambda p: "<a>A</a>", nth(2))
    [log] = inspect_eval("conflict_eval/microact", task_args={"dataset": "demo", "max_turns": 2},
                         model=server.model(), limit=1, log_dir=log_dir, display="none", retry_on_error=1)
    assert log.status == "success", log.error
    [sample] = log.samples
    assert len(sample.error_retries) == 1 and "empty 'choices' list" in sample.error_retries[0].message
    assert sample.scores["choice_accuracy"].value["parse_failure"] == 0  # the retry's real reply was read
    assert "(the model generated nothing)" not in json.dumps(sample.store)


def madam_reply(prompt: str) -> str:
    if prompt.startswith("You are an aggregator"):
        return 'All Correct Answers: ["alpha"]. Explanation: every agent says alpha.'
    return "Answer: alpha. Explanation: the document says so."


def _madam(server, shared_data, log_dir, **kwargs):
    [log] = inspect_eval("conflict_eval/run", task_args={
        "method": "madam_rag", "dataset": "ramdocs", "path": str(shared_data / "ramdocs" / "sample.jsonl"),
        "rounds": 2}, model=server.model(), limit=1, log_dir=log_dir, display="none", **kwargs)
    return log


def test_madam_rag_empty_agent_reply_errors_the_sample(fault_server, shared_data, log_dir):
    # the first debate-round agent call fails: before, its empty answer counted as "unchanged"
    server = fault_server(madam_reply, lambda n, p: "The following reponses" in p and not any(
        "The following reponses" in q for q in server.prompts[: n - 1]))
    log = _errored_unscored(_madam(server, shared_data, log_dir))
    assert "MADAM-RAG agent" in log.samples[0].error.message
    assert len(server.failed) == 1


def test_madam_rag_empty_agent_reply_is_retried(fault_server, shared_data, log_dir):
    failed_once: list[int] = []

    def fail(n, prompt):
        if "The following reponses" in prompt and not failed_once:
            failed_once.append(n)
            return True
        return False

    server = fault_server(madam_reply, fail)
    log = _madam(server, shared_data, log_dir, retry_on_error=1)
    assert log.status == "success", log.error
    [sample] = log.samples
    assert len(sample.error_retries) == 1 and "MADAM-RAG agent" in sample.error_retries[0].message
    store = {k.split(":", 1)[1]: v for k, v in sample.store.items() if k.startswith("MadamRagStore:")}
    assert all(all(r.strip() for r in rnd["responses"]) for rnd in store["rounds"])  # no empty reply kept
    # the retried debate ran both rounds in full: round 2 stopped early on real, unchanged answers
    assert store["rounds_run"] == 2 and store["stop_reason"] == "early_stop"
    assert sample.scores["ramdocs_strict_em"].value["parse_failure"] == 0


def test_an_empty_answer_never_stops_a_debate():
    from conflict_eval.plugins.madam_rag.parse import answers_unchanged

    assert not answers_unchanged(["alpha", "beta"], ["alpha", ""])
    assert answers_unchanged(["alpha", "beta"], ["alpha", "It is beta."])


def grader_reply(prompt: str) -> str:
    return '{"document_snippet": "x", "answer": "SUPPORTS"}'


def _graded(server, log_dir, **kwargs):
    answer = scripted_model(lambda p: "<a>A</a>")
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo",
                                                         "scorer": "conflictscore", "claims": "whole"},
                         model=answer, model_roles={"grader": server.model()}, limit=2, log_dir=log_dir,
                         display="none", **kwargs)
    return log


def test_conflictscore_grader_empty_choices_errors_the_sample(fault_server, log_dir):
    server = fault_server(grader_reply, lambda n, p: True)  # every grader call comes back empty
    log = _graded(server, log_dir, fail_on_error=False)
    assert len(log.samples) == 2 and all(s.error is not None and not s.scores for s in log.samples)
    assert all("the ConflictScore grader" in s.error.message for s in log.samples)
    assert log.results is None or log.results.completed_samples == 0  # no label, no CS-C, from an empty reply


def test_conflictscore_grader_empty_choices_is_retried_and_never_a_label(fault_server, log_dir):
    server = fault_server(grader_reply, nth(1, 2))  # the first two grader calls come back empty
    log = _graded(server, log_dir, retry_on_error=2)
    assert log.status == "success", log.error
    retried = [s for s in log.samples if s.error_retries]
    assert retried and all("empty 'choices' list" in r.message for s in retried for r in s.error_retries)
    for sample in log.samples:
        value = sample.scores["conflictscore"].value
        # every cell labelled from a real reply: no empty label dropped, none shared by the dedupe
        assert value["label_failures"] == 0 and value["label_coverage"] == 1.0
        assert all(c["reply"].strip() for c in sample.scores["conflictscore"].metadata["cells"])


def test_retry_on_error_from_the_command_line(fault_server, tmp_path, inspect_command):
    """The same through ``inspect eval --retry-on-error`` with ``--model-base-url`` and a dummy key
    (Inspect's own command line, run in this process by the ``inspect_command`` fixture: the claim
    is how the flags are read, not a fresh interpreter)."""
    import os

    from inspect_ai.log import list_eval_logs, read_eval_log

    server = fault_server(lambda p: "<a>A</a>", nth(1))
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith(("OPENAI_", "INSPECT_EVAL_MODEL"))}
    env.update(OPENAI_API_KEY="sk-dummy-for-test", NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    code = inspect_command(
        "eval", "conflict_eval/microact", "--model", "openai/gpt-4o", "--model-base-url", server.url,
        "-M", "responses_api=false", "-T", "dataset=demo", "-T", "max_turns=2", "--limit", "1",
        "--retry-on-error", "1", "--log-dir", str(tmp_path / "logs"), "--display", "none", env=env)
    assert code == 0
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.status == "success", log.error
    [sample] = log.samples
    assert len(sample.error_retries) == 1 and "empty 'choices' list" in sample.error_retries[0].message
    assert len(server.failed) == 1 and sample.scores["choice_accuracy"].value["parse_failure"] == 0
