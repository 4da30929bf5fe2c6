"""Conservative matching of a free answer to an option (conflict_eval.answers.options):
issue 32's shapes (negation, number, head word never match; morphology does),
golden values by hand."""

import pytest

from conflict_eval.answers.options import match_option, read_words, stem

ECQA_EYES = ["tongues", "names", "brains", "feelings", "two eyes"]
ECQA_TV = ["entertainment", "falling asleep", "getting fat", "crying", "relaxation"]
ECQA_BIRDS = ["pretty smart", "singing", "dark", "very colorful", "light"]
FLAX = ["He processes flaxseeds.", "The researcher needed a kind of addition compound."]


@pytest.mark.parametrize("answer, options, option, reason", [
    # a different number is never a match
    ("three eyes", ECQA_EYES, None, "no option matches"),
    ("3 eyes", ECQA_EYES, None, "no option matches"),
    ("eyes", ECQA_EYES, None, "no option matches"),
    ("2 eyes", ECQA_EYES, "two eyes", None),
    ("Two Eyes", ECQA_EYES, "two eyes", None),
    # a negation is never a match
    ("not falling asleep", ECQA_TV, None, "no option matches"),
    ("He does not process flaxseeds", FLAX, None, "no option matches"),
    ("He doesn’t process flaxseeds", FLAX, None, "no option matches"),
    ("He never processes flaxseeds", FLAX, None, "no option matches"),
    ("He processes flaxseeds", FLAX, FLAX[0], None),
    # morphological variants do match
    ("darkness", ECQA_BIRDS, "dark", None),
    ("Darker", ECQA_BIRDS, None, "no option matches"),  # a comparative is another word
    ("fell asleep", ECQA_TV, None, "no option matches"),  # irregular forms are not guessed
    ("relaxing", ECQA_TV, None, "no option matches"),
    ("relaxation", ECQA_TV, "relaxation", None),
    # a different head word is never a match
    ("dark feathers", ECQA_BIRDS, None, "no option matches"),
    ("colorful", ECQA_BIRDS, "very colorful", None),
    # several options: unmatched, never the first
    ("light", ["light", "light blue"], "light", None),  # the same text wins
    ("blue", ["light blue", "dark blue"], None, "several options match (0, 1)"),
    ("", ECQA_BIRDS, None, "empty answer"),
])
def test_match_option(answer, options, option, reason):
    m = match_option(answer, options)
    assert (m.option, m.reason) == (option, reason)
    assert m.status == ("matched" if option else "unmatched")


def test_readings_by_hand():
    r = read_words("He doesn't process 1,000 flaxseeds, not 4.5!")
    assert r.content == ("process", "flaxse") or r.content == ("process", "flaxseed")
    assert r.negations == 2 and r.numbers == ("1000", "4.5")
    assert [stem(w) for w in ("walked", "walking", "walks")] == ["walk"] * 3


@pytest.mark.parametrize("answer", ["not " * 20_000, "1 " * 20_000, "a" * 100_000, "\ud800", None],
                         ids=["nots", "ones", "long-word", "surrogate", "none"])
def test_total(answer):
    assert match_option(answer, ECQA_EYES).option is None
