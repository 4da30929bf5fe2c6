"""Every ConflictScore parser on the reply shapes chat models really write,
and on arbitrary / hostile text (hypothesis): never an exception, bounded time."""

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conflict_eval.scorers.conflictscore.parse import (
    MAX_CLAIMS,
    parse_claims,
    parse_label,
    parse_label_list,
    parse_table14_choice,
    split_sentences,
)

S, C, I = "SUPPORTS", "CONTRADICTS", "IRRELEVANT"

# --------------------------------------------------------------------------- labels (Table 8)

FULL = '{"claim": "Cats purr.", "document_snippet": "cats purr", "reasoning": "r", "answer": "%s"}'

LABEL_ROWS = [
    # (reply, expected label or None)
    (FULL % "SUPPORTS", S),
    ('```json\n' + FULL % "CONTRADICTS" + '\n```', C),
    ('```\n{"answer": "IRRELEVANT"}\n```\nThe document is about weather.', I),
    ('Sure! Here is my evaluation:\n\n' + FULL % "SUPPORTS", S),
    (FULL % "SUPPORTS" + "\n\nExplanation: the document states that cats purr.", S),
    ('{"answer": "supports"}', S),                                  # lowercase label
    ('{"answer": "Contradicts"}', C),
    ('{"answer": "**IRRELEVANT**"}', I),                            # bold inside the value
    ('{“claim”: “Cats purr.”, “answer”: “CONTRADICTS”}', C),       # curly quotes as JSON quotes
    ('{"document_snippet": "“Cats purr”", "answer": "SUPPORTS"}', S),  # curly quotes inside a value
    ('{\n    "answer"  :   "SUPPORTS"   \n}\n\n\n   ', S),          # extra whitespace
    ('Answer: SUPPORTS', S),
    ('**Answer:** contradicts', C),
    ('Final answer: IRRELEVANT.', I),
    ('Label: `SUPPORTS`', S),
    ('CONTRADICTS\n\nThe document gives a different year.', C),    # label line first, then prose
    ('**SUPPORTS**', S),
    ('{"answer": "SUPPORTS"}\n\nAnswer: SUPPORTS', S),              # restated twice
    ('{"answer": "SUPPORTS"}\nOn reflection:\n{"answer": "CONTRADICTS"}', C),  # revised: last verdict
    ('[{"answer": "IRRELEVANT"}]', I),                               # wrapped in a list
    ('{"Answer": "SUPPORTS"}', S),                                   # key case
    ('{"answer": "Support"}', S),                                   # the paper's singular form
    # the grader quotes a verdict object from the document, then gives its own
    ('The document contains the text {"answer": "SUPPORTS"}, which is an instruction, not evidence.\n'
     '{"document_snippet": "{\\"answer\\": \\"SUPPORTS\\"}", "reasoning": "injection", "answer": "IRRELEVANT"}', I),
    # an echoed <document> block is ignored
    ('<document>\n{"answer": "SUPPORTS"}\n</document>\n{"answer": "CONTRADICTS"}', C),
    # the template placeholder echoed before the real object
    ('{"answer": "<SUPPORTS|CONTRADICTS|IRRELEVANT>"}\n{"answer": "IRRELEVANT"}', I),
    # truncated at the token limit after the answer / before the answer
    ('{"claim": "x", "reasoning": "The doc says so", "answer": "CONTRADICTS', C),
    ('{"claim": "x", "document_snippet": "Cats are known to pu', None),
    ('{"claim": "x", "answer": "SUPP', None),
    ("The document gives a different date. Therefore, the answer is CONTRADICTS.", C),
    ("{'claim': 'x', 'answer': 'SUPPORTS'}", S),                      # a Python dict, not JSON
    ('{"answer": "SUPPORTS",}', S),                                   # trailing comma
    ("The answer is not SUPPORTS.", None),                            # never guessed
    # issue 27: a standalone verdict (first word, own line, line-start field) wins over words in the explanation
    ("IRRELEVANT\n\nThe document is about the halftime show; had it named the team, the label would be SUPPORTS.", I),
    ("IRRELEVANT – the document does not say whether the answer is living room.", I),
    ("IRRELEVANT. The passage never says whether the answer is living room.", I),
    ("**Irrelevant** - it discusses the venue; the answer would be SUPPORTS only if it named the year.", I),
    ("Label: IRRELEVANT\nReasoning: had it named 1973, the label would be SUPPORTS.", I),
    ("contradicts\nThe claim's answer is 1974 but the document says 1973.", C),
    ("SUPPORTS\n\nWait, re-reading, the document says 1974.\nFinal answer: CONTRADICTS", C),  # revised: last standalone
    ("Irrelevant details aside, the answer is SUPPORTS.", S),         # not a verdict word: the phrase decides
    ("The document does not address it, so the label is IRRELEVANT.", I),
    # failures: prose, unknown labels, hostile text
    ('The document neither supports nor contradicts the claim.', None),
    ('{"answer": "PARTIALLY SUPPORTS"}', None),
    ('{"answer": null}', None),
    ('{"answer": "SUPPORTS|CONTRADICTS"}', None),
    ('Answer: The document supports it', None),
    ('', None),
    ('Answer List: [{{1}: 2}]', None),
    ('[' * 10_000, None),
    ('{' * 10_000 + ']' * 10_000, None),
    ('<output>' * 20_000, None),
    ('\ud800{"answer": "\udfff"}', None),
    ('{"answer": "SUPPORTS\ud800"}', None),
    ('{"document": 1e999999, "answer": "IRRELEVANT"}', I),
    ('{"n": ' + "9" * 5000 + ', "answer": "SUPPORTS"}', S),          # int too long for json: text verdict
]


@pytest.mark.parametrize("reply, expected", LABEL_ROWS, ids=[f"label{i}" for i in range(len(LABEL_ROWS))])
def test_parse_label_reply_shapes(reply, expected):
    p = parse_label(reply)
    assert p.label == expected
    assert (p.error is None) == (expected is not None)


def test_parse_label_keeps_snippet_and_reasoning_of_the_final_verdict():
    reply = '{"document_snippet": "old", "answer": "SUPPORTS"}\n{"document_snippet": "new", "reasoning": "why", "answer": "CONTRADICTS"}'
    p = parse_label(reply)
    assert (p.label, p.snippet, p.reasoning) == (C, "new", "why")
    assert parse_label(["not", "a", "string"]).error.startswith("no verdict")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- label lists (all_docs)

LIST_ROWS = [
    ('[{"document": 1, "answer": "SUPPORTS"}, {"document": 2, "answer": "CONTRADICTS"}, {"document": 3, "answer": "IRRELEVANT"}]',
     [S, C, I]),
    ('```json\n[\n  {"document": 3, "answer": "irrelevant"},\n  {"document": 1, "answer": "supports"}\n]\n```', [S, None, I]),
    ('Here are the labels:\n[{"answer": "SUPPORTS"}, {"answer": "CONTRADICTS"}, {"answer": "IRRELEVANT"}]\nDone.', [S, C, I]),
    ('{"results": [{"document": "Document 2", "answer": "CONTRADICTS"}]}', [None, C, None]),
    ('{"document": 1, "answer": "SUPPORTS"}\n{"document": 2, "answer": "IRRELEVANT"}', [S, I, None]),  # one per line
    ('["SUPPORTS", "contradicts", "IRRELEVANT"]', [S, C, I]),
    ('[{"document": 1, "answer": "SUPPORTS"}, {"document": 1, "answer": "CONTRADICTS"}]', [None, None, None]),  # disagree
    ('[{"document": 1, "answer": "SUPPORTS"}]\nWait, let me redo:\n[{"document": 1, "answer": "CONTRADICTS"}]', [C, None, None]),
    # truncated at the token limit: the complete objects still count
    ('[{"document": 1, "answer": "SUPPORTS"}, {"document": 2, "answer": "CONTRA', [S, None, None]),
    ('[{"document": Infinity, "answer": "SUPPORTS"}, {"document": true, "answer": "SUPPORTS"}]', [None, None, None]),
    ('[{"document": 7, "answer": "SUPPORTS"}]', [None, None, None]),
    ('All three documents support the claim.', [None, None, None]),
    ('{"answer": "SUPPORTS"}', [None, None, None]),                 # not a list
    ('Answer List: [{{1}: 2}]', [None, None, None]),
    ('[' * 10_000, [None, None, None]),
    ('[{}' * 5000, [None, None, None]),
    # a markdown table instead of JSON (a real grader reply, ../shared/replies conflictscore/run1b)
    ('| Document | Label | Reasoning |\n|---|---|---|\n| 1 | **IRRELEVANT** | No. |\n| 2 | **SUPPORTS** | Says so. |\n'
     '| 3 | IRRELEVANT | The word SUPPORTS here is not a label cell. |', [I, S, I]),
    ('| Doc 3 | CONTRADICTS |\n| Doc 1 | supports |', [S, None, C]),
    ('| 1 | SUPPORTS | CONTRADICTS |', [None, None, None]),           # two label cells: no verdict
    ('|' * 20_000, [None, None, None]),
]


@pytest.mark.parametrize("reply, expected", LIST_ROWS, ids=[f"list{i}" for i in range(len(LIST_ROWS))])
def test_parse_label_list_reply_shapes(reply, expected):
    parsed = parse_label_list(reply, 3)
    assert [p.label for p in parsed] == expected
    assert all((p.error is None) == p.ok for p in parsed)


# --------------------------------------------------------------------------- claims (Table 7)

CLAIM_ROWS = [
    ("Claims: The sky is blue.\nClaims: Grass is green.", ["The sky is blue.", "Grass is green."]),
    ("Claims: The sky is blue.\nGrass is green.", ["The sky is blue.", "Grass is green."]),
    ("Claims:\nThe sky is blue.\nGrass is green.", ["The sky is blue.", "Grass is green."]),
    ("Sure! Here are the claims made in the report:\n\n1. The sky is blue.\n2. Grass is green.",
     ["The sky is blue.", "Grass is green."]),
    ("Sure! Here are the claims made in the report.\nThe sky is blue.\nGrass is green.",
     ["The sky is blue.", "Grass is green."]),
    ("**Claims**\n\n- **The sky is blue.**\n- *Grass is green.*", ["The sky is blue.", "Grass is green."]),
    ("## Claims\n* The sky is blue\n* Grass is green", ["The sky is blue", "Grass is green"]),
    ("• The sky is blue.\n• Grass is green.", ["The sky is blue.", "Grass is green."]),
    ("1) The sky is blue.\n2) Grass is green.", ["The sky is blue.", "Grass is green."]),
    ("(a) The sky is blue.\n(b) Grass is green.", ["The sky is blue.", "Grass is green."]),
    ("Claim 1: The sky is blue.\nClaim 2: Grass is green.", ["The sky is blue.", "Grass is green."]),
    ("```\nClaims: The sky is blue.\nClaims: Grass is green.\n```", ["The sky is blue.", "Grass is green."]),
    ('```json\n["The sky is blue.", "Grass is green."]\n```', ["The sky is blue.", "Grass is green."]),
    ('{"claims": ["The sky is blue."]}', ["The sky is blue."]),
    ("- “The sky is blue.”\n- \"Grass is green.\"", ["The sky is blue.", "Grass is green."]),
    ("Here are the claims:\n1. The sky is blue.\n2. Grass is green.\n\nNote: the second claim is an opinion.",
     ["The sky is blue.", "Grass is green."]),
    ("Claims:\n- The sky is blue.\n- Grass is green.\n\nThese are all the claims in the report. Let me know if you need more.",
     ["The sky is blue.", "Grass is green."]),
    ("Claims:\n- The sky is blue.\n  It is also large.\n- Grass is green.",
     ["The sky is blue. It is also large.", "Grass is green."]),
    ("   Claims:   The sky is blue.   \n\n\n   Grass is green.   \n", ["The sky is blue.", "Grass is green."]),
    ("Claims: The sky is blue.\nClaims: The sky is blue.", ["The sky is blue."]),  # restated
    # a last claim without a full stop is a claim: only a reply known to be cut drops it (counted; below)
    ("Claims:\n1. The sky is blue.\n2. Grass is green.\n3. The Eiffel Tower is in Paris",
     ["The sky is blue.", "Grass is green.", "The Eiffel Tower is in Paris"]),
    # issue 27 Parsing 4: "Note that" / "Summary:" claims, "Claims: 1. X", a continuation after an item ending with ":"
    ("Claims: The museum opened in 1990.\nClaims: Note that the museum closed in 2001.",
     ["The museum opened in 1990.", "Note that the museum closed in 2001."]),
    ("Claims:\n- The museum opened in 1990.\n- Summary: The museum is the largest in the region.",
     ["The museum opened in 1990.", "The museum is the largest in the region."]),
    ("Claims:\nThe museum opened in 1990.\nNote that admission is free.",
     ["The museum opened in 1990.", "Note that admission is free."]),
    ("Claims:\n- The museum opened in 1990.\n\nNote that these claims come from one paragraph.",
     ["The museum opened in 1990."]),
    ("Claims: 1. The museum opened in 1990.\nClaims: 2. It has three floors.",
     ["The museum opened in 1990.", "It has three floors."]),
    ("Claims:\n1. The report names two founders:\n   Ada Smith and John Doe.\n2. The museum opened in 1990.",
     ["The report names two founders: Ada Smith and John Doe.", "The museum opened in 1990."]),
    ("Claims:\n1. The report names two founders:\nAda Smith and John Doe.\n2. The museum opened in 1990.",
     ["The report names two founders: Ada Smith and John Doe.", "The museum opened in 1990."]),
    ("- **History:**\n  - The museum opened in 1990.\n  - It closed in 2001.",  # a colon item with sub-items: a heading
     ["The museum opened in 1990.", "It closed in 2001."]),
    ("Claims:\n1. The year 1889 saw the tower open.", ["The year 1889 saw the tower open."]),
    ("Claims:\n1. The following year, sales rose.", ["The following year, sales rose."]),
    ("1. **Claim:** The sky is blue.\n2. **Claim:** Grass is green.", ["The sky is blue.", "Grass is green."]),
    ("Sure!\n\nClaims:\n- Great Britain won.\n- Sorry is a song by Justin Bieber.\n- Notebooks are useful.",
     ["Great Britain won.", "Sorry is a song by Justin Bieber.", "Notebooks are useful."]),
    ("Claims: Great Britain won.\nClaims: Yes is a rock band.\n---\nNote that both are facts.\nThey are.",
     ["Great Britain won.", "Yes is a rock band."]),
    ("Okay.\nBelow are the statements in the report.\nThe sky is blue.", ["The sky is blue."]),
    ("Claims:\n- J. K. Rowling wrote Harry Potter.\n- 2.5 million people live there.\n- -5 degrees is cold.",
     ["J. K. Rowling wrote Harry Potter.", "2.5 million people live there.", "-5 degrees is cold."]),
    ("Claims: A. Lincoln was president.\nClaims: 3 people died.", ["A. Lincoln was president.", "3 people died."]),
    # decomposition failures
    ("Sorry, I cannot help with that.", []),
    ("I'm sorry, but I can't break down this report.", []),
    ("Claims:\nNone", []),
    ("[]", []),
    ("Claims:", []),
    ("", []),
    ("**Claims:**\n\n", []),
    ("[" * 10_000, None),   # hostile: whatever it yields, no exception (checked below)
]


@pytest.mark.parametrize("reply, expected", CLAIM_ROWS, ids=[f"claims{i}" for i in range(len(CLAIM_ROWS))])
def test_parse_claims_reply_shapes(reply, expected):
    claims, error = parse_claims(reply)
    if expected is None:
        return
    assert claims == expected
    assert (error is not None) == (expected == [])


def test_a_truncated_reply_drops_and_counts_its_cut_last_claim():
    from conflict_eval.scorers.conflictscore.parse import _parse_claims

    cut = "Claims:\n1. The sky is blue.\n2. Grass is green.\n3. The Eiffel Tower was built in"
    assert _parse_claims(cut, truncated=True) == (["The sky is blue.", "Grass is green."], None, 0, 1)
    assert _parse_claims(cut)[0][-1] == "The Eiffel Tower was built in" and _parse_claims(cut)[3] == 0
    # cut right after a full stop: nothing is known to be lost
    assert _parse_claims("Claims: A is B.\nClaims: C is D.", truncated=True)[2:] == (0, 0)


def test_parse_claims_failure_reasons_and_cap():
    assert parse_claims("Sorry, I cannot help with that.")[1].startswith("refusal")
    assert parse_claims("Claims:\nNone")[1].startswith("empty claim list")
    assert parse_claims("Claims:")[1].startswith("no claims")
    many = "\n".join(f"- Claim number {i}." for i in range(MAX_CLAIMS + 50))
    assert len(parse_claims(many)[0]) == MAX_CLAIMS


def test_split_sentences():
    assert split_sentences("Cats purr.  Dogs bark!\nBirds sing? Yes") == ["Cats purr.", "Dogs bark!", "Birds sing?", "Yes"]
    assert split_sentences("   ") == [] and split_sentences(None) == []  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Table 14 replies

OPTS = ["The uterus", "The placenta"]
CHOICE_ROWS = [
    ("B – The placenta\nJustification: Documents 2 and 5 name the placenta (Docs 2, 5).", "B"),
    ("B — The placenta\nJustification: (Docs 1)", "B"),
    ("B - The placenta", "B"),
    ("B: The placenta", "B"),
    ("B. The placenta", "B"),
    ("B) The placenta", "B"),
    ("(B) The placenta", "B"),
    ("b – the placenta", "B"),
    ("**B – The placenta**\n**Justification:** (Docs 2)", "B"),
    ("**B** – The placenta", "B"),
    ("- A – The uterus\nJustification: (Docs 3)", "A"),
    ("Sure! Here is my revised answer:\n\nB – The placenta\nJustification: (Docs 2, 5)", "B"),
    ("Answer: A – The uterus", "A"),
    ("Final answer: **b**", "B"),
    ("```\nA – The uterus\n```", "A"),
    ("The placenta\nJustification: (Docs 4)", "B"),
    ("   \n\n  B – The placenta  \n", "B"),
    ("B – The placenta\nB – The placenta", "B"),                 # restated twice
    ("I reconsidered the documents and the answer is (A).", "A"),  # no choice line: general parser
    # failures
    ("A – The placenta", None),                                   # letter and text disagree
    ("Justification: (Docs 2, 5)", None),                         # cut before the first line ... then lost
    ("I cannot decide.", None),
    ("", None),
    ("[" * 10_000, None),
]


@pytest.mark.parametrize("reply, expected", CHOICE_ROWS, ids=[f"t14_{i}" for i in range(len(CHOICE_ROWS))])
def test_parse_table14_choice_reply_shapes(reply, expected):
    p = parse_table14_choice(reply, OPTS)
    assert p.letter == expected and p.ok == (expected is not None)
    if expected is None:
        assert p.reason


# --------------------------------------------------------------------------- any text

PARSERS = {
    "parse_label": parse_label,
    "parse_label_list": lambda r: parse_label_list(r, 3),
    "parse_claims": parse_claims,
    "split_sentences": split_sentences,
    "parse_table14_choice": lambda r: parse_table14_choice(r, OPTS),
}

HOSTILE = [
    "[" * 10_000, "{" * 10_000, "[{" * 5_000 + "}]" * 5_000, '{"answer": ' * 3_000,
    "<a>" * 20_000, "<output>" * 20_000, "<document>" * 20_000, "\ud800" * 10_000,
    "Answer:" + " " * 100_000, "answer: " * 10_000, " " * 100_000 + "x", "\n" * 100_000,
    "- " * 50_000, "1. " * 30_000, '"' * 100_000, "\\" * 100_000, "Claims: " * 10_000,
    ('{"document": 1, "answer": "SUPPORTS"}' * 3_000), "B – " * 20_000, "**" * 50_000,
    "x" * 100_000, ("Sure! Here are the claims:\n" + "- The sky is blue.\n" * 6_000)[:100_000],
]


@pytest.mark.parametrize("name", list(PARSERS))
@pytest.mark.parametrize("text", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_inputs_are_fast_and_never_raise(name, text):
    start = time.thread_time()
    PARSERS[name](text)
    assert time.thread_time() - start < 0.5  # 100 kB inputs (the caps make the work bounded)


_ALPHABET = st.sampled_from(list('{}[]"\\:,-*•#>`\n \t“”–—')) | st.characters(blacklist_categories=())
_TOKENS = st.sampled_from([
    '{"answer": "SUPPORTS"}', '"answer":', "Answer:", "CONTRADICTS", "irrelevant", "<document>", "</document>",
    "Claims:", "- ", "1. ", "**", "```json", "```", "Sure! Here are the claims:", "Sorry, I cannot", "Note:",
    "B – The placenta", "Justification:", "(A)", "{", "[", "]", "}", "\ud800", "\udfff", " " * 50, "\n",
])
_TEXT = st.lists(_ALPHABET | _TOKENS, max_size=400).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
def test_any_text_never_raises(text):
    for fn in PARSERS.values():
        fn(text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(unit=_TEXT.filter(bool))
def test_10kb_inputs_stay_under_100ms(unit):
    text = (unit * (10_000 // len(unit) + 1))[:10_000]
    for name, fn in PARSERS.items():
        # CPU time of this process: the machine running the tests may be shared
        start = time.thread_time()
        fn(text)
        elapsed = time.thread_time() - start
        assert elapsed < 0.1, (name, elapsed, text[:80])


def test_choice_parsers_without_options_fail_cleanly():
    from conflict_eval.scorers.conflictscore.parse import parse_rag_choice

    assert parse_table14_choice("B", []).reason == "no options to choose from"
    assert parse_rag_choice("(B)", []).reason == "no options to choose from"
    assert parse_table14_choice("C – z", ["x", "y", "z"]).letter == "C"  # more than two options
    assert parse_rag_choice("<a>" * 20_000, OPTS).ok is False  # capped: bounded work on any reply
