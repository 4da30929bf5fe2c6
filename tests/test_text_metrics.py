"""Tests for conflict_eval.answers.text_metrics (token F1, EM, cover-EM)."""

from __future__ import annotations

import doctest

import pytest

import conflict_eval.answers.text_metrics as tm
from conflict_eval.answers.text_metrics import (
    NORMALIZERS,
    PRF,
    cover_em,
    exact_match,
    f1_precision_recall,
    get_normalizer,
    normalize_atomr,
    normalize_squad,
    token_f1,
)

# --------------------------------------------------------------------------
# Normalisers


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The Eiffel Tower", "eiffel tower"),
        ("  An   apple,\ta DAY!  ", "apple day"),
        ("state-of-the-art", "stateoftheart"),  # punctuation deleted, not spaced
        ("Theatre and anthem", "theatre and anthem"),  # articles only as whole words
        ("U.S.A.", "usa"),
        ("O'Neill's", "oneills"),
        ("1,000", "1000"),
        ("the a an", ""),
        ("", ""),
        ("Café – Zürich", "café – zürich"),  # non-ASCII punctuation is kept (as SQuAD)
    ],
)
def test_normalize_squad(text, expected):
    assert normalize_squad(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("state-of-the-art", "state of art"),
        ("Jean-Paul Sartre", "jean paul sartre"),
        ("The Eiffel-Tower!", "eiffel tower"),
        ("well--known", "well known"),
        ("U.S.A.", "usa"),
        ("an X-ray", "x ray"),
        ("1990–2000", "1990–2000"),  # en dash is not a hyphen
    ],
)
def test_normalize_atomr(text, expected):
    assert normalize_atomr(text) == expected


def test_normalizer_registry():
    assert set(NORMALIZERS) == {"squad", "atomr", "squad_authors", "atomr_authors"}
    assert NORMALIZERS["squad"] is normalize_squad
    assert NORMALIZERS["atomr"] is normalize_atomr
    assert get_normalizer("atomr") is normalize_atomr
    assert get_normalizer(str.upper) is str.upper
    with pytest.raises(ValueError, match="available: atomr, atomr_authors, squad, squad_authors"):
        get_normalizer("nope")
    with pytest.raises(TypeError):
        get_normalizer(3)  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# token F1 (values computed by hand)


def test_token_f1_hand_computed():
    # pred "cat sat on mat" (4), gold "cat on mat" (3): 3 common, P=3/4, R=1 -> 6/7
    assert token_f1("the cat sat on the mat", "a cat on a mat") == pytest.approx(6 / 7)
    # pred "new york" (2), gold "new york city" (3): 2 common, P=1, R=2/3 -> 0.8
    assert token_f1("New York", "New York City") == pytest.approx(0.8)
    # Counter (multiset) overlap: "x x x" vs "x y": common = min(3, 1) = 1,
    # P=1/3, R=1/2 -> 2*(1/6)/(5/6) = 0.4
    assert token_f1("x x x", "x y") == pytest.approx(0.4)
    assert token_f1("Paris", "London") == 0.0
    assert token_f1("Paris!", "paris") == 1.0


def test_token_f1_max_over_golds():
    golds = ["London", "New York City", "New York"]
    assert token_f1("New York", golds) == 1.0
    assert token_f1("York", ["London", "New York City"]) == pytest.approx(0.5)  # P=1, R=1/3


def test_token_f1_empty_cases():
    assert token_f1("", "") == 1.0
    assert token_f1("the", "An") == 1.0  # both normalise to empty
    assert token_f1("", "Paris") == 0.0
    assert token_f1("Paris", "") == 0.0
    assert token_f1("Paris", ["", "Paris"]) == 1.0


def test_token_f1_normalizer_choice_matters():
    # squad: "xray" vs "x ray" share nothing; atomr: both become "x ray".
    assert token_f1("X-ray", "x ray", normalizer="squad") == 0.0
    assert token_f1("X-ray", "x ray", normalizer="atomr") == 1.0
    assert token_f1("ABC", "abc", normalizer=lambda s: s) == 0.0


def test_f1_precision_recall():
    assert f1_precision_recall("the cat sat on the mat", "a cat on a mat") == PRF(
        pytest.approx(6 / 7), 0.75, 1.0
    )
    best = f1_precision_recall("New York", ["York", "New York City"])
    # vs "york": P=1/2, R=1, F1=2/3 ; vs "new york city": P=1, R=2/3, F1=0.8
    assert best.f1 == pytest.approx(0.8)
    assert (best.precision, best.recall) == (1.0, pytest.approx(2 / 3))
    assert f1_precision_recall("", "") == PRF(1.0, 1.0, 1.0)
    assert f1_precision_recall("x", "") == PRF(0.0, 0.0, 0.0)


# --------------------------------------------------------------------------
# Exact match and cover-EM


def test_exact_match():
    assert exact_match("The Beatles!", "beatles") == 1.0
    assert exact_match("Beatles band", "beatles") == 0.0
    assert exact_match("Paris", ["London", "paris"]) == 1.0
    assert exact_match("", "the") == 1.0
    assert exact_match("well-known", "well known") == 0.0
    assert exact_match("well-known", "well known", normalizer="atomr") == 1.0


def test_cover_em_token_boundaries():
    assert cover_em("It was in New York City.", "new york") == 1.0
    assert cover_em("It was in New York City.", "York City") == 1.0
    assert cover_em("a fresh start", "art") == 0.0
    assert cover_em("Obamacare", "Obama") == 0.0
    assert cover_em("York New", "new york") == 0.0  # order matters
    assert cover_em("Paris", "Paris, France") == 0.0  # gold longer than prediction
    assert cover_em("The answer is Barack Obama.", ["Obama", "Barack H. Obama"]) == 1.0


def test_cover_em_empty_gold_falls_back_to_exact_match():
    assert cover_em("anything at all", "the") == 0.0
    assert cover_em("", "the") == 1.0
    assert cover_em("the", "") == 1.0
    assert cover_em("Paris", ["", "paris"]) == 1.0


def test_cover_em_with_atomr_hyphens():
    assert cover_em("a state-of-the-art model", "state of the art", normalizer="squad") == 0.0
    assert cover_em("a state-of-the-art model", "state of the art", normalizer="atomr") == 1.0


def test_cover_em_with_custom_normalizer_whitespace():
    assert cover_em("A  B   C", "b c", normalizer=str.lower) == 1.0


def test_cover_em_implies_f1_recall_one():
    pred, gold = "born in the city of New York in 1950", "New York"
    assert cover_em(pred, gold) == 1.0
    assert f1_precision_recall(pred, gold).recall == 1.0


# --------------------------------------------------------------------------
# Argument validation


@pytest.mark.parametrize("metric", [token_f1, exact_match, cover_em, f1_precision_recall])
def test_argument_validation(metric):
    with pytest.raises(ValueError):
        metric("x", [])
    with pytest.raises(TypeError):
        metric(None, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        metric("x", ["a", None])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        metric("x", "x", normalizer="nope")
    # tuples and other sequences of golds are fine
    assert metric("x", ("y", "x")) in (1.0, PRF(1.0, 1.0, 1.0))


def test_doctests():
    result = doctest.testmod(tm)
    assert result.attempted > 0 and result.failed == 0


def test_quotes_fold_before_normalisation_and_the_authors_normalisers_do_not():
    """Issue 32: “Wulfsige’s farm” is the gold "Wulfsige's farm"; by hand."""
    from conflict_eval.answers.text_metrics import fold_quotes, normalize_atomr_authors, normalize_squad_authors

    assert fold_quotes("“a” ‘b’ „c‟ «d» e′ ʼf") == '"a" \'b\' "c" "d" e\' \'f'
    assert normalize_squad("“Wulfsige’s farm”") == "wulfsiges farm" == normalize_squad("Wulfsige's farm")
    assert normalize_squad_authors("“Wulfsige’s farm”") == "“wulfsige’s farm”"
    assert normalize_atomr("“Jean-Paul’s”") == "jean pauls"
    assert normalize_atomr_authors("“Jean-Paul’s”") == "“jean paul’s”"
    assert exact_match("“Wulfsige’s farm”", "Wulfsige's farm") == 1.0
    assert exact_match("“Wulfsige’s farm”", "Wulfsige's farm", "squad_authors") == 0.0

