"""The shared short-span reader (conflict_eval.answers.span), on the shapes of
issue 32 and the real target replies' shapes. Values by hand."""

import pytest

from conflict_eval.answers.span import read_span, trim_span


@pytest.mark.parametrize("reply, span", [
    # the shapes: a trailing explanation is removed
    ("Harborview (a similar coastal place name)", "Harborview"),
    ("Harborview — a similar coastal place name", "Harborview"),
    ("Harborview – a similar coastal place name", "Harborview"),
    ("Harborview - a similar coastal place name", "Harborview"),
    ("Harborview—a similar coastal place name", "Harborview"),
    ("Harborview, which is a similar coastal place name", "Harborview"),
    ("Harborview, a fictional coastal town", "Harborview"),
    ("Harborview [a place name]", "Harborview"),
    ("Harborview; similar in sound", "Harborview"),
    ("Harborview because it sounds similar", "Harborview"),
    ("Harborview. It is a coastal town.", "Harborview"),
    # markdown, quotes, preambles and labels
    ("**Harborview**", "Harborview"),
    ("`Harborview`.", "Harborview"),
    ('"Harborview" (a similar coastal place name)', "Harborview"),
    ("“Harborview” — a place", "Harborview"),
    ("Answer: Harborview", "Harborview"),
    ("**Final answer:** 1998 (the year of release)", "1998"),
    ("Target: Harborview", "Harborview"),
    ("Misinformation target - Harborview", "Harborview"),
    ("- Harborview", "Harborview"),
    ("1. Harborview (coastal)", "Harborview"),
    # names that keep their commas, dots and hyphens
    ("Greenwich Village, New York City", "Greenwich Village, New York City"),
    ("January 22, 1965", "January 22, 1965"),
    ("Great Eastern Conventions, Inc.", "Great Eastern Conventions, Inc"),
    ("K. A. Applegate", "K. A. Applegate"),
    ("St. Louis, Missouri", "St. Louis, Missouri"),
    ("Jean-Paul Sartre", "Jean-Paul Sartre"),
    ("1990–1995", "1990–1995"),
    ("Wulfric’s tūn", "Wulfric's tūn"),
])
def test_span_shapes(reply, span):
    assert trim_span(reply).value == span
    assert read_span(reply).value == span


@pytest.mark.parametrize("reply, reason", [
    ("Harborview is a similar coastal place name.", "a sentence, not a span"),
    ("Harborview or Seaview", "several alternatives, not one span"),
    ("(a similar coastal place name)", "no span left once the explanation is removed"),
    ("**", "no span found"),
    ("one two three four five six seven eight nine ten eleven", "not a word or phrase (11 words)"),
    ("", "empty reply"),
    ("   \n  ", "empty reply"),
])
def test_span_failures_are_counted_not_guessed(reply, reason):
    assert read_span(reply).reason == reason
    assert read_span(reply).value is None


def test_read_span_takes_the_line_after_a_bare_label_and_skips_fences():
    assert read_span("**Answer:**\nHarborview (a coastal town)\nMore text.").value == "Harborview"
    assert read_span("```\nHarborview\n```").value == "Harborview"
    assert read_span("```\n```").reason == "no span found"


@pytest.mark.parametrize("text", [None, 3, "Answer:" + " " * 20_000 + "x", "X" + " (" * 20_000,
                                  "St. " * 10_000, "a or " * 10_000, '"' * 20_000, "- " * 20_000 + "x"],
                         ids=["none", "int", "label-spaces", "parens", "abbreviations", "ors", "quotes", "markers"])
def test_total(text):
    span = trim_span(text)
    assert span.ok is (span.value is not None)
    span = read_span(text)
    assert span.ok is (span.value is not None)


def test_doctests():
    import doctest

    from conflict_eval.answers import options, span, text_metrics

    for module in (span, options, text_metrics):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
