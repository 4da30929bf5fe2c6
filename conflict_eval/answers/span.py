"""Reading a short span (a misinformation target, an entity, a year) out of a reply.

A prompt that asks for "a word or phrase" gets the phrase *and* often an
explanation after it: ``Harborview (a similar coastal place name)``,
``Harborview — a coastal town``, ``Harborview, which sounds similar``,
``Harborview, a fictional place``. The span is what comes before the
explanation. :func:`trim_span` isolates it from one candidate phrase,
:func:`read_span` from a whole reply; both return a :class:`Span`, whose
``reason`` says why no span could be isolated (a counted failure, never a
value).

Rules, in order (ours; the papers give only the prompts):

1. Typographic quotes and apostrophes are folded to ASCII
   (:func:`~conflict_eval.answers.text_metrics.fold_quotes`).
2. :func:`read_span` only: code fences are dropped; the span is read from the
   first non-empty line, or from the line after a bare label line
   (``Answer:`` alone on its line).
3. Markdown (``**``, ``__``, backticks, ``#`` headings, ``>`` quotes), a list
   marker (``-``, ``1.``) and a label (``Answer:``, ``Final answer:``,
   ``Target:``, ``Misinformation target:``, up to three words ending in
   answer/target/phrase/word/entity/alternative/suggestion/option/year/name)
   are removed from the start.
4. A phrase wholly in quotes (``"Harborview" (a place)``) is the quoted text.
5. The explanation is cut at the first of: `` (`` or `` [`` (a
   parenthesis), a spaced dash (`` - ``, `` – ``, `` — ``) or an em dash
   (``—``; an unspaced hyphen or en dash stays: ``Jean-Paul``, ``1990–1995``),
   a comma or semicolon followed by a word in lower case (``, which``,
   ``, a fictional``; ``Greenwich Village, New York City`` and
   ``January 22, 1965`` stay whole; a colon is not cut, since
   ``What a question: honestly`` is no span either), the words ``because``, ``since``,
   ``which``, ``i.e.``, ``e.g.``, and the end of a first sentence (``. ``,
   ``! ``, ``? `` before a capital, not after an initial or a short
   abbreviation: ``St. Louis``, ``K. A. Applegate`` stay whole).
6. Final punctuation, markup and quotes are stripped.

The span is a failure when nothing is left, when it is a chat preamble
(``Sure! How about Harborview`` gives ``Sure``: a preamble, not a span; a
caller that expects preambles strips them first, as
``polluted_kb.parse_target`` does), when it offers alternatives
(`` or `` between words: ``Harborview or Seaview``), when it reads as a
sentence (``is``/``are``/``was``/``were`` after its first word:
``Harborview is a coastal town``) or when it is longer than ``max_words``
(10 by default).

Total and linear: any string gives a :class:`Span`; only the first
:data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters are read, and every
search is a single scan with bounded or single-character patterns.

>>> trim_span("Harborview (a similar coastal place name)").value
'Harborview'
>>> trim_span("**Harborview** — a coastal town").value
'Harborview'
>>> trim_span("Harborview, which sounds like Harbor View").value
'Harborview'
>>> trim_span("Greenwich Village, New York City").value
'Greenwich Village, New York City'
>>> trim_span("Harborview is a coastal town").reason
'a sentence, not a span'
>>> read_span("Answer: 1998 - the year the album came out.").value
'1998'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conflict_eval.answers.refusal import find_refusal
from conflict_eval.answers.reply import REVISION_RE, clip
from conflict_eval.answers.text_metrics import fold_quotes

__all__ = ["MAX_SPAN_WORDS", "Span", "read_span", "trim_span"]

MAX_SPAN_WORDS = 10
"""A span longer than this many words is not a word or phrase."""


@dataclass(frozen=True)
class Span:
    value: str | None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None


_LABEL_WORDS = ("answer|target|phrase|word|entity|alternative|suggestion|option|year|name|subcontent"
                "|replacement|output|result")
#: A leading label: "Answer:", "Final answer -", "Misinformation target:" (at most three words).
_LABEL_RE = re.compile(rf"(?:[A-Za-z]{{1,20}}[ \t]){{0,2}}(?:{_LABEL_WORDS})s?(?:[ \t]?[:=]|[ \t][-–—](?=[ \t]))[ \t]*",
                       re.IGNORECASE)
_MARKER_RE = re.compile(r"(?:[-*•+]|\d{1,3}[.)])[ \t]+")
#: A leading "The answer is" / "So the final answer would be" (at most one connective, one article and
#: one adjective before the label word): the span follows it.
_ANSWER_IS_RE = re.compile(rf"(?:(?:so|thus|therefore|hence),?[ \t])?(?:(?:the|my|a)[ \t])?(?:[a-z]{{1,12}}[ \t])?"
                           rf"(?:{_LABEL_WORDS})[ \t](?:is|would[ \t]be|should[ \t]be)[ \t]*:?[ \t]+"
                           # "The answer is unclear / not ..." states no answer: left as a sentence (a failure)
                           r"(?!(?:unclear|unknown|uncertain|ambiguous|disputed|contested|undetermined|none|not|no)\b)",
                           re.IGNORECASE)
_MARKUP = "*_`#> \t"
_QUOTES = "\"'"
_FENCE_RE = re.compile(r"^[ \t]*```[^\n]*$", re.MULTILINE)
#: Where an explanation starts (rule 5). Each alternative is a fixed or
#: bounded pattern: one left-to-right scan.
_CUT_RE = re.compile(
    r"(?:^| )[(\[]"
    r"| [-–—](?= |$)"
    r"|—"
    r"|[,;] ?(?=[a-z])"
    r"| (?:because|since|which|i\.e\.|e\.g\.)\b"
    r"|[.!?](?= [A-Z\"'(])"
)
_ABBREVIATION_RE = re.compile(r"(?:^|[ .])(?:[A-Za-z]|St|Mt|Ft|Dr|Mr|Mrs|Ms|Jr|Sr|Inc|Ltd|Co|vs|No)$")
_ALTERNATIVES_RE = re.compile(r"\S \bor\b \S", re.IGNORECASE)
_PREAMBLES = frozenset("sure certainly okay ok alright absolutely great hello hi hmm well".split()) | {
    "of course", "no problem", "here you go"}
_SENTENCE_RE = re.compile(r"\S \b(?:is|are|was|were)\b(?: |$)", re.IGNORECASE)


def _strip_edges(text: str) -> str:
    """Markup and quotes off both ends, final punctuation off the end."""
    return text.lstrip(_MARKUP + _QUOTES).rstrip(_MARKUP + _QUOTES + ".,;:!?")


def _strip_lead(text: str) -> str:
    """Markdown, a list marker and a label off the start (rule 3)."""
    for _ in range(4):  # bounded: "**1. Answer: X**" needs three rounds
        prev = text
        text = text.lstrip(_MARKUP)
        if (m := _MARKER_RE.match(text)) is not None:
            text = text[m.end():]
        if (m := _LABEL_RE.match(text)) is not None and text[m.end():].strip(_MARKUP):
            text = text[m.end():]
        if (m := _ANSWER_IS_RE.match(text)) is not None and text[m.end():].strip(_MARKUP):
            text = text[m.end():]
        if text == prev:
            break
    return text


def _wholly_quoted(text: str) -> str | None:
    """The quoted text when ``text`` opens with a quote that closes before the
    explanation: ``"Harborview" (a place)`` -> ``Harborview``."""
    if not text or text[0] not in _QUOTES:
        return None
    close = text.find(text[0], 1)
    if close <= 1:
        return None
    rest = text[close + 1:].lstrip(_MARKUP + ".,;:!?")
    if rest and _CUT_RE.match(" " + rest) is None and _CUT_RE.match(rest) is None:
        return None  # more phrase after the quote: "'Stone' Gap" is not a quoted span
    return text[1:close]


def _cut(text: str) -> str:
    """``text`` up to where its explanation starts (rule 5)."""
    pos = 0
    while (m := _CUT_RE.search(text, pos)) is not None:
        if m.group()[0] in ".!?" and _ABBREVIATION_RE.search(text[max(0, m.start() - 5):m.start()]):
            pos = m.end()
            continue  # "St. Louis", "K. A. Applegate": not a sentence end
        return text[:m.start()]
    return text


def trim_span(text: str, max_words: int = MAX_SPAN_WORDS) -> Span:
    """The span of one candidate phrase, its explanation removed (rules 1, 3-6).

    >>> trim_span("Harborview, a fictional coastal town").value
    'Harborview'
    >>> trim_span('"Harborview" (a similar coastal place name)').value
    'Harborview'
    >>> trim_span("January 22, 1965").value
    'January 22, 1965'
    >>> trim_span("St. Louis").value
    'St. Louis'
    >>> trim_span("Harborview or Seaview").reason
    'several alternatives, not one span'
    >>> trim_span("(a similar coastal place name)").reason
    'no span left once the explanation is removed'
    """
    if not isinstance(text, str):
        return Span(None, "not a string")
    line = fold_quotes(clip(text, "head")).strip()
    line = _strip_lead(" ".join(line.split()))
    quoted = _wholly_quoted(line)
    if quoted is not None:
        line = quoted
    span = _strip_edges(_cut(line))
    if quoted is None:
        span = _strip_edges(_strip_lead(span))
    if not span or not any(c.isalnum() for c in span):
        return Span(None, "no span left once the explanation is removed")
    if span.lower() in _PREAMBLES:
        return Span(None, "a preamble, not a span")
    if _ALTERNATIVES_RE.search(span):
        return Span(None, "several alternatives, not one span")
    if _SENTENCE_RE.search(span):
        return Span(None, "a sentence, not a span")
    n = len(span.split())
    if n > max_words:
        return Span(None, f"not a word or phrase ({n} words)")
    return Span(span)


def read_span(reply: str, max_words: int = MAX_SPAN_WORDS) -> Span:
    """The span a whole reply gives: its first non-empty line (after code
    fences, and after a label alone on its line), read by :func:`trim_span`.

    >>> read_span("```\\nHarborview\\n```").value
    'Harborview'
    >>> read_span("**Answer:**\\nHarborview (a coastal town)").value
    'Harborview'
    >>> read_span("").reason
    'empty reply'
    """
    if not isinstance(reply, str) or not reply.strip():
        return Span(None, "empty reply")
    text = _FENCE_RE.sub("", clip(reply, "head"))
    lines = text.splitlines()
    for i, line in enumerate(lines):
        bare = _strip_edges(line)
        if not bare:
            continue
        if _LABEL_RE.fullmatch(bare + ":") or _LABEL_RE.fullmatch(bare):
            continue  # "Answer:" alone on its line: the span follows
        later = _later_marker("\n".join(lines[i:]), len(line), max_words)
        return later if later is not None else trim_span(line, max_words)
    return Span(None, "no span found")


#: A later line that states the answer again ("Final answer: Rockport").
_ANSWER_LINE_RE = re.compile(r"^[ \t*_#>-]{0,6}(?:final[ \t]{1,3})?answer[ \t*_]{0,3}[:\-–—][ \t*_]{0,3}(?=\S)",
                             re.IGNORECASE | re.MULTILINE)


def _later_marker(text: str, first_end: int, max_words: int) -> Span | None:
    """The span of the last explicit marker after the first line (the reader
    contract: the last explicit final marker wins): a later ``Answer:`` /
    ``Final answer:`` line, or a span standing right after a revision
    ("Harborview. Actually, Rockport."). Only markers that give a readable
    span count; ``None`` when there is none."""
    found: list[tuple[int, Span]] = []
    for m in _ANSWER_LINE_RE.finditer(text, first_end):
        end = text.find("\n", m.end())
        span = trim_span(text[m.end():end if end >= 0 else len(text)], max_words)
        if span.value is not None:
            found.append((m.start(), span))
    for m in REVISION_RE.finditer(text):
        end = text.find("\n", m.end())
        rest = text[m.end():end if end >= 0 else len(text)].lstrip(" \t,:;.!—–-")
        if m.group(0)[:2].lower() == "no" or not rest:
            continue  # "No, the other towns ..." opens an explanation, not a new span
        if find_refusal(rest) is not None:  # "Actually, I am not sure.": no span at all
            found.append((m.start(), Span(None, "revised to a refusal, not a span")))
        elif (span := trim_span(rest, max_words)).value is not None:
            found.append((m.start(), span))
    return max(found, key=lambda f: f[0])[1] if found else None
