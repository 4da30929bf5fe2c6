"""Metamorphic rewrites of labelled replies (issue 42, Deliver 5).

A *meaning-preserving* rewrite turns a labelled reply into another reply a
sincere reader reads the same way (markdown, JSON, a table, a hedge naming
the one option, an explanation that names other options, a self-correction
ending on the meant answer, ...). A *meaning-changing* rewrite turns it into
a reply that does not give the original answer (a hedge across two options,
"not B", a refusal, an answer to another option). ``benchmarks/reply_reading.py``
applies both families to every labelled row through each reader chain, and
``tests/test_reply_rewrites.py`` holds the chains to the issue's bar: under
the preserving rewrites at least 98% read as meant and no misread; under the
changing ones, never the original answer.

Two kinds of rewrite:

* :data:`TEXT_PRESERVING` change the reply's text around its answer (white
  space, line endings, a closing remark, a preamble line) and apply to every
  row of every chain;
* :data:`CHOICE_PRESERVING` / :data:`CHOICE_CHANGING` write the meant letter
  (and its option text) in one voice; the chain's ``compose`` (declared with
  it, ``conflict_eval.answers.readers.Chain``) then puts that answer where
  the chain's method reads it (after ``</t>`` for CoT/GKP, after the
  follow-ups for Self-Ask, as the whole reply elsewhere). They apply to every
  row whose meaning is a choice.

:data:`GENERIC_CHANGING` (a refusal, an empty reply) apply to every row of
every chain. :data:`BY_KIND` holds rewrites of one prompt kind's own format
(AtomR's planner trees and "So the answer is: ... Answer List: [...]"
answers), applied to the rows of that kind.

Each rewrite is a function of ``(letter, option text, other letter, other
option text)`` (choice rewrites) or of the reply text (text rewrites); the
other option is the next one (wrapping), so every row with at least two
options has one.
"""

from __future__ import annotations

import json
from collections.abc import Callable

Choice = Callable[[str, str, str, str], str]
"""(letter, option text, other letter, other option text) -> reply"""

TEXT_PRESERVING: dict[str, Callable[[str], str]] = {
    "trailing 'Hope this helps!'": lambda r: r.rstrip() + "\n\nHope this helps!",
    "trailing blank lines": lambda r: r + "\n\n\n",
    "leading blank lines": lambda r: "\n\n" + r,
    "CRLF line endings": lambda r: r.replace("\r\n", "\n").replace("\n", "\r\n"),
    "trailing spaces on lines": lambda r: "\n".join(line + "  " for line in r.split("\n")),
}

WHITE_SPACE = ("trailing blank lines", "leading blank lines", "CRLF line endings", "trailing spaces on lines")
"""The text rewrites that also apply to an answer slot (a bare answer, not a whole reply)."""

CHOICE_PRESERVING: dict[str, Choice] = {
    "bare letter": lambda x, t, y, u: x,
    "bold letter": lambda x, t, y, u: f"**{x}**",
    "markdown heading": lambda x, t, y, u: f"## Answer\n\n**{x}**",
    "heading 'Answer: X'": lambda x, t, y, u: f"# Answer: {x}",
    "bold 'Answer:' then letter and text": lambda x, t, y, u: f"**Answer:** {x} — {t}",
    "'Answer — X' in bold": lambda x, t, y, u: f"**Answer — {x}**",
    "JSON answer field": lambda x, t, y, u: json.dumps({"answer": x, "reason": "the evidence agrees"}),
    "fenced JSON": lambda x, t, y, u: f"```json\n{json.dumps({'answer': x})}\n```",
    "table with a final row": lambda x, t, y, u: f"| step | choice |\n| --- | --- |\n| evidence | {y} |\n| final | {x} |",
    "hedge 'I think it's X.'": lambda x, t, y, u: f"I think it's {x}.",
    "hedge 'Probably X.'": lambda x, t, y, u: f"Probably {x}.",
    "hedge 'My best guess is X.'": lambda x, t, y, u: f"My best guess is {x}.",
    "boxed": lambda x, t, y, u: f"$$\\boxed{{{x}}}$$",
    "em dash explanation": lambda x, t, y, u: f"{x} — {t}",
    "lower case": lambda x, t, y, u: f"answer: {x.lower()}",
    "letter then explanation naming another option in brackets":
        lambda x, t, y, u: f"{x} — the claim for ({y}) is not convincing here.",
    "'(X)' then explanation naming another option":
        lambda x, t, y, u: f"({x}) — nothing in the documents supports ({y}).",
    "evidence for another option quoted first":
        lambda x, t, y, u: f"The passage argues for ({y}), but that contradicts well-known facts.\n\nAnswer: {x}",
    "self-correction ending on the meant answer":
        lambda x, t, y, u: f"Answer: {y}\n\nActually, wait — that is wrong. On second thought the answer is {x}.",
    "'Final answer:' after working":
        lambda x, t, y, u: f"Option {y} repeats the document; option {x} fits what is known.\n\nFinal answer: {x}",
    "answer tag": lambda x, t, y, u: f"<a>{x}</a>",
    "answer tag after a preamble": lambda x, t, y, u: f"The final answer is: <a>{x}</a>",
    "'The answer is X because'": lambda x, t, y, u: f"The answer is {x} because the other option contradicts the facts.",
    "'X is correct'": lambda x, t, y, u: f"{x} is correct.",
    "bold answer, letter and option text": lambda x, t, y, u: f"**Answer:** {x}. {t}",
}

CHOICE_CHANGING: dict[str, Choice] = {
    "hedge across two options": lambda x, t, y, u: f"{x} or {y}",
    "answer names two letters": lambda x, t, y, u: f"Answer: {x} or {y}",
    "two tags, no revision": lambda x, t, y, u: f"<a>{x}</a> and <a>{y}</a>",
    "'not X'": lambda x, t, y, u: f"Not {x}.",
    "'The answer is not X.'": lambda x, t, y, u: f"The answer is not {x}.",
    "refusal": lambda x, t, y, u: "I cannot determine the answer from the information provided.",
    "'None of the options'": lambda x, t, y, u: "None of the options is supported by the documents.",
    "answer to another option": lambda x, t, y, u: f"Answer: {y}",
    "revised away from the answer":
        lambda x, t, y, u: f"Answer: {x}\n\nActually, wait — on second thought the answer is {y}.",
    "'Either X or Y, I can't decide'": lambda x, t, y, u: f"Either {x} or {y}; I can't decide between them.",
    "'I don't know'": lambda x, t, y, u: "I don't know.",
    "final answer another option": lambda x, t, y, u: f"I think it's {x}.\n\nFinal answer: {y}",
}

GENERIC_CHANGING: dict[str, Callable[[str], str]] = {
    "replaced by a refusal": lambda r: "I cannot determine the answer from the information provided.",
    "replaced by an empty reply": lambda r: "",
}

# AtomR (issue 42, Deliver 5: "AtomR" among the chains): its replies are neither letters nor free text, so its
# rewrites are written for its own formats; :data:`BY_KIND` applies them to the rows of their kind.

_ANSWER_LINE = "So the answer is:"
_LIST = "Answer List:"
_PROMPT_EXAMPLE = ('As in the example "So the answer is: (1) Paraphrase Answer: Justin Foley has 2 tapes in the '
                   'television series that is a notable work of Christian Lee Navarro, 13 Reasons Why; (2) Answer '
                   'List: [\"Justin Foley\"]", here:\n\n')


_OTHER_LINE = f'{_ANSWER_LINE} (1) Paraphrase Answer: Nobody In Particular; (2) {_LIST} ["Nobody In Particular"]'


def _answer_list(reply: str) -> tuple[int, int]:
    """Where the final Answer List's ``[...]`` is (start, end past ``]``)."""
    start = reply.index("[", reply.rindex(_LIST))
    return start, reply.index("]", start) + 1


def _with_list(reply: str, items_text: str) -> str:
    start, end = _answer_list(reply)
    return reply[:start] + items_text + reply[end:]


def _unfenced(reply: str) -> str:
    text = reply.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1].rsplit("```", 1)[0]
    return text.strip()


ATOMR_ANSWER_PRESERVING: dict[str, Callable[[str], str]] = {
    "bold labels": lambda r: r.replace("Paraphrase Answer:", "**Paraphrase Answer:**").replace(_LIST, f"**{_LIST}**"),
    "answer line on its own lines": lambda r: r.replace(_ANSWER_LINE, f"\n\n{_ANSWER_LINE}\n").replace(
        "; (2)", ";\n(2)"),
    "heading before the answer": lambda r: r.replace(_ANSWER_LINE, f"\n\n## Final answer\n\n{_ANSWER_LINE}"),
    "single-quoted list": lambda r: _with_list(r, repr(json.loads(r[slice(*_answer_list(r))]))),
    "list one item a line": lambda r: _with_list(r, json.dumps(json.loads(r[slice(*_answer_list(r))]), indent=2,
                                                                ensure_ascii=False)),
    "the prompt's example answer quoted first": lambda r: _PROMPT_EXAMPLE + r,
    "the same list restated": lambda r: r.rstrip() + f"\n\nTo restate, the {_LIST} {r[slice(*_answer_list(r))]}",
    "a self-correction ending on the meant answer line": lambda r: r[:r.rindex(_ANSWER_LINE)] + _OTHER_LINE
    + "\n\nActually, on second thought, that is wrong: I misread the paragraph.\n\n" + r[r.rindex(_ANSWER_LINE):],
}

ATOMR_ANSWER_CHANGING: dict[str, Callable[[str], str]] = {
    "another entity": lambda r: _with_list(r, '["Nobody In Particular"]'),
    "'Unknown'": lambda r: r[:r.rindex(_ANSWER_LINE)] + f"{_ANSWER_LINE} (1) Paraphrase Answer: Unknown; "
                           f"(2) {_LIST} []",
    "a hedge across two answers": lambda r: _with_list(r, '["either of them or Nobody In Particular"]'),
    "a revision away to another answer line": lambda r: r.rstrip() + "\n\nWait, on second thought, I revise that.\n\n"
    + _OTHER_LINE,
}

ATOMR_PLAN_PRESERVING: dict[str, Callable[[str], str]] = {
    "tree in a json fence": lambda r: f"```json\n{_unfenced(r)}\n```",
    "tree without its fence": _unfenced,
    "a preamble line": lambda r: "Here is the decomposition tree:\n\n" + r,
}

ATOMR_PLAN_CHANGING: dict[str, Callable[[str], str]] = {
    "the authors' failure mark": lambda r: "TREE_PARSING_ERROR",
    "another operator": lambda r: r.replace("Relate(", "Filter(", 1),
}

BY_KIND: dict[str, dict[str, dict[str, Callable[[str], str]]]] = {
    "x.atomr_answer": {"preserving": ATOMR_ANSWER_PRESERVING, "changing": ATOMR_ANSWER_CHANGING},
    "x.atomr_plan": {"preserving": ATOMR_PLAN_PRESERVING, "changing": ATOMR_PLAN_CHANGING},
}
"""Rewrites of one prompt kind's replies, by family (applied with the text rewrites)."""

def other(letter: str, letters: str) -> str:
    """The option after ``letter`` (wrapping)."""
    i = letters.index(letter)
    return letters[(i + 1) % len(letters)]
