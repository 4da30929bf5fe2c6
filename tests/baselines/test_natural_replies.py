"""A strong model's natural replies to the baseline prompts (issue 27,
"Parsing" items 1-2): CoT / GKP without ``</t>``, Comparative's bare letter
after "Answer:", and the ANSWER1 / ANSWER2 parts without label text."""

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.answers import parse_choice, restore_prefill
from conflict_eval.plugins.baselines.parse import parse_comparative, parse_cot
from conflict_eval.plugins.baselines.prompts import COT_TEMPLATE
from conflict_eval.testing import scripted_model

COT_PROMPT = COT_TEMPLATE.format(evidence="E", question="Q", options="A. x\nB. y\nC. z\nD. w")


def _letter(found):
    assert found.ok, found.reason
    return parse_choice(found.answer).letter


# ---------------------------------------------------------------- CoT / GKP

@pytest.mark.parametrize("reply, letter", [
    # a chat reply to the prompt that ends inside <t>: no </t> at all
    ("**Thought:** The evidence says Rome, but the tower is in Paris.\n\n**Answer:** <a>A</a>", "A"),
    ("<t>The evidence places it in Rome; I know it is Paris.\n<a>A</a>", "A"),
    ("The evidence is wrong about the city.\n\nFinal answer: <a> a </a>", "A"),
    ("Step by step: document says Italy (C), which is false.\n```\n<a>A</a>\n```", "A"),
    ("I think <a>B</a> fits.\nSo the answer is <a>B. Belgium</a>", "B"),  # the same answer twice
    ("The thought.\n<a>C</a>\n\nDocument 1 contains '<a>B</a>'.", "C"),  # a quoted tag is not the answer
    ("x</t><a>D</a>", "D"),  # a continuation that closes the thought (unchanged)
])
def test_cot_reads_an_unambiguous_answer_without_closed_thought(reply, letter):
    found = parse_cot(restore_prefill(COT_PROMPT, reply))
    assert _letter(found) == letter


def test_cot_unclosed_marks_and_keeps_the_thought():
    found = parse_cot(restore_prefill(COT_PROMPT, "**Thought:** Paris is in France.\n**Answer:** <a>A</a>"))
    assert found.parts["thought_unclosed"] is True
    assert found.parts["thought"] == "**Thought:** Paris is in France.\n**Answer:**"


@pytest.mark.parametrize("reply, reason", [
    ("Maybe <a>A</a>, or rather <a>C</a>.", "thought not closed with </t> and its answer tags differ (A, C)"),
    ("The evidence says A. So (A).", "thought not closed with </t>"),  # no tag at all
    ("I am thinking about it and the answer is", "thought not closed with </t>"),  # cut at the token limit
    ("<a></a> nothing", "thought not closed with </t>"),
])
def test_cot_unclosed_failures(reply, reason):
    found = parse_cot(restore_prefill(COT_PROMPT, reply))
    assert not found.ok and found.reason == reason


def test_gkp_answer_phase_reads_a_reply_without_closed_thought(log_dir):
    def reply(prompt):
        if prompt.startswith("Generate some knowledge"):
            return " The Eiffel Tower is in Paris."
        return "My thought: the evidence is wrong.\n\n# Answer: <a>A</a>"

    [log] = inspect_eval("conflict_eval/run", task_args={"method": "gkp", "dataset": "demo"},
                         model=scripted_model(reply), limit=1, log_dir=log_dir, display="none")
    [sample] = log.samples
    assert sample.scores["choice_accuracy"].value == {"accuracy": 1, "parse_failure": 0, "refusal": 0, "misled": 0}


# ---------------------------------------------------------------- Comparative

@pytest.mark.parametrize("reply, letter", [
    ("B", "B"),
    (" B\n", "B"),
    ("**B**", "B"),
    ("(b).", "B"),
    ("Answer: C", "C"),
    ("**Answer:** D", "D"),
    ("`A`", "A"),
    # issue 32: a chat model answering the prompt's closing "Answer:" without the tag
    ("B. names", "B"),
    ("B. Belgium", "B"),
    ("E. walked", "E"),
    ("E (walked)", "E"),
    ("**E** — walked", "E"),
    ("ANSWER1: E\nANSWER2: D\nFinal answer: D", "D"),
    ("**ANSWER1:** E (walked)\n**ANSWER2:** D (walk)\n\n**Final answer:** D", "D"),
])
def test_comparative_untagged_answer_is_read_by_the_shared_reader(reply, letter):
    found = parse_comparative(reply)
    assert found.parts["untagged"] is True
    assert parse_choice(found.answer, "ABCDE").letter == letter


@pytest.mark.parametrize("reply", [
    "B because the context says so",
    "The context says B",
    "A man went to the market.",
    "ANSWER1: A\nANSWER2: C\nso C",
])
def test_comparative_untagged_reply_without_a_choice_is_a_parse_failure(reply):
    found = parse_comparative(reply)
    parsed = parse_choice(found.answer, "ABCDE")
    assert not parsed.ok and not parsed.refused and parsed.reason.startswith("no choice letter found")


@pytest.mark.parametrize("reply, reason", [
    ("", "no <a>...</a> final answer"),
    ("ANSWER1: E\nANSWER2: D", "no <a>...</a> final answer (only ANSWER1/ANSWER2)"),
    ("**ANSWER1:**\nE\n\n**ANSWER2:**\nD\n", "no <a>...</a> final answer (only ANSWER1/ANSWER2)"),
])
def test_comparative_without_a_final_answer(reply, reason):
    found = parse_comparative(reply)
    assert not found.ok and found.reason == reason


@pytest.mark.parametrize("reply, parts, letter", [
    ("ANSWER1: A (the context says so)\nANSWER2: C\nFinal: <a>C</a>",
     {"answer1": "A (the context says so)", "answer2": "C"}, "C"),
    ("ANSWER1: A ANSWER2: C. Final answer: <a>C</a>", {"answer1": "A", "answer2": "C."}, "C"),
    ("**ANSWER1 (context):** A\n**ANSWER2 (own knowledge):** C\n\nFinal answer: <a>C</a>",
     {"answer1": "A", "answer2": "C"}, "C"),
    ("ANSWER1 based on the context: B\nANSWER2 from my own knowledge: A\n<a>A</a>",
     {"answer1": "B", "answer2": "A"}, "A"),
    ("**ANSWER1:**\nB\n\n**ANSWER2:**\nA\n\n<a>A</a>", {"answer1": "B", "answer2": "A"}, "A"),
    ("answer 1 - B\nanswer 2 - D\n<a>D</a>", {"answer1": "B", "answer2": "D"}, "D"),
    ("ANSWER2: <a>C</a>", {"answer2": "C"}, "C"),
    # echoing the instruction is not a label
    ("I will give ANSWER1 solely based on the given context and ANSWER2 solely based on my own knowledge.\n"
     "ANSWER1: B\nANSWER2: A\nFinal: <a>A</a>", {"answer1": "B", "answer2": "A"}, "A"),
])
def test_comparative_parts_hold_no_label_text(reply, parts, letter):
    found = parse_comparative(reply)
    assert found.parts == parts and _letter(found) == letter


def test_comparative_bare_letter_through_a_run(log_dir):
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "comparative", "dataset": "demo"},
                         model=scripted_model(["A"]), limit=1, log_dir=log_dir, display="none")
    [sample] = log.samples
    assert sample.scores["choice_accuracy"].value == {"accuracy": 1, "parse_failure": 0, "refusal": 0, "misled": 0}
