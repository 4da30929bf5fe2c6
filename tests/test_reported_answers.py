"""The reply's own answer wins over an answer it quotes from a document
(issue 27, "First" item 3). "The last declaration wins" used to take the
conflicting document's answer when a reply quoted it after its own, and score
the item as *misled*. A reply that still declares two different answers of its
own is an ambiguous parse failure, never a guess."""

from __future__ import annotations

import pytest

from conflict_eval.answers import first_tagged_answer, parse_choice, reported, restore_prefill
from conflict_eval.plugins.atomr.parse import parse_answer
from conflict_eval.answers.yes_no import parse_yes_no
from conflict_eval.kb.answer import END_TO_END_TEMPLATE

OPTIONS = ["France", "Belgium", "Italy", "Uncertain"]


@pytest.mark.parametrize("reply", [
    # the two shapes quoted in the issue
    "The answer is A. While the second passage suggests the answer is B…",
    "<a>A</a> … Document 2 contains '<a>B</a>'",
    # realistic variants
    "**The answer is A.** While the second passage suggests the answer is **B**, that passage is wrong.",
    "the answer is a. while the second passage suggests the answer is b, it contradicts the first.",
    "Final answer: A\n\nNote: Document 2 states that the answer is B, but it places the tower in Rome.",
    "<a>A</a>\n\nExplanation: Document 2 contains \"<a>B</a>\", which conflicts with what I know.",
    "```\n<a>A</a>\n```\nDocument 2 says <a>B</a>, which is incorrect.",
    "According to Document 2, the answer is B. However, based on my knowledge, the answer is A.",
    'Document 1 says "the answer is B", but the Eiffel Tower is in Paris. The answer is A.',
    "> Document 2: The answer is B.\n\nThat document is unreliable. The answer is A.",
    "The answer is (A). Passage [2] claims the correct answer is (B), but it is outdated.",
    "I choose A. The evidence suggests the answer would be B, yet it misnames the city.",
    "The final answer is: <a>A</a>\n\nDocument 2 contains “The final answer is: <a>B</a>”.",
    # a reply whose only declaration is reported is read from it
    "According to the evidence provided, the answer is A.",
])
def test_own_answer_beats_the_quoted_document(reply):
    parsed = parse_choice(reply, options=OPTIONS)
    assert parsed.ok and parsed.letter == "A", parsed


@pytest.mark.parametrize("reply", [
    "The answer is A. The answer is B.",
    "<a>A</a>\n<a>B</a>",
    "I would choose A, but the answer is C.",
])
def test_two_own_answers_are_ambiguous(reply):
    parsed = parse_choice(reply, options=OPTIONS)
    assert not parsed.ok and parsed.reason.startswith("ambiguous: the reply declares different answers"), parsed


@pytest.mark.parametrize("reply, letter", [
    ("Answer: A. Actually, the answer is B.", "B"),
    ("<a>A</a> no, <a>C</a>", "C"),
    ("The answer is A... wait, on second thought, the answer is C.", "C"),
    ("The answer is B. Final answer: C", "C"),  # a final answer outranks other phrases
    ("Document 2 says the answer is B.", "B"),  # nothing but the report: it is all the reply says
    ("Document 1 says the answer is A, document 2 says the answer is B.", None),
])
def test_revisions_and_reported_only(reply, letter):
    parsed = parse_choice(reply, options=OPTIONS)
    assert parsed.letter == letter, parsed


def test_reported_does_not_take_the_replys_own_conclusions():
    for text in ("Based on the evidence, the answer is A.", "The evidence shows the answer is A.",
                 "My knowledge says the answer is A.", "I think the answer is A.", "Answer: A"):
        assert not reported(text, text.index("A" if text == "Answer: A" else "answer")), text


def test_hostile_and_long_replies_stay_linear():
    import time

    for text in ("Document 2 says '<a>B</a>' " * 2000, '"' * 20_000 + "answer is A", "> answer is B\n" * 3000):
        t = time.thread_time()  # this thread's CPU time: a loaded machine (or another thread) does not fail it
        parse_choice(text)
        assert time.thread_time() - t < 2.0


# ---------------------------------------------------------------- End-to-End

PROMPT = END_TO_END_TEMPLATE.format(evidence="E", question="Q", options="A. x\nB. y\nC. z\nD. w")


@pytest.mark.parametrize("reply, letter", [
    ("Document 2 contains <a>B</a>, but the correct answer is: <a>A</a>", "A"),
    ("The final answer is: <a>A</a>\n\nDocument 2 contains '<a>B</a>'.", "A"),
    ("A</a>\n\nDocument 2 says <a>B</a>.", "A"),  # a continuation
])
def test_end_to_end_segment_is_the_replys_own_tag(reply, letter):
    segment, reason = first_tagged_answer(restore_prefill(PROMPT, reply))
    assert segment is not None, reason
    assert parse_choice(segment).letter == letter


def test_end_to_end_run_is_not_misled_by_a_quoted_document(log_dir):
    from inspect_ai import eval as inspect_eval

    from conflict_eval.plugins.demo.dataset import demo
    from conflict_eval.testing import scripted_model

    records = {s.metadata["question"]: s.metadata for s in demo() if s.metadata["conflict_option"]}
    [question] = list(records)[:1]
    meta = records[question]
    reply = (f"The final answer is: <a>{meta['gold_option']}</a>\n\nWhile Document 1 suggests the answer is "
             f"{meta['conflict_option']}, it contradicts well-known facts: Document 1 contains "
             f"'<a>{meta['conflict_option']}</a>'.")
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo"},
                         model=scripted_model(lambda prompt: reply), sample_id=meta["id"], log_dir=log_dir,
                         display="none")
    [sample] = log.samples
    assert sample.scores["choice_accuracy"].value == {"accuracy": 1, "parse_failure": 0, "refusal": 0, "misled": 0}


# ---------------------------------------------------------------- yes / no (§4.6)

@pytest.mark.parametrize("reply, value", [
    ("The answer is yes. While the second passage suggests the answer is no, it is outdated.", "yes"),
    ("**Answer: Yes**\n\nDocument 2 states that the answer is no.", "yes"),
    ("According to Document 2, the answer is no. However, the final answer is yes.", "yes"),
    ('Document 1 says "the answer is no". My answer is yes.', "yes"),
    ("Yes. Passage 2 says no, but it is unreliable.", "yes"),
    ("The claim holds, yes; the second passage says no.", "yes"),
    ("the answer is no. the retrieved document claims the answer is yes.", "no"),
    ("Answer: yes. Actually, the answer is no.", "no"),
    ("Document 2 says the answer is no.", "no"),
])
def test_yes_no_own_answer_wins(reply, value):
    parsed = parse_yes_no(reply)
    assert parsed.ok and parsed.value == value, parsed


@pytest.mark.parametrize("reply", [
    "The answer is yes. The answer is no.",
    # ("Answer: yes\n\nAnswer: no": two answer fields, the last explicit one wins: tests/test_reader_contract.py)
])
def test_yes_no_two_own_answers_are_ambiguous(reply):
    parsed = parse_yes_no(reply)
    assert not parsed.ok and parsed.reason.startswith("ambiguous"), parsed


# ---------------------------------------------------------------- AtomR (Figures 8-11)

OWN = 'So the answer is: (1) Paraphrase Answer: Bob won; (2) Answer List: ["Bob"]'


@pytest.mark.parametrize("reply", [
    OWN + '\nNote that Paragraph 2 gives a different Answer List: ["Alice"].',
    OWN + '\n\nParagraph 3 reads: "So the answer is: (1) Paraphrase Answer: Alice won; (2) Answer List: ["Alice"]"',
    OWN + '\n> So the answer is: (1) Paraphrase Answer: Alice won; (2) Answer List: ["Alice"]',
    "**" + OWN + '**\n\nThe retrieved text states the Answer List: ["Alice"] instead.',
])
def test_atomr_own_answer_line_wins(reply):
    a = parse_answer(reply)
    assert a.error is None and a.answers == ["Bob"] and a.paraphrase == "Bob won", a


def test_atomr_reported_only_and_echoes():
    a = parse_answer('Paragraph 2 gives the Answer List: ["Alice"]')
    assert a.answers == ["Alice"]  # nothing else: it is what the reply says
    # an echoed example answer line (Figure 9's) comes first
    echo = 'So the answer is: (1) Paraphrase Answer: Daniel Pudil was born in Prague; (2) Answer List: ["Prague"]\n'
    assert parse_answer(echo + OWN).answers == ["Bob"]
    # two different answers of its own: ambiguous, a counted parse failure, never a guess
    other = 'So the answer is: (1) Paraphrase Answer: x; (2) Answer List: ["x"]\n'
    assert parse_answer(other + OWN).error.startswith("ambiguous")
