"""The reader contract of docs/metrics-and-parsing.md (issue 42, Deliver 1 and 2):
signals that disagree are never picked; the last explicit final marker decides.

One row per defect found on main after issue 42's first round; each failed there.
Values come from what the reply says, by hand.
"""

from __future__ import annotations

import time

import pytest

from conflict_eval.answers import first_tagged_answer, parse_choice
from conflict_eval.answers.extraction import read_extraction
from conflict_eval.answers.span import read_span
from conflict_eval.answers.yes_no import parse_yes_no
from conflict_eval.scorers.conflictscore.parse import parse_label, parse_label_list
from conflict_eval.scorers.microact.parse import parse_verdict
from conflict_eval.scorers.user_needs.normalize import option_match

TABLE_A = "| step | choice |\n| --- | --- |\n| final | A |\n"


@pytest.mark.parametrize("reply, letter", [
    # two explicit final markers: the last one wins, whatever their forms and order
    (TABLE_A + "\nAnswer: B", "B"),
    ("Answer: B\n\n" + TABLE_A, "A"),
    ('Answer: A\n{"answer": "B"}', "B"),
    ('{"answer": "A"}\nAnswer: B', "B"),
    ("\\boxed{A}\n\nFinal answer: B", "B"),
    ("Final answer: B\n\n\\boxed{A}", "A"),
    ("Answer: A\n\nAnswer: B", "B"),
    ("<a>A</a>\n\nFinal answer: B", "B"),
    # an explicit marker decides over an earlier hedge or mention; what follows it is explanation
    ("I think it's A.\n\nAnswer: B", "B"),
    ("Answer: B. I would also say A is tempting.", "B"),
    ("<a>D</a>\nSome people would say the answer is A.", "D"),
    # a declaration after a revision is explicit
    ("Answer: A. Actually, the answer is B.", "B"),
    ("Final answer: A\n\nWait, on second thought, I think it's C.", "C"),
    # a letter standing right after a revision is a declaration, and explicit
    ("A. Actually, B.", "B"),
    ("B\n\nNo, wait: (C).", "C"),
    ("A. I was wrong, it is B.", "B"),
    # markdown around the label
    ("**Answer**: C", "C"),
    ("**Answer**: B\n\nThe answer is C because ...", "B"),
])
def test_parse_choice_the_last_explicit_marker_wins(reply, letter):
    parsed = parse_choice(reply)
    assert parsed.ok and parsed.letter == letter, parsed


def test_read_extraction_follows_the_revision():
    assert read_extraction("A. Actually, B.", "ABCD").letter == "B"


@pytest.mark.parametrize("reply, value", [
    ("Harborview. Actually, Rockport.", "Rockport"),
    ("Answer: Harborview\nFinal answer: Rockport", "Rockport"),
    ("Harborview\n\nNo, the other towns do not match.", "Harborview"),  # "No," opens an explanation
    ("Harborview. Actually, I am not sure.", None),  # revised to a refusal: a counted failure
])
def test_read_span_last_explicit_marker(reply, value):
    assert read_span(reply).value == value


STOPS = ["train station", "beach", "bus depot", "bridge", "stumblebum"]  # a real KRE ECQA option list
# real KRE ECQA option lists holding a revision word ("wait"): an option, not a revision
DATE = ["wait for", "bathe", "go for haircut", "plan revenge", "dress nice"]
RIDE = ["frustration", "waiting", "hair", "time", "patience"]


@pytest.mark.parametrize("reply, options, option", [
    # a revision between two options: the option after it wins, in any case and markup
    ("bridge, no wait, bus depot", STOPS, "bus depot"),
    ("**bridge** -- actually, **bus depot**", STOPS, "bus depot"),
    ("Bridge. Wait, no: bus depot.", STOPS, "bus depot"),
    ("I think the bridge. On second thought, it's the bus depot.", STOPS, "bus depot"),
    ("beach? Wait. No: bridge", STOPS, "bridge"),
    # an option spelling a revision word is an option, not a revision
    ("wait for", DATE, "wait for"),
    ("Wait for.", DATE, "wait for"),
    ("waiting", RIDE, "waiting"),
    ("plan revenge, no: wait for", DATE, "wait for"),
    ("time, actually waiting", RIDE, "waiting"),
    ("wait for, actually, dress nice", DATE, "dress nice"),
    # no revision, or nothing earlier to revise: as before
    ("bus depot (or possibly a train station)", STOPS, "bus depot"),
    ("bus depot or bridge", STOPS, None),  # a hedge across options
    ("bridge, no wait, bus depot or train station", STOPS, None),  # revised to a hedge
    ("bridge, no wait, I am not sure", STOPS, None),  # revised to no option
    ("bridge, no wait", STOPS, None),  # nothing after the revision
    ("No, bus depot", STOPS, None),  # no earlier option: "No" is a negation here
    # "no," then a negated option is not a double negation: read with and without the "no"
    # counted, the two disagree (bus depot / none): a counted failure, never the negated option
    ("bridge, no, not the bus depot", STOPS, None),
    ("No, not the bus depot.", STOPS, None),
])
def test_option_match_follows_a_revision(reply, options, option):
    assert option_match(reply, options).option == option


@pytest.mark.parametrize("reply", [
    "<a>A</a> and <a>C</a>",  # two tags, no revision, no marker
    "The answer is A. The answer is B.",  # running text, no marker
    "Answer: A or B",  # the decisive marker joins two letters
    "Answer: A ... actually the answer is A or D",
])
def test_parse_choice_disagreement_without_a_marker_is_ambiguous(reply):
    parsed = parse_choice(reply)
    assert not parsed.ok and parsed.reason.startswith("ambiguous"), parsed


S, C, I = "SUPPORTS", "CONTRADICTS", "IRRELEVANT"


@pytest.mark.parametrize("reply, label", [
    ('{"answer": "SUPPORTS"}\n\nHowever, the document gives 1973, so the correct label is CONTRADICTS.', C),
    ('{"answer": "SUPPORTS"}\nLabel: CONTRADICTS', C),
    ('{"answer": "SUPPORTS"}\nFinal label: IRRELEVANT', I),
    ("SUPPORTS. Actually, CONTRADICTS", C),
    ("IRRELEVANT\n\nOn second thought: SUPPORTS.", S),
    # hypothetical wording in the explanation stays no vote
    ('{"answer": "IRRELEVANT"}\nHad it named the year, the label would be SUPPORTS.', I),
    ("SUPPORTS\n\nThe document states that cats purr.", S),
])
def test_parse_label_last_explicit_verdict_and_revisions(reply, label):
    parsed = parse_label(reply)
    assert parsed.label == label and parsed.error is None, parsed


@pytest.mark.parametrize("reply", [
    "SUPPORTS and CONTRADICTS",
    "Answer: SUPPORTS or CONTRADICTS",
    "**SUPPORTS / IRRELEVANT**",
    "The label would be SUPPORTS; the label would be IRRELEVANT.",
])
def test_parse_label_hedge_across_labels_is_a_counted_failure(reply):
    parsed = parse_label(reply)
    assert parsed.label is None and parsed.error.startswith("ambiguous"), parsed


def test_parse_label_list_revised_list_wins():
    reply = '[{"document": 1, "answer": "SUPPORTS"}]\nActually:\n[{"document": 1, "answer": "CONTRADICTS"}]'
    assert [p.label for p in parse_label_list(reply, 1)] == [C]


def test_parse_label_list_revised_loose_object_wins():
    one = '{"document": 1, "answer": "SUPPORTS"}\n%s{"document": 1, "answer": "CONTRADICTS"}'
    assert [p.label for p in parse_label_list(one % "Actually, on reflection:\n", 1)] == [C]
    assert parse_label_list(one % "", 1)[0].error.startswith("conflicting labels")  # no revision: never a pick


@pytest.mark.parametrize("reply, value", [
    ("YES\n\nActually, on reflection:\nVerdict: NO", False),
    ("NO. Actually, YES.", True),
    ("Verdict: YES\nFinal verdict: NO", False),
    ("NO\nVerdict: YES", True),
])
def test_microact_verdict_revisions_and_labels(reply, value):
    parsed = parse_verdict(reply)
    assert parsed.rationalizes is value and parsed.error is None, parsed


def test_microact_unlabelled_verdicts_that_disagree_stay_a_failure():
    assert parse_verdict("yes\n\nno").rationalizes is None


@pytest.mark.parametrize("reply, value", [
    ("Yes. Actually, no.", "no"),
    ("No. On second thought, yes.", "yes"),
    ("Answer: yes\nFinal answer: no", "no"),
    ("Answer: yes. Actually, the answer is no.", "no"),
])
def test_yes_no_revisions_and_final_markers(reply, value):
    parsed = parse_yes_no(reply)
    assert parsed.ok and parsed.value == value, parsed


@pytest.mark.parametrize("reply", ["The answer is yes. The answer is no.", "Yes or no? Hard to say."])
def test_yes_no_without_a_marker_stays_a_failure(reply):
    assert not parse_yes_no(reply).ok


@pytest.mark.parametrize("marker", ["Answer:", "Final answer:", "the answer is", "<a>"])
def test_a_letter_far_from_its_marker_is_not_its_answer(marker):
    """MAX_GAP: an answer stands within 100 blank characters of its marker, so
    a marker then 2,000 or 20,000 spaces reads the same way (one path: linear)."""
    near, far = marker + "\n\n  B", marker + " " * 2_000 + "B"
    if marker == "<a>":
        assert first_tagged_answer(near) == ("<a>B</a>", None)
        assert first_tagged_answer(far)[0] is None
    else:
        assert parse_choice(near).letter == "B"
        assert parse_choice(far).method != "phrase"
    assert parse_label(marker.replace("<a>", "Answer:") + " " * 2_000 + "SUPPORTS").error is not None


def _cpu(fn, text: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        fn(text)
        best = min(best, time.thread_time() - start)
    return best


def test_parse_choice_on_many_tags_is_linear():
    """The one-pass decision: 10,000 agreeing tags must not cost 10,000 scans
    of the reply (a quadratic decision took ~1 s here, a linear one ~0.07 s)."""
    tags = "<a>B</a>" * 2_500
    assert _cpu(parse_choice, tags) < 0.5
