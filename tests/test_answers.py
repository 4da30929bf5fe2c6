"""Tests for conflict_eval.answers (multiple-choice parsing)."""

from __future__ import annotations

import dataclasses
import doctest

import pytest

import conflict_eval.answers as answers
from conflict_eval.answers import ChoiceParse, letters_for, parse_choice


# --------------------------------------------------------------------------
# Accepted forms


@pytest.mark.parametrize(
    "text, letter, method",
    [
        ("<a>B</a>", "B", "tag"),
        ("<a> c </a>", "C", "tag"),
        ("<A>(d)</A>", "D", "tag"),
        ("<answer>b) Paris</answer>", "B", "tag"),
        ("Reasoning...\n<a>A.</a>", "A", "tag"),
        ("(A)", "A", "lead"),
        ("[c]", "C", "lead"),
        ("A.", "A", "lead"),
        ("A)", "A", "lead"),
        ("B) Paris", "B", "lead"),
        ("- C. Rome", "C", "lead"),
        ("B:", "B", "lead"),
        ("B: Gluons are studied in particle physics, not biochemistry.", "B", "lead"),
        ("B. text", "B", "lead"),
        ("D (walked)", "D", "lead"),
        ("**D** — walked", "D", "lead"),
        ("A – The tune has no recorded composer", "A", "lead"),
        ("Sure, here it is:\n\nc) Rome", "C", "lead"),
        ("I weighed the documents.\n(A)", "A", "paren"),
        ("I weighed the documents, then [c].", "C", "paren"),
        ("I weighed the documents.\nA.", "A", "bare"),
        ("I weighed the documents.\nA)", "A", "delimited"),
        ("I weighed the documents.\nB) Paris", "B", "delimited"),
        ("I weighed the documents.\n- C. Rome", "C", "delimited"),
        ("Answer: A", "A", "phrase"),
        ("answer is A", "A", "phrase"),
        ("answer: b", "B", "phrase"),
        ("The answer is (B).", "B", "phrase"),
        ("the correct option is (B)", "B", "phrase"),
        ("The best choice would be D.", "D", "phrase"),
        ("**Final Answer:** **D**", "D", "phrase"),
        ("Final answer:\n\nC", "C", "phrase"),
        ("The answer to the question is C.", "C", "phrase"),
        ("The correct answer is option C", "C", "phrase"),
        ("The answer is A because it fits", "A", "phrase"),
        ("The answer is B, since Paris is in France.", "B", "phrase"),
        ("Answer - D", "D", "phrase"),
        ("The answer (B)", "B", "phrase"),
        ("I would choose A.", "A", "phrase"),
        ("I'll go with option (C)", "C", "phrase"),
        ("We pick D", "D", "phrase"),
        ("B", "B", "lead"),
        ("b", "B", "lead"),
        ("a", "A", "lead"),
        ("  **C**  ", "C", "lead"),
        ('"D"', "D", "lead"),
        ("Let me think about it.\nB", "B", "bare"),
    ],
)
def test_accepted_forms(text, letter, method):
    r = parse_choice(text)
    assert r.ok, r.reason
    assert r.letter == letter
    assert r.method == method
    assert r.reason is None
    assert r.index == "ABCD".index(letter)
    start, end = r.span
    assert text[start:end].upper() == letter


def test_span_points_at_the_letter():
    text = "I am fairly sure. Answer: C"
    r = parse_choice(text)
    assert r.span == (len(text) - 1, len(text))


# --------------------------------------------------------------------------
# Precedence and "last match wins"


def test_last_declarative_match_wins():
    r = parse_choice("Answer: A ... wait, that is wrong. Answer: B")
    assert (r.letter, r.method) == ("B", "phrase")
    r = parse_choice("<a>A</a> no, <a>C</a>")
    assert (r.letter, r.method) == ("C", "tag")


@pytest.mark.parametrize(
    "text, named",
    [
        ("Answer: B or C", "B, C"),
        ("The answer is B, C and D.", "B, C, D"),
        ("<a>A/B</a>", "A, B"),
        ("The answer is (A) or (c)", "A, C"),
        ("answer: a or b", "A, B"),
        ("Answer: A ... actually the answer is A or D", "A, D"),
    ],
)
def test_declaring_several_letters_is_ambiguous(text, named):
    r = parse_choice(text)
    assert not r.ok
    assert r.reason == f"ambiguous: the answer names several letters ({named})"


@pytest.mark.parametrize(
    "text, letter",
    [
        ("Answer: A, a classic choice", "A"),
        ("Answer: B, and that is final", "B"),
        ("Answer: B, because C is wrong", "B"),
        ("Answer: B (C is wrong)", "B"),
        ("Answer: B and B", "B"),
        ("Answer: A or B? No. Answer: C", "C"),
    ],
)
def test_single_declared_letter_with_trailing_text(text, letter):
    r = parse_choice(text)
    assert (r.ok, r.letter) == (True, letter), r.reason


def test_tag_beats_answer_phrase_even_if_earlier():
    r = parse_choice("<a>D</a>\nSome people would say the answer is A.")
    assert (r.letter, r.method) == ("D", "tag")


def test_answer_phrase_beats_parenthesised_mentions():
    r = parse_choice("The answer is B. (A) is wrong because (C) and (D) are unrelated.")
    assert (r.letter, r.method) == ("B", "phrase")


def test_parenthesised_beats_bare_and_delimited():
    r = parse_choice("Some thought.\nA. First line\nProbably (C) fits")
    assert (r.letter, r.method) == ("C", "paren")


def test_loose_rule_with_conflicting_letters_is_ambiguous():
    r = parse_choice("(A) Paris (B) London")
    assert not r.ok
    assert r.reason == "ambiguous: several different letters found (A, B)"
    r = parse_choice("A) Paris\nB) London\nC) Rome")
    assert not r.ok and r.reason.startswith("ambiguous")


def test_loose_ambiguity_can_be_resolved_by_a_weaker_unambiguous_rule():
    r = parse_choice("(A) is wrong, (B) fits the evidence.\n\nB")
    assert (r.ok, r.letter, r.method) == (True, "B", "bare")


def test_loose_rule_repeating_one_letter_is_fine():
    text = "I'd say (B) looks good. Yes, (B)."
    r = parse_choice(text)
    assert (r.ok, r.letter) == (True, "B")
    last = text.rindex("B")
    assert r.span == (last, last + 1)  # the last occurrence


# --------------------------------------------------------------------------
# Running text is not an answer


@pytest.mark.parametrize(
    "text",
    [
        "A man went to the market.",
        "I think so too.",
        "The answer is a bit unclear.",
        "The answer to a question like this is hard.",
        "answer the question carefully",
        "Option A says X; option B says Y.",
        "e.g. something, i.e. nothing",
        "Vitamin C is good for you.",
        "answer(s) will follow",
        "I would choose a different approach.",
        "It's B-grade work",
    ],
)
def test_running_text_has_no_choice(text):
    r = parse_choice(text)
    assert not r.ok
    assert r.letter is None and r.span is None and r.method is None and r.index is None
    assert r.reason.startswith("no choice letter found")


def test_empty_response():
    for text in ("", "   \n\t"):
        r = parse_choice(text)
        assert (r.ok, r.reason) == (False, "empty response")


# --------------------------------------------------------------------------
# Allowed letters


def test_declared_letter_outside_allowed_set_is_failure():
    r = parse_choice("Final answer: E")
    assert not r.ok
    assert r.reason == "letter 'E' is not one of the allowed choices A, B, C, D"
    r = parse_choice("<a>X</a>")
    assert not r.ok and "'X'" in r.reason


def test_loose_letters_outside_allowed_set_are_ignored():
    r = parse_choice("(i) it is cheap, (e) it is fast.\n(B)")
    assert (r.ok, r.letter) == (True, "B")
    r = parse_choice("E")
    assert not r.ok
    assert r.reason == "no choice letter found (letters outside the allowed choices A, B, C, D: E)"


def test_custom_letters_string_and_sequence():
    assert parse_choice("Answer: E", letters="ABCDE").letter == "E"
    assert parse_choice("Answer: e", letters=["a", "b", "c", "d", "e"]).letter == "E"
    r = parse_choice("Answer: B", letters="AB")
    assert (r.letter, r.index) == ("B", 1)
    assert not parse_choice("Answer: C", letters="AB").ok
    assert parse_choice("Answer: I", letters=letters_for(10)).letter == "I"


@pytest.mark.parametrize("bad", ["", "AA", ["A", "BC"], ["1"], "A-", [None]])
def test_malformed_letters_raise(bad):
    with pytest.raises(ValueError):
        parse_choice("A", letters=bad)


def test_non_string_text_raises():
    with pytest.raises(TypeError):
        parse_choice(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_choice(b"A")  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# Option-text fallback


def test_option_text_fallback_exactly_one():
    text = "It must be Rome."
    r = parse_choice(text, options=["Paris", "Rome", "London"])
    assert (r.ok, r.letter, r.method, r.index) == (True, "B", "option_text", 1)
    assert text[r.span[0] : r.span[1]] == "Rome"


def test_option_text_is_case_and_punctuation_tolerant():
    r = parse_choice("the answer: new-york city", options=["Paris", "New York City"])
    assert r.letter == "B"


def test_option_text_requires_word_boundaries():
    r = parse_choice("Parisian food is great", options=["Paris", "Rome"])
    assert not r.ok and r.reason == "no choice letter found"


def test_option_text_several_matches_is_ambiguous():
    r = parse_choice("Paris or London, hard to say", options=["Paris", "London"])
    assert not r.ok
    assert r.reason == "ambiguous: text of several options found (A, B)"


def test_option_text_prefers_answer_scope():
    r = parse_choice("London is tempting.\nAnswer: Paris", options=["Paris", "London"])
    assert r.letter == "A"
    r = parse_choice("Not Paris. <a>Rome</a>", options=["Paris", "Rome"])
    assert r.letter == "B"


def test_option_text_longer_option_shadows_contained_one():
    r = parse_choice("It is Paris, Texas.", options=["Paris", "Paris, Texas", "Rome"])
    assert r.letter == "B"
    r = parse_choice("Paris. Not Paris, Texas.", options=["Paris", "Paris, Texas"])
    assert not r.ok and r.reason.startswith("ambiguous")


def test_option_text_not_used_when_letters_are_ambiguous_or_invalid():
    r = parse_choice("(A) or (B)? Rome.", options=["Paris", "Rome"])
    assert not r.ok and r.reason.startswith("ambiguous")
    r = parse_choice("Answer: E (Rome)", options=["Paris", "Rome"])
    assert not r.ok and "'E'" in r.reason


def test_letters_take_precedence_over_option_text():
    r = parse_choice("Rome. Answer: A", options=["Paris", "Rome"])
    assert (r.letter, r.method) == ("A", "phrase")


def test_options_validation():
    with pytest.raises(ValueError):
        parse_choice("x", letters="AB", options=["a", "b", "c"])
    with pytest.raises(TypeError):
        parse_choice("x", options="Paris")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_choice("x", options=["a", 3])  # type: ignore[list-item]
    # Empty option texts never match.
    assert not parse_choice("anything", options=["", "..."]).ok


# --------------------------------------------------------------------------
# Result type and helpers


def test_choice_parse_is_frozen_and_consistent():
    r = parse_choice("B")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.letter = "C"  # type: ignore[misc]
    with pytest.raises(ValueError):
        ChoiceParse(letter=None, ok=True)
    with pytest.raises(ValueError):
        ChoiceParse(letter="A", ok=False, reason="x")
    with pytest.raises(ValueError):
        ChoiceParse(letter=None, ok=False)
    assert ChoiceParse.failure("nope") == ChoiceParse(None, False, "nope")


def test_letters_for():
    assert letters_for(1) == "A"
    assert letters_for(4) == "ABCD"
    assert letters_for(26) == "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    for bad in (0, -1, 27):
        with pytest.raises(ValueError):
            letters_for(bad)
    with pytest.raises(TypeError):
        letters_for(2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        letters_for(True)  # type: ignore[arg-type]


def test_doctests():
    result = doctest.testmod(answers)
    assert result.attempted > 0 and result.failed == 0


# --------------------------------------------------------------------------
# Issue 32: the choice a reply opens with, refusals, genuine ambiguity

GLUON_OPTIONS = ["Gluons are studied in particle physics.", "Biochemistry does not study gluons.", "Uncertain."]


@pytest.mark.parametrize("text, letter", [
    # the choice, then an explanation that quotes a document's or an option's letter or text
    ('(B)\n\nDocument 3 claims "(A) Mozart composed it", but the melody is an older French tune.', "B"),
    ("(B) -- (A) is a common misconception.", "B"),
    ("B: Biochemistry does not study gluons. Gluons are studied in particle physics.", "B"),
    ("B: Gluons are studied in particle physics, not biochemistry.", "B"),
    ("**B** — Biochemistry does not study gluons; option A says otherwise.", "B"),
    ("b) biochemistry does not study gluons", "B"),
    ("Sure, here it is:\n\nB: Biochemistry does not study gluons. (A) is wrong.", "B"),
    # the choice restated later agrees; a revision wins
    ("B: Biochemistry does not study gluons.\n\nSo the answer is B.", "B"),
    ("B: Biochemistry does not study gluons.\n\nActually, on reflection the answer is A.", "A"),
    # a final-answer line after working
    ("ANSWER1: A\nANSWER2: B\nFinal answer: B", "B"),
    ("C. S. Lewis has nothing to do with it; the answer is B.", "B"),  # initials are no choice
    ("Document 1 says (A); document 2 says (B). Weighing them:\nFinal answer: **b**", "B"),
])
def test_leading_choice_and_final_answer(text, letter):
    r = parse_choice(text, "ABC", options=GLUON_OPTIONS)
    assert r.ok and r.letter == letter, r


@pytest.mark.parametrize("text, reason", [
    ("A or B", "no choice letter found"),
    ("The answer is A or B.", "ambiguous: the answer names several letters (A, B)"),
    # (two explicit answer labels, "Answer: A" then "Answer: B": the last one wins, tests/test_reader_contract.py)
    ("B: Biochemistry does not study gluons.\n\nHowever, the correct answer is A.",
     "ambiguous: the reply declares different answers (B, A)"),
    ("A. Gluons are studied in particle physics.\nB. Biochemistry does not study gluons.",  # a listing
     "ambiguous: several different letters found (A, B)"),
    ("(A) particle physics (B) biochemistry", "ambiguous: several different letters found (A, B)"),
    ("A: Biochemistry does not study gluons.", "ambiguous: letter A but the text of option B"),
    # a sentence that opens with an initial and then declares another letter: not read as either
    ("A. Einstein never studied gluons, so the answer is B.", "ambiguous: the reply declares different answers (A, B)"),
])
def test_genuine_ambiguity_stays_a_counted_failure(text, reason):
    r = parse_choice(text, "ABC", options=GLUON_OPTIONS)
    assert not r.ok and not r.refused and r.reason == reason, r


@pytest.mark.parametrize("text, phrase", [
    ("I cannot determine the answer from the documents.", "I cannot determine"),
    ("I can't tell which option is right.", "I can't tell"),
    ("I'm unable to answer this question.", "I'm unable to answer"),
    ("None of the options is supported by the documents.", "None of the options"),
    ("None of the above.", "None of the above"),
    ("The documents do not contain enough information to answer.", "not contain enough information"),
    ("There is insufficient evidence to choose between (A) and (B).", "insufficient evidence"),
    ("Neither A nor B is correct.", "Neither A nor B"),
    ("It cannot be determined from the passages whether (A) or (B) holds.", "cannot be determined"),
    ("I don't know.", "I don't know"),
    ("I'm not sure.", "I'm not sure"),
    ("Answer: I don't know.", "I don't know"),
])
def test_a_sincere_refusal_is_a_refusal_not_a_parse_failure(text, phrase):
    r = parse_choice(text, "ABC")
    assert not r.ok and r.refused and r.letter is None
    assert r.reason == f"refusal: {phrase!r}"


@pytest.mark.parametrize("text, letter", [
    ("I cannot be certain, but the answer is B.", "B"),          # a refusal that still declares a letter
    ("I don't know for sure. (B)", "B"),
    ("(A)\n\nNone of the documents address this question.", "A"),  # real Table 12 reply: "documents", not options
    ("I'm uncertain.", "C"),                                        # the words are option C's text
])
def test_refusal_words_with_a_choice_are_the_choice(text, letter):
    r = parse_choice(text, "ABC", options=GLUON_OPTIONS)
    assert r.ok and r.letter == letter and not r.refused, r


def test_a_refused_parse_is_never_ok():
    with pytest.raises(ValueError):
        ChoiceParse(letter="A", ok=True, refused=True)
    r = ChoiceParse.refusal("I cannot  determine")
    assert (r.ok, r.refused, r.reason) == (False, True, "refusal: 'I cannot determine'")
