"""conflict_eval.answers.refusal: one conservative refusal recogniser for every method."""

from __future__ import annotations

import pytest

from conflict_eval.answers import find_refusal, reads_as_refusal


@pytest.mark.parametrize("text", [
    "I cannot determine which option is correct.",
    "I can not answer this question based on the documents.",
    "We can't tell from the evidence.",
    "Sorry, I'm not able to choose between the options.",
    "I am unable to determine the answer.",
    "It is impossible to tell from these documents.",
    "There is no way to know which document is right.",
    "Unable to determine.",
    "The answer cannot be determined from the context.",
    "I don't know.", "I do not know the answer.", "i dont know",
    "I'm not sure.", "I am uncertain which is right.",
    "None of the options is correct.", "None of the given options fits.", "None of the above.",
    "Neither of the options is supported.", "Neither (A) nor (B) is supported.",
    "The documents do not contain enough information to answer this.",
    "The context doesn't provide sufficient information.",
    "There is not enough evidence.", "There is insufficient information to decide.",
    "Based on the documents, I cannot reliably determine the answer.",
    "**I cannot determine the answer.**",
    "Not sure.", "No idea", "**Unsure**", "idk",
])
def test_sincere_refusals(text):
    assert reads_as_refusal(text), text


@pytest.mark.parametrize("text", [
    "",
    "B",
    "Paris",
    "I cannot be certain, but the answer is most likely B.",
    "I don't know for sure; however, Paris fits best.",
    "I can't say for certain. My best guess is Rome.",
    "I'm not sure, but I'd go with A.",
    'Document 2 says "I don\'t know", but Document 1 names Paris.',
    "Document 1 states there is not enough evidence; Document 2 settles it: Paris.",
    "> I cannot determine the answer.\n\nThat quote aside, it is Paris.",
    "None of the documents address this question.",
    "I know the answer: Paris.",
    "I cannot stress this enough: Paris.",
    "The answer is not determined by the first document alone; the second says Paris.",
    "A man walked into a bar.",
    "Unknown.", "None", "N/A",           # can be answers
    "Not sure why anyone asks, but Paris.",
])
def test_not_refusals(text):
    assert not reads_as_refusal(text), text


def test_find_refusal_gives_the_words_and_where():
    text = "After reading the documents: I cannot determine the answer."
    found = find_refusal(text)
    assert found.phrase == "I cannot determine" and text[found.span[0]:found.span[1]] == found.phrase


def test_total_on_any_string_and_caller_errors_raise():
    assert find_refusal("\ud800 I don't know \udfff") is not None  # lone surrogates are read, not fatal
    assert find_refusal("(" * 50_000) is None
    with pytest.raises(TypeError):
        reads_as_refusal(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["Unknown.", "None", "N/A", "It is unclear.", "The context does not say.",
                                  "No information given."])
def test_an_answer_slot_refuses_with_no_answer_words(text):
    """In a whole reply these can be an answer; in an answer slot they say there is none."""
    assert not reads_as_refusal(text) and reads_as_refusal(text, answer_slot=True), text


def test_typographic_quotes_are_folded_once_and_the_phrase_is_as_written():
    found = find_refusal("Honestly, I don’t know.")
    assert found.phrase == "I don’t know" and found.span == (10, 22)
    assert reads_as_refusal("I can’t determine it.") and not reads_as_refusal("Document 2 says “I don’t know”, but Paris.")
