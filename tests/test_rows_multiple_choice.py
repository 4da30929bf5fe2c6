"""Row.options / Row.letter and the id helpers shared by the multiple-choice loaders."""

import pytest

from conflict_eval.records import BadField, Row, content_id, numbered


def test_options_and_letters():
    row = Row({"options": ["water", "desert", "sky"], "gold": " a ", "wrong": "B", "same": "A"})
    options = row.options("options")
    assert options == ["water", "desert", "sky"]
    assert row.letter("gold", options) == "A"
    assert row.letter("wrong", options, unlike="gold") == "B"
    with pytest.raises(BadField) as err:
        row.letter("same", options, unlike="gold")
    assert err.value.field == "same" and "equals gold" in str(err.value)


@pytest.mark.parametrize("value", [["only one"], ["a", " "], ["a", 2], "ab"])
def test_options_need_two_non_empty_strings(value):
    with pytest.raises(BadField) as err:
        Row({"choices": value}).options("choices")
    assert err.value.field == "choices"


def test_letter_outside_the_options_names_the_field():
    with pytest.raises(BadField) as err:
        Row({"answer": "C"}).letter("answer", ["x", "y"])
    assert err.value.field == "answer" and "expected one of ['A', 'B'], got 'C'" in str(err.value)


def test_content_id_and_numbering():
    # sha1("q\nx") by hand: hashlib.sha1(b"q\nx").hexdigest()[:10]
    import hashlib

    assert content_id("kre_ecqa", "q", "x") == "kre_ecqa-" + hashlib.sha1(b"q\nx").hexdigest()[:10]
    number = numbered()
    assert [number("a"), number("b"), number("a"), number("a")] == ["a", "b", "a-2", "a-3"]
