"""Each baseline end to end with scripted models: prompts, calls taken, stored
trajectory, and malformed replies counted as parse failures."""

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.components.compose import compose_task
from conflict_eval.plugins.baselines.prompts import (
    COMPARATIVE_TEMPLATE,
    COT_TEMPLATE,
    FEW_SHOT_TEMPLATE,
    GKP_ANSWER_TEMPLATE,
    GKP_KNOWLEDGE_TEMPLATE,
    SELF_ASK_TEMPLATE,
)
from conflict_eval.components.stores import BaselineStore
from conflict_eval.testing import scripted_model

# demo item mis-01 (conflict_eval/data/demo.jsonl): gold A (France), conflict option C (Italy)
EVIDENCE = ("The Eiffel Tower, the wrought-iron lattice tower completed in 1889, stands on the Champ "
            "de Mars in Rome, Italy, and is the most visited monument in the country.")
QUESTION = "Which country is the Eiffel Tower located in?"
OPTIONS = "A. France\nB. Belgium\nC. Italy\nD. Uncertain"


def _run(method, replies, log_dir, limit=1, **task_args):
    model = scripted_model(replies)
    [log] = inspect_eval("conflict_eval/run", task_args={"method": method, "dataset": "demo", **task_args},
                         model=model, limit=limit, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    return model, log


def _prompts(model):
    return [call[-1].text for call in model.script.calls]


@pytest.mark.parametrize("method,template,reply,answer_text", [
    ("few_shot", FEW_SHOT_TEMPLATE, "A</a>\n\nEvidence: more\nThe final answer is: <a>C</a>", "<a>A</a>"),
    ("cot", COT_TEMPLATE, "The tower is in Paris, so France.</t>\n<a>A</a>", "<a>A</a>"),
    ("self_ask", SELF_ASK_TEMPLATE, " Where is the Champ de Mars?\nIntermediate answer: Paris.\nAnswer: <a> A </a>",
     "<a>A</a>"),
    ("comparative", COMPARATIVE_TEMPLATE, " ANSWER1: C\nANSWER2: A\nThe final answer: <a>A</a>", "<a>A</a>"),
])
def test_single_call_baselines(method, template, reply, answer_text, log_dir):
    model, log = _run(method, [reply], log_dir)
    [prompt] = _prompts(model)  # exactly one call
    assert prompt == template.format(evidence=EVIDENCE, question=QUESTION, options=OPTIONS)
    sample = log.samples[0]
    store = sample.store_as(BaselineStore)
    assert store.method == method and [c["phase"] for c in store.calls] == ["answer"]
    assert store.answer_text == answer_text and store.parse_failure is None
    score = sample.scores["choice_accuracy"]
    assert score.answer == "A" and score.value == {"accuracy": 1, "parse_failure": 0, "refusal": 0, "misled": 0}


def test_prompts_keep_the_paper_wording():
    few = FEW_SHOT_TEMPLATE
    assert few.count("The final answer is: <a>A</a>") == 2 and few.count("The final answer is: <a>B</a>") == 1
    assert few.endswith("Evidence: {evidence}\nQuestion: {question}\n\n{options}\n\nThe final answer is: <a>")
    assert COT_TEMPLATE.endswith("for example <a>H</a>.\n\nStep-by-step thought: <t>")
    assert SELF_ASK_TEMPLATE.startswith("Answer the question based on the given context and your own knowledge")
    assert SELF_ASK_TEMPLATE.endswith("{options}\nFollow up:")
    assert COMPARATIVE_TEMPLATE.startswith("Generate two answers to the given question: ANSWER1 solely")
    assert GKP_KNOWLEDGE_TEMPLATE == "Generate some knowledge about the input.\n\nInput: {question}\nKnowledge:"
    assert "You are a detective and you MUST find out which side is more reliable" in GKP_ANSWER_TEMPLATE
    assert GKP_ANSWER_TEMPLATE.endswith("---- Task Begins: ----\n# Step-by-step thought: <t>")


def test_cot_prefill_is_restored_and_letters_in_thought_are_not_scored(log_dir):
    # the thought names (C) but the answer tag says A
    model, log = _run("cot", ["The evidence claims (C) Italy, but it is in Paris.</t> <a>A</a>"], log_dir)
    sample = log.samples[0]
    assert sample.output.completion.startswith("<t>The evidence claims (C)")
    assert sample.store_as(BaselineStore).parts["thought"].startswith("The evidence claims (C)")
    assert sample.scores["choice_accuracy"].answer == "A"


def test_malformed_replies_are_parse_failures_and_counted(log_dir):
    # demo items 1-4: gold A, B, C, B; conflict options C, C, A, A
    replies = [
        "France.</t> <a>A</a>",                      # right
        "It is Dickens, (C) fits best. Answer: C",    # thought never closed -> failure
        "Gold is Au.</t> so gold it is",               # no answer after thought -> failure
        "The evidence says so.</t><a>A</a>",          # parsed, wrong, = conflict option -> misled
    ]
    model, log = _run("cot", replies, log_dir, limit=4)
    assert len(model.script.calls) == 4
    reasons = [s.scores["choice_accuracy"].metadata.get("parse_failure_reason") for s in log.samples]
    assert reasons == [None, "thought not closed with </t>", "no <a>...</a> answer after the thought", None]
    assert [s.scores["choice_accuracy"].answer for s in log.samples] == ["A", None, None, "A"]
    by_key = {s.name: s for s in log.results.scores}
    assert by_key["parse_failure"].metrics["mean"].value == pytest.approx(2 / 4)
    assert by_key["accuracy"].metrics["accuracy"].value == pytest.approx(1 / 4)
    assert by_key["misled"].metrics["mean"].value == pytest.approx(1 / 4)


@pytest.mark.parametrize("method,reply,reason", [
    # "I think France" is France (a hedge naming one option, issue 42); one across two options is not
    ("few_shot", "\n\nI think France or Italy", "ambiguous: text of several options found (A, C)"),
    ("self_ask", " Where is it?\nIntermediate answer: Paris.", "no <a>...</a> answer and no 'So the final answer is'"),
    ("comparative", " ANSWER1: C\nANSWER2: A", "no <a>...</a> final answer (only ANSWER1/ANSWER2)"),
])
def test_each_method_counts_its_malformed_reply(method, reply, reason, log_dir):
    _, log = _run(method, [reply], log_dir)
    score = log.samples[0].scores["choice_accuracy"]
    assert score.value["parse_failure"] == 1 and score.answer is None
    assert score.metadata["parse_failure_reason"] == reason


def test_gkp_two_phases(log_dir):
    knowledge = "The Eiffel Tower is a landmark in Paris, France."
    model, log = _run("gkp", [f" {knowledge}\nInput: another question", "France.</t>\n# Answer: <a> A </a>"],
                      log_dir)
    first, second = _prompts(model)  # exactly two calls, in this order
    assert first == GKP_KNOWLEDGE_TEMPLATE.format(question=QUESTION)
    assert second == GKP_ANSWER_TEMPLATE.format(question=QUESTION, options=OPTIONS,
                                                evidence_1=EVIDENCE, evidence_2=knowledge)
    assert f"# Here is my own knowledge:\n{knowledge}\n# There may be some conflict" in second
    assert len(model.script.calls[1]) == 1  # the answer phase is a fresh conversation
    store = log.samples[0].store_as(BaselineStore)
    assert [c["phase"] for c in store.calls] == ["knowledge", "answer"]
    assert store.knowledge == knowledge and store.knowledge_failure is None
    assert log.samples[0].scores["choice_accuracy"].answer == "A"


def test_gkp_empty_knowledge_is_recorded_and_answer_phase_still_runs(log_dir):
    model, log = _run("gkp", ["   ", "Not sure.</t>"], log_dir)
    assert len(model.script.calls) == 2
    assert "# Here is my own knowledge:\n\n# There may be" in _prompts(model)[1]
    store = log.samples[0].store_as(BaselineStore)
    assert store.knowledge is None and store.knowledge_failure == "no knowledge generated"
    score = log.samples[0].scores["choice_accuracy"]
    assert score.metadata["parse_failure_reason"] == "no <a>...</a> answer after the thought"


def test_runs_on_kre_with_two_options(shared_data, log_dir):
    path = str(shared_data / "kre_ecare" / "sample.jsonl")
    # first e-CARE item: gold A, misleading candidate B
    model, log = _run("self_ask", [" Why?\nSo the final answer is: B"], log_dir, dataset="kre_ecare", path=path)
    assert "Context: Psycho-physical phenomena can be experienced" in _prompts(model)[0]
    score = log.samples[0].scores["choice_accuracy"]
    assert score.answer == "B" and score.value["misled"] == 1


def test_bad_template_fails_at_construction():
    with pytest.raises(ValueError, match=r"cot template lacks placeholder\(s\) \{options\}"):
        compose_task("cot", "demo", template="{evidence} {question}")
    with pytest.raises(ValueError, match=r"gkp answer_template lacks placeholder\(s\) \{evidence_2\}"):
        compose_task("gkp", "demo", answer_template="{question}{options}{evidence_1}")


def test_free_form_item_is_a_clear_error(tmp_path, log_dir):
    path = tmp_path / "ff.jsonl"
    path.write_text('{"id": "f1", "question": "Capital of France?", "answers": ["Paris"]}\n')
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "cot", "dataset": "demo", "path": str(path),
                                                         "scorer": "token_f1"},
                         model=scripted_model(["x"]), log_dir=log_dir, display="none")
    assert log.status == "error" and "cot needs multiple-choice items; record 'f1'" in log.error.message
