"""Issue 32's choice-letter and refusal rows, each sent through the task and
prompt named in its row by a scripted model and recorded as meant.

Golden values are worked out by hand from each metric's definition (comments
beside each assertion); before the shared reader read leading choices and
refusals, each of these runs recorded parse failures instead.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.testing import scripted_model

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _overall(log) -> dict[str, float]:
    """Each score key's overall value (its first metric: accuracy or mean)."""
    return {sc.name: next(iter(sc.metrics.values())).value for sc in log.results.scores}

# ---------------------------------------------------------------- ConflictQA


def test_conflictqa_memorization_ratio_reads_leading_choices_and_counts_a_refusal(log_dir):
    """Options (counter first): A "Biochemistry studies gluons.", B "Biochemistry
    does not study gluons." (memory), C "Uncertain."."""
    replies = {
        # issue row 1: the choice, then a sentence quoting option A's text (was: "text of several options")
        "counter_memory": 'B: Biochemistry does not study gluons. The claim that "Biochemistry studies gluons." '
                          "confuses it with particle physics.",
        # issue row 2 (was: "no choice letter found")
        "both_memory_first": "B: Gluons are studied in particle physics, not biochemistry.",
        # the counter answer, with an explanation that mentions option B
        "both_counter_first": 'A: Biochemistry studies gluons.\n\nThe first passage says so, although option B '
                              '("Biochemistry does not study gluons.") is what I would have said.',
        "memory_only": "I cannot determine the answer from the information given.",
    }
    row = json.loads((FIXTURES / "conflictqa" / "gluons_handwritten.jsonl").read_text())

    def reply(prompt):
        if f"Information: {row['counter_memory']}\n\n" in prompt:
            return replies["counter_memory"]
        if f"Information: {row['parametric_memory']}\n\n" in prompt:
            return replies["memory_only"]
        if f"Information: \n1. {row['parametric_memory']}\n2." in prompt:
            return replies["both_memory_first"]
        return replies["both_counter_first"]

    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "conflictqa_mc", "dataset": "conflictqa", "option_order": "counter_first",
                                    "path": str(FIXTURES / "conflictqa" / "gluons_handwritten.jsonl")},
                         model=scripted_model(reply), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    classes = {s.metadata["setting"]: s.scores["memorization_ratio"].metadata["class"] for s in log.samples}
    assert classes == {"counter_memory": "memory", "both_memory_first": "memory",
                       "both_counter_first": "counter", "memory_only": "refusal"}
    m = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    # by hand: memory 2, counter 1, uncertain 0, refusal 1, parse failure 0 of n = 4; M_R = 2 / (2 + 1)
    assert m["memorization_ratio"] == pytest.approx(2 / 3)
    assert (m["memory_rate"], m["counter_rate"], m["uncertain_rate"], m["refusal_rate"], m["parse_failure_rate"]) \
        == pytest.approx((0.5, 0.25, 0.0, 0.25, 0.0))
    assert math.isnan(m["memorization_ratio:memory_only"])  # only a refusal there: undefined, never 0


# ---------------------------------------------------------------- Comparative (KRE ECQA)

COMPARATIVE_REPLIES = {  # question start -> (reply, the letter it means)
    "What do people call": ("B. names", "B"),
    "The dog was tuckered": ("E. walked", "E"),
    "After the long hike": ("E (walked)", "E"),
    "The tired retriever": ("**E** — walked", "E"),
    "How did Sam get": ("ANSWER1: E\nANSWER2: D\nFinal answer: D", "D"),
}


def test_comparative_untagged_replies_are_read_as_meant(log_dir):
    def reply(prompt):
        [text] = [r for q, (r, _) in COMPARATIVE_REPLIES.items() if f"Question: {q}" in prompt]
        return text

    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "comparative", "dataset": "kre_ecqa",
                                    "path": str(FIXTURES / "kre" / "comparative_shapes_handwritten.json")},
                         model=scripted_model(reply), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    assert len(log.samples) == 5
    for s in log.samples:
        [letter] = [want for q, (_, want) in COMPARATIVE_REPLIES.items() if s.metadata["question"].startswith(q)]
        assert s.scores["choice_accuracy"].answer == letter, s.scores["choice_accuracy"].explanation
    m = _overall(log)
    # by hand: every letter read is the row's gold letter (B, E, E, E, D); the last row's
    # conflicting option is E (ANSWER1), not chosen: accuracy 5/5, misled 0, no failure or refusal
    assert (m["accuracy"], m["parse_failure"], m["refusal"], m["misled"]) == (1.0, 0.0, 0.0, 0.0)


# ---------------------------------------------------------------- Self-Ask refusal


@pytest.mark.parametrize("reply", [
    # Self-Ask's own closing line, refusing
    " Yes.\nFollow up: Where does the evidence place the Eiffel Tower?\nIntermediate answer: In Rome, Italy.\n"
    "Follow up: Is that consistent with what I know?\nIntermediate answer: No.\n"
    "So the final answer is: I cannot determine the answer, because the evidence contradicts itself.",
    # no answer line at all: the whole reply refuses
    " The documents do not contain enough information to answer this question.",
    # inside the tag
    " No.\n<a>None of the options is supported by the context.</a>",
])
def test_self_ask_refusal_is_counted_as_a_refusal(reply, log_dir):
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "self_ask", "dataset": "demo"},
                         model=scripted_model([reply]), limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    score = log.samples[0].scores["choice_accuracy"]
    # a refusal is wrong and counted as a refusal, not as a parse failure
    assert score.value == {"accuracy": 0, "parse_failure": 0, "refusal": 1, "misled": 0}
    assert score.explanation.startswith("refusal (scored wrong)")
    m = _overall(log)
    assert (m["refusal"], m["parse_failure"]) == (1.0, 0.0)


def test_a_refusal_that_still_declares_a_letter_is_that_letter(log_dir):
    reply = " No.\nSo the final answer is: I cannot be fully certain, but <a>A</a>"
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "self_ask", "dataset": "demo"},
                         model=scripted_model([reply]), limit=1, log_dir=log_dir, display="none")
    assert log.samples[0].scores["choice_accuracy"].value == {"accuracy": 1, "parse_failure": 0, "refusal": 0,
                                                               "misled": 0}


# ---------------------------------------------------------------- TruthfulQA Control-RAG


def control_rag_task(shared_data: Path, reply_for):
    """TruthfulQA's first two samples (k=3) with a scripted model whose reply to
    a prompt is ``reply_for(prompt, i, row, gold, other)`` (``i``: the row's index), and a grader that finds
    nothing conflicting (nothing regenerated): the task, its models bound (one eval can run it beside others)."""
    from inspect_ai import task_with

    from conflict_eval.tasks.truthfulqa_conflict.task import truthfulqa_conflict

    path = shared_data / "truthfulqa_binary" / "sample.jsonl"
    rows = [json.loads(line) for line in path.open(encoding="utf-8")][:2]
    golds = ["A" if random.Random(f"0|{i}").random() < 0.5 else "B" for i in range(2)]  # the task's A/B order

    def reply(prompt):
        [i] = [i for i, r in enumerate(rows) if f"Question: {r['Question']}\n" in prompt]
        return reply_for(prompt, i, rows[i], golds[i], "B" if golds[i] == "A" else "A")

    grader = scripted_model(lambda p: '{"answer": "SUPPORTS"}')
    task = truthfulqa_conflict(path=str(path), k=3)
    return task_with(task, dataset=task.dataset[:2], model=scripted_model(reply), model_roles={"grader": grader})


def control_rag_metrics(shared_data: Path, reply_for) -> dict[str, float]:
    """:func:`control_rag_task` run: the log's overall metrics."""
    [log] = inspect_eval(control_rag_task(shared_data, reply_for), display="none")
    assert log.status == "success", log.error
    return _overall(log)


def test_truthfulqa_control_rag_reads_the_letter_not_the_quoted_one(shared_data):
    def reply(prompt, i, row, gold, other):
        if prompt.startswith("Given the following documents retrieved from the web, answer the question by choosing "
                             "either (A) or (B). Pay careful attention"):
            # Control-RAG: the letter as the prompt asks, then an explanation quoting another document's "(other)"
            return (f"({gold})\n\nThe documents conflict: one of them argues for \"({other}) "
                    f"{row['Best Incorrect Answer']}\", but the reliable sources agree with ({gold}).")
        return f"({gold})"

    m = control_rag_metrics(shared_data, reply)
    # by hand: both Control-RAG replies choose the gold letter -> control_rag 2/2 = 1.0 (was 0.5: ambiguous)
    assert m["control_rag"] == 1.0 and m["control_parse_failure"] == 0.0 and m["control_refusal"] == 0.0
    assert m["rag"] == 1.0
