"""conflict_eval/run end to end with scripted models, and option routing."""

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.components.compose import compose_task, route_options
from conflict_eval.components.manager import lookup
from conflict_eval.testing import scripted_model
from conflict_eval.kb.answer import END_TO_END_TEMPLATE


def _gold_letters():
    from conflict_eval.plugins.demo.dataset import demo
    return {s.id: s.target for s in demo()}


def test_end_to_end_prompt_is_figure_10(log_dir):
    model = scripted_model(["B</a>"])
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo"},
                         model=model, limit=1, log_dir=log_dir, display="none")
    prompt = model.script.calls[0][-1].text
    assert prompt == END_TO_END_TEMPLATE.format(
        evidence=("The Eiffel Tower, the wrought-iron lattice tower completed in 1889, stands on "
                  "the Champ de Mars in Rome, Italy, and is the most visited monument in the country."),
        question="Which country is the Eiffel Tower located in?",
        options="A. France\nB. Belgium\nC. Italy\nD. Uncertain",
    )
    assert prompt.startswith("According to the evidence provided and your knowledge, choose the best")
    assert prompt.endswith("The final answer is: <a>")
    sample = log.samples[0]
    assert sample.output.completion == "<a>B</a>"


def test_choice_accuracy_counts_exactly(log_dir):
    gold = _gold_letters()
    ids = list(gold)
    # first 10 items right, next 6 wrong, 2 unparseable, last 2 refusals
    replies = {}
    for i, sid in enumerate(ids):
        if i < 10:
            replies[sid] = f"{gold[sid]}</a>"
        elif i < 16:
            replies[sid] = "D</a>" if gold[sid] != "D" else "A</a>"
        elif i < 18:
            replies[sid] = "Let me weigh the evidence first."
        else:
            replies[sid] = "I am not sure about this one."
    questions = {}
    from conflict_eval.plugins.demo.dataset import demo
    for s in demo():
        questions[s.input] = s.id

    def reply(prompt):
        for q, sid in questions.items():
            if f"Question: {q}\n" in prompt:
                return replies[sid]
        raise AssertionError("unknown prompt")

    [log] = inspect_eval("conflict_eval/run", task_args={"dataset": "demo"},
                         model=scripted_model(reply), log_dir=log_dir, display="none")
    metrics = {m.name: m.value for s in log.results.scores for m in s.metrics.values()}
    by_key = {s.name: s for s in log.results.scores}
    assert log.results.total_samples == 20
    assert by_key["accuracy"].metrics["accuracy"].value == pytest.approx(10 / 20)
    assert by_key["parse_failure"].metrics["mean"].value == pytest.approx(2 / 20)
    assert by_key["refusal"].metrics["mean"].value == pytest.approx(2 / 20)  # wrong, counted apart
    assert metrics  # results table is populated
    failed = [s for s in log.samples if s.scores["choice_accuracy"].value["parse_failure"] == 1]
    assert len(failed) == 2
    assert all(s.scores["choice_accuracy"].answer is None for s in failed)
    assert all("parse failure" in s.scores["choice_accuracy"].explanation for s in failed)
    refused = [s for s in log.samples if s.scores["choice_accuracy"].value["refusal"] == 1]
    assert len(refused) == 2 and all(s.scores["choice_accuracy"].value["accuracy"] == 0 for s in refused)


def test_misled_rate(log_dir):
    # always choose the option the conflicting evidence implies
    from conflict_eval.plugins.demo.dataset import demo
    conflict = {s.input: s.metadata["conflict_option"] for s in demo()}

    def reply(prompt):
        for q, letter in conflict.items():
            if f"Question: {q}\n" in prompt:
                return f"{letter or 'D'}</a>"

    [log] = inspect_eval("conflict_eval/run", task_args={"dataset": "demo"},
                         model=scripted_model(reply), log_dir=log_dir, display="none")
    by_key = {s.name: s for s in log.results.scores}
    assert by_key["misled"].metrics["mean"].value == pytest.approx(15 / 20)
    assert by_key["accuracy"].metrics["accuracy"].value == 0


def test_task_args_route_to_dataset(log_dir):
    model = scripted_model(lambda p: "A</a>")
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"dataset": "demo", "conflict_type": "temporal"},
                         model=model, log_dir=log_dir, display="none")
    assert log.results.total_samples == 5
    assert all(s.metadata["conflict_type"] == "temporal" for s in log.samples)


def test_unknown_option_lists_accepted():
    with pytest.raises(ValueError) as err:
        compose_task("end_to_end", "demo", "choice_accuracy", max_turn=3)
    msg = str(err.value)
    assert "unknown option(s) max_turn" in msg and "dataset 'demo'" in msg and "conflict_type" in msg
    assert "scorer 'choice_accuracy'" in msg and "metric0" not in msg  # parts are named by role


def test_unknown_names_get_did_you_mean():
    with pytest.raises(ValueError, match=r"unknown option\(s\) normaliser \(did you mean 'normalizer'\?\)"):
        compose_task("end_to_end", "demo", "token_f1", normaliser="squad")
    from conflict_eval.components.manager import UnknownComponentError

    with pytest.raises(UnknownComponentError, match=r"unknown dataset 'kre_ecqaa'. Did you mean 'kre_ecqa'"):
        compose_task("end_to_end", "kre_ecqaa")
    with pytest.raises(UnknownComponentError, match=r"unknown metric 'tokenf1'. Did you mean 'token_f1'"):
        compose_task("end_to_end", "demo", "tokenf1")


def test_bad_option_value_fails_before_running():
    with pytest.raises(ValueError, match="conflict_type"):
        compose_task("end_to_end", "demo", conflict_type="political")


def test_route_options_sends_shared_names_to_all():
    parts = {"method": lookup("method", "end_to_end"), "dataset": lookup("dataset", "demo")}
    routed = route_options(parts, {"seed": 3, "template": "{evidence}{question}{options}"})
    assert routed["dataset"] == {"seed": 3}
    assert routed["method"] == {"template": "{evidence}{question}{options}"}


def test_default_scorer_for_free_form(tmp_path, log_dir):
    path = tmp_path / "ff.jsonl"
    path.write_text('{"id": "f1", "question": "Capital of France?", "answers": ["Paris"]}\n')
    [log] = inspect_eval("conflict_eval/run", task_args={"dataset": "demo", "path": str(path)},
                         model=scripted_model(["Paris</a>"]), log_dir=log_dir, display="none")
    assert log.results.scores[0].name == "token_f1"
    assert log.results.scores[0].metrics["mean"].value == 1.0


def test_bad_local_file_names_file_record_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x1", "answers": ["a"]}\n{"id": "x2", "question": "q", "answers": ["a"], "gold_option": "B"}\n')
    from conflict_eval.records import DatasetError
    with pytest.raises(DatasetError) as err:
        compose_task("end_to_end", "demo", path=str(path))
    msg = str(err.value)
    assert str(path) in msg and "'x1'" in msg and "question" in msg and "'x2'" in msg and "gold_option" in msg


def test_end_to_end_scores_the_first_answer_segment(log_dir):
    # a model that goes on inventing examples after its answer: the first <a>...</a> counts
    [log] = inspect_eval("conflict_eval/run", task_args={"dataset": "demo"},
                         model=scripted_model(["A</a>\n\nEvidence: more\nThe final answer is: <a>C</a>"]),
                         limit=1, log_dir=log_dir, display="none")
    [sample] = log.samples
    assert sample.output.completion.startswith("<a>A</a>")
    assert sample.scores["choice_accuracy"].answer == "A"  # mis-01: gold A, conflict option C
    assert sample.scores["choice_accuracy"].value["misled"] == 0
