"""Issue 28 items 1, 3, 4: chatty misinformation-target replies, titles of
injected documents. Real HotpotQA rows; targets read through the real parser."""

import json

import pytest

from conflict_eval.plugins.polluted_kb.build import build_polluted_kb, build_report
from conflict_eval.plugins.polluted_kb.parse import parse_target
from conflict_eval.testing import scripted_model


@pytest.mark.parametrize("reply, gold, value", [
    # the replies, as a strong chat model wrote them
    ("Sure, here is one: **2004**", "1999", "2004"),
    ("Certainly! Here's an alternative:\n\n**Head of Diplomacy**", "Ambassador", "Head of Diplomacy"),
    ("Here's a different phrase: Head of State", "Ambassador", "Head of State"),
    ("How about 'Ambassador to France'?", "Consul", "Ambassador to France"),
    # and their neighbours: curly quotes, fences, a cut-off bold, "I'd suggest"
    ("Sure! How about ‘Head of State’?", "Ambassador", "Head of State"),
    ("```\nHead of State\n```", "Ambassador", "Head of State"),
    ("Sure, here is one: **2004", "1999", "2004"),
    ("I'd suggest Shapeshifters.", "Animorphs", "Shapeshifters"),
    ("Alternative: Shapeshifters", "Animorphs", "Shapeshifters"),
    ("Blues.\n\nThis is a different genre.", "Jazz", "Blues"),
    ("Star Wars: Episode I", "Star Trek: Picard", "Star Wars: Episode I"),
])
def test_chatty_target_reads_the_phrase(reply, gold, value):
    p = parse_target(reply, [gold])
    assert (p.value, p.reason) == (value, None)


@pytest.mark.parametrize("reply, gold, reason", [
    ("Sure! Here is one:", "1999", "no word or phrase found"),
    ("Certainly! Here's an alternative:", "Ambassador", "no word or phrase found"),
    ("The late nineties", "1999", "not a year like the gold answer '1999'"),
    ("about three thousand", "3,677 seated", "no digits, unlike the gold answer '3,677 seated'"),
    ("Unclear", "yes", "not yes/no like the gold answer 'yes'"),
    ("a lot", "1,500", "not a number like the gold answer '1,500'"),
    ("What a question: honestly", "Jazz", "markup or a sentence, not a word or phrase"),
])
def test_target_that_is_not_an_answer_is_a_failure(reply, gold, reason):
    p = parse_target(reply, [gold])
    assert (p.value, p.reason) == (None, reason)


CHATTY = {"Animorphs": "Sure, here is one: **Goosebumps**",
          "Greenwich Village, New York City": "Certainly! Here's an alternative:\n\n**Harlem, Manhattan**",
          "YG Entertainment": "Here's a different phrase: JYP Entertainment",
          "Eenasul Fateh": "Sure! Here is one:"}  # cut at the token limit: no phrase


def chatty(prompt):
    if prompt.startswith("Please give me a word or phrase different from"):
        return next(r for g, r in CHATTY.items() if f'different from "{g}"' in prompt)
    return "A poisoned passage."


def test_kb_from_chatty_replies_injects_no_preamble(small_source):
    kb = build_polluted_kb(small_source, scripted_model(chatty), limit=4)
    assert [q.target for q in kb.questions] == ["Goosebumps", "Harlem, Manhattan", "JYP Entertainment", None]
    assert kb.questions[3].failures == {"target": "no word or phrase found"}
    assert kb.questions[3].injected == {}
    injected = [d for d in kb.documents if d.origin != "clean"]
    assert injected and all(q.question_id != kb.questions[3].id for q in injected)
    for d in injected:
        for junk in ("Sure", "Certainly", "Here's", "here is", "**"):
            assert junk not in d.text and junk not in (d.title or "")
    report = build_report(kb)
    assert report["with_target"] == 3 and report["target_failed"] == 1
    assert report["target_failed_reasons"] == {"no word or phrase found": 1}


def test_type_one_replaces_the_answer_in_the_title_too(small_source):
    # Animorphs: the supporting paragraph titled "Animorphs" must not keep the gold title
    kb = build_polluted_kb(small_source, scripted_model(["Goosebumps"]), types=("I",), limit=1)
    [q] = kb.questions
    docs = [kb.document(i) for i in q.injected["I"]]
    clean_titles = [kb.document(s).title for s in q.supporting_ids]
    assert "Animorphs" in clean_titles
    assert docs and all("animorphs" not in f"{d.title} {d.text}".lower() for d in docs)
    assert "Goosebumps" in [d.title for d in docs]


def test_type_two_three_documents_have_titles(small_source):
    kb = build_polluted_kb(small_source, scripted_model(["Goosebumps", "Goosebumps is the series."]),
                           types=("II", "III"), limit=1)
    [q] = kb.questions
    first_title = kb.document(q.supporting_ids[0]).title
    expected = first_title.replace("Animorphs", "Goosebumps")
    for t in ("II", "III"):
        [doc_id] = q.injected[t]
        assert kb.document(doc_id).title == expected and "Animorphs" not in expected
