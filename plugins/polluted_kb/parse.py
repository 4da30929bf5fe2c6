"""Pure parsing of model replies for building the polluted knowledge base.

Every parser returns a :class:`~conflict_eval.answers.yes_no.Parsed` with ``ok``
and, on failure, a ``reason``; a failure is recorded and counted by the caller,
never mapped to a value. The yes/no reader the KB pre-screening and the ACC metric
share is :func:`conflict_eval.answers.yes_no.parse_yes_no`.
"""

from __future__ import annotations

import re

from conflict_eval.answers.span import trim_span
from conflict_eval.answers.text_metrics import normalize_squad
from conflict_eval.answers.yes_no import Parsed

_QUOTED_RE = re.compile(
    r"\"([^\"\n]{1,200})\""                   # "X"
    r"|“([^”\n]{1,200})”"                     # “X”
    r"|‘([^’\n]{1,200})’"                     # ‘X’
    r"|(?<![\w'])'([^'\n]{1,200})'(?![\w'])"  # 'X', never the apostrophe of "Here's"
)
_EMPHASIS_RE = re.compile(r"\*\*([^*\n]{1,200})\*\*|__([^_\n]{1,200})__|`([^`\n]{1,200})`")
_FENCE_RE = re.compile(r"^[ \t]*```[^\n]*$", re.MULTILINE)
_PREAMBLE_WORDS = (
    r"sure|certainly|of course|absolutely|okay|ok|alright|great|no problem|here you go"
    r"|here(?:'s|’s| is| are)|how about|what about|maybe|perhaps|try|consider"
    r"|i(?: would| could| might|'d|’d)? (?:suggest|say|propose|go with|recommend|use)"
    r"|(?:an?|one|the|my|another) (?:\w+ ){0,3}?(?:alternative|option|suggestion|phrase|word|answer|example|choice|possibility|one)"
    r"|alternative|suggestion|answer|phrase|word|option|target|replacement"
)
#: The opening of a chatty reply that is not the phrase itself: "Sure, here is
#: one:", "Certainly! Here's an alternative:", "How about X?", "Alternative: X".
_PREAMBLE_RE = re.compile(rf"^(?:{_PREAMBLE_WORDS})\b", re.IGNORECASE)
_ASK_RE = re.compile(r"^(?:how about|what about|maybe|perhaps|try|consider"
                     r"|i(?: would| could| might|'d|’d)? (?:suggest|say|propose|go with|recommend|use))\s+(.+)$",
                     re.IGNORECASE)
_CLAUSE_BREAK_RE = re.compile(r"(?<=[.!?])\s+|,\s+(?=(?:here|how|what|maybe|perhaps|i|try)\b)", re.IGNORECASE)
_YEAR_RE = re.compile(r"^(?:1\d{3}|20\d{2})$")
_NUMBER_RE = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?$")
_TARGET_MAX_WORDS = 10


def _strip_phrase(text: str) -> str:
    text = text.strip().strip("*_`#>").strip()
    text = re.sub(r"^(?:[-•]|\d+[.)])\s+", "", text)
    text = text.strip().strip("*_`").strip().strip("\"'“”‘’").strip()
    return text.rstrip(".!;:,?").strip().strip("*_`\"'“”‘’").strip()


def _line_phrase(line: str) -> str | None:
    """The phrase one line offers, without its preamble: "Here's a different
    phrase: Head of State" -> "Head of State", "Sure, how about X?" -> "X";
    None for a line that is only a preamble ("Certainly! Here's an alternative:",
    "Sure!")."""
    clauses = [c for c in _CLAUSE_BREAK_RE.split(line.strip()) if c.strip()]
    while clauses:
        clause = clauses[0].strip()
        head, colon, tail = clause.partition(":")
        if colon and _PREAMBLE_RE.match(_strip_phrase(head) + " ") or (colon and not head.strip()):
            if tail.strip():
                return _strip_phrase(" ".join([tail, *clauses[1:]]))
            clauses = clauses[1:]
            continue
        ask = _ASK_RE.match(_strip_phrase(clause))
        if ask:
            return _strip_phrase(ask.group(1))
        if len(clauses) > 1 and _PREAMBLE_RE.match(_strip_phrase(clause)):
            clauses = clauses[1:]  # "Sure!" / "Certainly." before the phrase
            continue
        stripped = _strip_phrase(" ".join(clauses))
        return stripped if stripped and not re.fullmatch(rf"(?:{_PREAMBLE_WORDS})\W*", stripped, re.I) else None
    return None


def type_mismatch(target: str, answers: list[str]) -> str | None:
    """Why ``target`` is not an answer of the same kind as the gold, or None.

    A year for a year, a number for a number, digits (a date) for digits,
    yes/no for yes/no; and never a preamble, markup or a sentence ("Sure, here
    is one: **2004" is no answer; ": " only where a gold answer has a colon). Ours: the paper asks for "a word or phrase
    different from" the answer (Figure 3) and shows no check.

    >>> type_mismatch("2004", ["1999"]) is None, type_mismatch("the nineties", ["1999"])
    (True, "not a year like the gold answer '1999'")
    """
    golds = [a.strip() for a in answers if isinstance(a, str) and a.strip()]
    if _PREAMBLE_RE.match(target) and not any(_PREAMBLE_RE.match(a) for a in golds):
        return "a preamble, not a word or phrase"
    if re.search(r"[*`#?!]", target) or (": " in target and not any(":" in a for a in golds)):
        return "markup or a sentence, not a word or phrase"
    for a in golds:
        if _YEAR_RE.match(a) and not _YEAR_RE.match(target):
            return f"not a year like the gold answer {a!r}"
        if _NUMBER_RE.match(a) and not _NUMBER_RE.match(target):
            return f"not a number like the gold answer {a!r}"
        if a.lower() in ("yes", "no") and target.lower() not in ("yes", "no"):
            return f"not yes/no like the gold answer {a!r}"
        if re.search(r"\d", a) and not re.search(r"\d", target):
            return f"no digits, unlike the gold answer {a!r}"
    return None


_TARGET_MAX_CHARS = 10_000
"""Longer replies are cut to this many characters before parsing (a target is a
word or phrase; this bounds the work on a runaway reply)."""


def _overlap(target: str, gold: str) -> str | None:
    """Why ``target`` is too close to ``gold`` (both SQuAD-normalised), or None.
    Containment is of whole words: "pain" is not part of "spain".

    >>> _overlap("greenwich", "greenwich village new york city"), _overlap("pain", "spain")
    ('part of', None)
    """
    if target == gold:
        return "same as"
    if f" {target} " in f" {gold} ":
        return "part of"
    if f" {gold} " in f" {target} ":
        return "contains"
    return None


def parse_target(reply: str, answers: list[str]) -> Parsed:
    """The misinformation target (``<subcontent>``) from the model's reply.

    Rules (ours; the paper only gives the prompt), read the way the other
    parsers read replies: code fences are dropped, then the candidate is

    1. the first quoted phrase (``"X"``, ``“X”``, ``'X'``, ``‘X’``) not too
       close to a gold answer, else
    2. the first emphasised phrase (``**X**``, ``__X__``, `` `X` ``) not too
       close to a gold answer, else
    3. the first line that is not only a preamble, with a leading preamble
       removed ("Here's a different phrase: X", "How about X?") and list
       markers, markup, quotes and final punctuation stripped.

    Each candidate is read by the shared span reader
    (:func:`conflict_eval.answers.span.trim_span`): a trailing explanation is
    removed ("Harborview (a similar coastal place name)", "X — …", "X - …",
    "X, which …", "X, a fictional …" give "X"), and a candidate that is a
    sentence ("Harborview is a coastal town"), offers alternatives ("X or Y")
    or has nothing left is a failure with its reason: never injected.

    The result must be at most 10 words, of the gold's kind
    (:func:`type_mismatch`: a year for a year, no preamble, no markup) and,
    after SQuAD normalisation (lower case, no punctuation or articles, white
    space collapsed), must neither equal a gold answer, nor be a substring of
    one at word boundaries ("Greenwich" for "Greenwich Village, New York City"
    would leave the answer standing), nor contain one ("Paris, Texas" for
    "Paris" would keep the gold answer in every polluted text); otherwise the
    reply is a failure with the reason and nothing is injected. Total: never
    raises; input beyond 10,000 characters is ignored.

    >>> parse_target('Sure! "Harry Potter"', ["Animorphs"]).value
    'Harry Potter'
    >>> parse_target("Goosebumps.", ["Animorphs"]).value
    'Goosebumps'
    >>> parse_target("animorphs", ["Animorphs"]).reason
    "same as the gold answer 'Animorphs'"
    >>> parse_target("Greenwich", ["Greenwich Village, New York City"]).reason
    "part of the gold answer 'Greenwich Village, New York City'"
    >>> parse_target("Sure, here is one: **2004**", ["1999"]).value
    '2004'
    >>> parse_target("Here's a different phrase: Head of State", ["Ambassador"]).value
    'Head of State'
    >>> parse_target("Harborview (a similar coastal place name)", ["Ocean City"]).value
    'Harborview'
    >>> parse_target("Harborview is a similar coastal place name.", ["Ocean City"]).reason
    'a sentence, not a span'
    """
    if not isinstance(reply, str) or not reply.strip():
        return Parsed.fail("empty reply")
    reply = _FENCE_RE.sub("", reply[:_TARGET_MAX_CHARS])
    gold = {}
    for a in answers if isinstance(answers, (list, tuple)) else []:
        if isinstance(a, str) and normalize_squad(a):
            gold.setdefault(normalize_squad(a), a)

    def too_close(text: str) -> str | None:
        norm = normalize_squad(text)
        for g, original in gold.items():
            how = _overlap(norm, g)
            if how:
                return f"{how} the gold answer {original!r}"
        return None

    candidate = None
    for pattern in (_QUOTED_RE, _EMPHASIS_RE):
        for m in pattern.finditer(reply):
            text = trim_span(_strip_phrase(next(g for g in m.groups() if g is not None)),
                             _TARGET_MAX_WORDS).value
            if text and normalize_squad(text) and too_close(text) is None:
                candidate = text
                break
        if candidate is not None:
            break
    if candidate is None:
        for line in reply.splitlines():
            if line.strip() and (phrase := _line_phrase(line)) is not None:
                span = trim_span(phrase, _TARGET_MAX_WORDS)
                if not span.ok:
                    return Parsed.fail(span.reason or "no word or phrase found")
                candidate = span.value
                break
    if not candidate or not normalize_squad(candidate):
        return Parsed.fail("no word or phrase found")
    reason = too_close(candidate)
    if reason:
        return Parsed.fail(reason)
    golds = [a for a in (answers if isinstance(answers, (list, tuple)) else []) if isinstance(a, str)]
    if (mismatch := type_mismatch(candidate, golds)) is not None:
        return Parsed.fail(mismatch)
    return Parsed(candidate, True)


TARGET_REJECTIONS = ("same as", "part of", "contains")
"""Reason prefixes of targets rejected for being too close to the gold answer."""


def limit_words(text: str, max_words: int) -> tuple[str, int]:
    """``text`` with white space collapsed, cut to ``max_words`` words; also
    returns the original word count."""
    words = text.split()
    return " ".join(words[:max_words]), len(words)
