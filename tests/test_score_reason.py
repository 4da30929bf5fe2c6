"""One vocabulary for what was not scored (issue 45, Deliver 2): Inspect's
``Score.reason``, set through the real tasks with scripted models, and the
page's parse-failure, refusal and no-response columns read from it."""

from __future__ import annotations

import math

from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

from conflict_eval.answers.reasons import counts, unread_reason
from conflict_eval.report import build_leaderboard
from conflict_eval.testing import scripted_model

# demo questions (end_to_end prefills "<a>"): a readable letter, a reply no
# reader can read, and a sincere refusal
REPLIES = {
    "Which country is the Eiffel Tower located in?": "A</a>",
    "Who wrote the novel Pride and Prejudice?": "the novel is well known",
    "What is the chemical symbol for gold?": "I cannot determine the answer from the documents provided.",
}


def _reply(prompt: str) -> str:
    return next(text for question, text in REPLIES.items() if question in prompt)


def test_the_real_task_sets_inspects_reasons_and_the_page_reads_them(log_dir):
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo"},
                         model=scripted_model(_reply), limit=3, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    by_id = {s.id: s.scores["choice_accuracy"] for s in log.samples}
    assert by_id["mis-01"].reason is None and by_id["mis-01"].value["accuracy"] == 1
    assert by_id["mis-02"].reason == "invalid_response_format"
    assert by_id["mis-02"].value["parse_failure"] == 1 and by_id["mis-02"].value["refusal"] == 0
    assert by_id["mis-03"].reason == "refusal"
    assert by_id["mis-03"].value["parse_failure"] == 0 and by_id["mis-03"].value["refusal"] == 1

    [row] = build_leaderboard([log_dir], bootstrap=0)["rows"]
    # one of three each, by hand
    assert math.isclose(row.parse_failure_rate, 1 / 3) and math.isclose(row.refusal_rate, 1 / 3)
    assert row.no_response_rate == 0.0


def test_an_unreadable_judge_is_grader_failed_through_the_real_task(log_dir):
    answer = scripted_model(lambda p: "A</a>")
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo",
                                                         "scorer": "conflictscore", "claims": "whole"},
                         model=answer, model_roles={"grader": scripted_model(lambda p: "no idea, sorry")},
                         limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    score = log.samples[0].scores["conflictscore"]
    assert score.reason == "grader_failed" and score.value["label_failures"] > 0


@scorer(metrics=[mean()])
def third_party():
    """A scorer outside the toolkit that knows nothing of its keys, only Inspect's reasons."""
    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        if not text.strip():
            return Score.unscored(reason="no_response")
        if "refuse" in text:
            return Score(value=0, reason="refusal")
        return Score(value=1)
    return score


def test_a_third_party_scorer_that_sets_the_reason_gets_the_columns(log_dir):
    replies = {"q1": "fine", "q2": "I refuse", "q3": "I refuse", "q4": ""}
    task = Task(dataset=[Sample(id=k, input=k) for k in replies], solver=generate(), scorer=third_party())
    [log] = inspect_eval(task, model=scripted_model(lambda p: replies[p.strip()] or " "), log_dir=log_dir,
                         display="none")
    assert log.status == "success", log.error
    [row] = build_leaderboard([log_dir], bootstrap=0)["rows"]
    # by hand: q2, q3 refused; q4 empty (no response, a parse failure: nothing read); q1 said nothing: none
    assert row.refusal_rate == 0.5 and row.no_response_rate == 0.25 and row.parse_failure_rate == 0.25


def test_counts_come_from_the_reason():
    assert counts(unread_reason("")) == {"parse_failure": 1, "refusal": 0}
    assert counts(unread_reason("blue")) == {"parse_failure": 1, "refusal": 0}
    assert counts("refusal") == {"parse_failure": 0, "refusal": 1}
    assert counts(None) == {"parse_failure": 0, "refusal": 0}
