"""Faults that must never become scored answers (issue: model errors, dead search servers).

* a model error on an operator call propagates to Inspect: the sample errors,
  or is retried with ``retry_on_error``; it is never answered by the
  Direct-RAG fallback;
* a knowledge source that fails (a search server that is down) is counted,
  recorded, and fails the sample; the run does not end "success" with
  samples scored without the knowledge it was configured to use.
"""

import json

from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from conflict_eval.testing import scripted_output

TREE = json.dumps({"Q?": 'Search("Animorphs", "book series")'})


def ans(*items):
    return f"So the answer is: (1) Paraphrase Answer: {', '.join(items)}; (2) Answer List: {json.dumps(list(items))}"


def failing_model(fail_on: set[int], error=RuntimeError("malformed body: 'choices' is empty")):
    """A scripted model whose calls number ``fail_on`` (1-based, counted over the
    whole eval) raise ``error``; every call's prompt is recorded."""
    calls: list[str] = []

    def outputs(input, tools, tool_choice, config):
        calls.append(input[-1].text)
        if len(calls) in fail_on:
            raise error
        if "Decomposition Tree:" in input[-1].text:
            return scripted_output(TREE)
        return scripted_output(ans("Animorphs"))

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False), calls


def run(model, shared_data, log_dir, **kwargs):
    [log] = inspect_eval("conflict_eval/atomr", task_args={
        "dataset": "hotpotqa", "path": str(shared_data / "hotpotqa_ircot" / "sample.jsonl")},
        model=model, limit=1, log_dir=log_dir, display="none", **kwargs)
    return log


def test_operator_model_error_errors_the_sample_and_is_never_answered_by_the_fallback(shared_data, log_dir):
    model, calls = failing_model({2})  # 1: the plan (valid), 2: the Search operator raises
    log = run(model, shared_data, log_dir)
    assert log.status == "error"
    assert "choices' is empty" in log.error.message
    assert len(calls) == 2  # no Direct-RAG call after the error
    [sample] = log.samples
    assert sample.error is not None and not sample.scores
    assert sample.store["AtomRStore:llm_calls"] == {"planning": 1, "search": 1}


def test_operator_model_error_is_retried_by_inspect(shared_data, log_dir):
    model, calls = failing_model({2})
    log = run(model, shared_data, log_dir, retry_on_error=1)
    assert log.status == "success", log.error
    [sample] = log.samples
    assert len(sample.error_retries) == 1 and "choices' is empty" in sample.error_retries[0].message
    # the retry ran the whole sample again: plan, Search; no fallback anywhere
    assert len(calls) == 4 and "Decomposition Tree:" in calls[2]
    store = sample.store
    assert store["AtomRStore:llm_calls"] == {"planning": 1, "search": 1}
    assert "fallback" not in store["AtomRStore:tree"][0]
    assert sample.scores["atomr_qa"].value["em"] == 1.0


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_dead_search_server_fails_every_sample_and_counts_the_errors(shared_data, log_dir, monkeypatch):
    monkeypatch.setenv("CONFLICT_EVAL_HTTP_RETRIES", "0")
    port = dead_port()
    model, calls = failing_model(set())
    [log] = inspect_eval("conflict_eval/atomr", task_args={
        "dataset": "hotpotqa", "path": str(shared_data / "hotpotqa_ircot" / "sample.jsonl"),
        "text_corpus": f"colbert+http://127.0.0.1:{port}/api/search"},
        model=model, limit=4, log_dir=log_dir, display="none", fail_on_error=False)
    assert len(log.samples) == 4
    for sample in log.samples:
        assert not sample.scores  # nothing answered without the configured knowledge
        assert f"knowledge source 'text' (http://127.0.0.1:{port}/api/search) failed" in sample.error.message
        assert "ConnectError" in sample.error.message
        assert sample.store["AtomRStore:retrieval_errors"] == 1
        assert sample.store["AtomRStore:llm_calls"] == {"planning": 1}  # no operator, no fallback
    assert not any("Please answer" in c or "Using the retrieved" in c for c in calls)
    assert log.results is None or log.results.completed_samples == 0


def test_a_dead_search_server_ends_the_run_in_error_by_default(shared_data, log_dir, monkeypatch):
    monkeypatch.setenv("CONFLICT_EVAL_HTTP_RETRIES", "0")
    port = dead_port()
    [log] = inspect_eval("conflict_eval/atomr", task_args={
        "dataset": "hotpotqa", "path": str(shared_data / "hotpotqa_ircot" / "sample.jsonl"),
        "method": "atomr_standard_rag", "text_corpus": f"colbert+http://127.0.0.1:{port}/api/search"},
        model=failing_model(set())[0], limit=2, log_dir=log_dir, display="none")
    assert log.status == "error"
    assert "knowledge source 'text'" in log.error.message
    assert all(s.store.get("AtomRBaselineStore:retrieval_errors") == 1 for s in log.samples or [])


# --------------------------------------------------------------------------
# multi-valued options through `inspect eval` (its CLI turns a,b into a list)

ANSWER_X = "'So the answer is: (1) Paraphrase Answer: X; (2) Answer List: [\"X\"]'"  # YAML-quoted for -M


def inspect_cli(inspect_command, tmp_path, *args):
    """``inspect eval conflict_eval/atomr ARGS`` through Inspect's own command line, in this
    process (the ``inspect_command`` fixture): the claim is how that parser reads ``-T a,b``,
    not the process boundary, which a fresh interpreter only made 5 s slower."""
    log_dir = tmp_path / "cli_logs"
    code = inspect_command("eval", "conflict_eval/atomr", *args, "--model", "scripted/x", "-M", f"reply={ANSWER_X}",
                           "--log-dir", str(log_dir), "--display", "none", "--log-format", "json")
    assert code == 0
    [log_file] = list(log_dir.glob("*.json"))
    log = json.loads(log_file.read_text())
    assert log["status"] == "success", log.get("error")
    return log


def test_cli_sources_and_category_lists(shared_data, tmp_path, inspect_command):
    log = inspect_cli(inspect_command, tmp_path, "-T", "dataset=blendqa",
                      "-T", f"path={shared_data / 'blendqa' / 'sample.jsonl'}",
                      "-T", "sources=text,kg", "-T", "category=KG-Text,KG-Web", "--limit", "3")
    assert log["eval"]["task_args"]["sources"] == ["text", "kg"]  # what Inspect made of it
    assert log["eval"]["metadata"]["retrieval"]["source_names"] == ["text", "kg"]
    for s in log["samples"]:
        assert s["metadata"]["extra"]["category"] in ("KG-Text", "KG-Web")
        assert s["store"]["AtomRStore:retriever_calls"] == {"text": 1, "kg": 1}
        assert s["scores"]["atomr_qa"]["metadata"]["retrieval_errors"] == 0


def test_cli_standard_rag_sources_and_corpus_lists(shared_data, tmp_path, inspect_command):
    hotpot = shared_data / "hotpotqa_ircot" / "sample.jsonl"
    musique = shared_data / "musique_hipporag" / "sample.jsonl"
    log = inspect_cli(inspect_command, tmp_path, "-T", "dataset=blendqa",
                      "-T", f"path={shared_data / 'blendqa' / 'sample.jsonl'}", "-T", "method=atomr_standard_rag", "-T", "sources=text,kg",
                      "-T", f"text_corpus={hotpot},{musique}", "--limit", "1")
    [s] = log["samples"]
    assert s["store"]["AtomRBaselineStore:retriever_calls"] == {"text": 1, "kg": 1}
    text = log["eval"]["metadata"]["retrieval"]["sources"]["text"]
    assert text["corpus"] == f"{hotpot}, {musique}" and text["pooled_from_dataset"] is False
