"""Multiple-choice answer parsing.

:func:`parse_choice` turns a free-text model reply into one choice letter, or
reports *why* it could not. It never guesses: whenever the reply does not name
exactly one allowed choice the result has ``ok=False`` and a ``reason``.

Recognised forms
----------------
The reply is scanned by five *rules*, listed from strongest to weakest. The
strongest rule that finds anything decides (precedence); weaker rules are
only consulted when every stronger one found nothing.

1. ``tag`` -- an answer tag: ``<a>B</a>`` or ``<answer>B</answer>`` (tag name
   case-insensitive; the body may be ``(B)``, ``B.``, ``B) Paris`` ...).
2. ``phrase`` -- an answer phrase followed by a letter: ``Answer: B``,
   ``answer is B``, ``Final answer: **C**``, ``the correct option is (B)``,
   ``The best choice would be D``, ``The answer to the question is C``,
   ``I would choose A``, ``I'll go with option (C)``.
   Bare "option X" / "choice X" without a qualifier (correct, best, right,
   final, true) is only a *mention*, not an answer, and is not matched.
   The same rule reads a letter *before* a verdict: ``B is correct``,
   ``(C) is the right answer``, ``B would be the best choice`` (lower-case
   ``a``/``i`` excluded: "a is ..." is not a choice).
3. ``paren`` -- a parenthesised or bracketed letter anywhere: ``(A)``, ``[c]``.
4. ``bare`` -- a line consisting only of a letter, optionally wrapped in
   markdown emphasis or quotes and followed by ``.``/``!``: ``B``, ``**b**``.
5. ``delimited`` -- a letter at the start of a line followed by ``.`` or
   ``)`` and whitespace/end, or by a spaced dash: ``B. Paris``, ``- C) Rome``,
   ``B – The placenta`` (the shape of ConflictScore's Table 14 option lines).

Rules 1-2 are *declarative*: the reply states its answer. A declaration the
reply quotes or reports from a document does not count while the reply makes
one of its own (:func:`reported`: ``The answer is A. While the second passage
suggests the answer is B`` gives A; ``<a>A</a> ... Document 2 contains
'<a>B</a>'`` gives A); a reply whose only declarations are reported is read
from those. Among the declarations that count, a final answer ("Final answer:
C") outranks other answer phrases; if they still name different letters, the
last one wins only when the reply revises itself in between ("Answer: A ...
no, Answer: B", "Actually, the answer is B"); otherwise the reply declares two
answers and the result is a failure with reason ``"ambiguous: the reply
declares different answers (...)"``. A declaration that joins several letters
("Answer: B or C", "<a>A, D</a>", "the answer is (A) and (C)") is a failure
with reason ``"ambiguous: ..."``. Rules 3-5 are *loose*: they
also match option listings and mentions ("(A) is wrong, (B) fits"). A loose
rule therefore only decides when all of its matches name the same allowed
letter (the last occurrence supplies ``span``). If a loose rule names several
different letters the reply is *ambiguous*; the remaining weaker rules are still
tried (so "(A) is wrong, (B) fits.\\n\\nB" parses as B via ``bare``), and if
none of them decides, the result is a failure with reason ``"ambiguous: ..."``.

Case and English words
----------------------
Letters are matched case-insensitively (``answer: b`` -> ``B``); the result is
always the upper-case form of the allowed letter. Running text is never read
as an answer: "A man went to the market" contains no answer pattern at all,
because a loose letter must be parenthesised, alone on its line, or a
line-start list marker (``A.``/``A)``). After an answer phrase, a letter must
stand alone: it may not be part of a word (``I'm``, ``Bob``) and, for the
letters that are also English words (``a``, ``I``), it may not be followed by an
ordinary word -- "The answer is a bit unclear" and "Answer: I don't know" have
no letter -- unless that word is a connective such as "because"/"since"
("The answer is A because ..." parses as A). A parenthesised letter
(``answer is (a) ...``) always counts.

Allowed letters
---------------
``letters`` (default ``"ABCD"``, see :func:`letters_for`) lists the valid
choices. A declarative rule that names a letter outside that set is a failure
("Answer: E" with A-D gives ``reason="letter 'E' is not one of the allowed
choices A, B, C, D"``) -- the model committed to an invalid choice. Loose rules
ignore letters outside the set (``(i)``/``(e)`` in running text are not choices);
if nothing else is found, the failure reason mentions them.

Option-text fallback
--------------------
With ``options=[...]`` (option *i* belongs to ``letters[i]``), a reply in which
no rule found any letter at all may still be parsed by matching option
*texts*: case-insensitive, on word boundaries, tolerant of punctuation and
whitespace differences between words. Matching is attempted in the body of
the last answer tag, then in the rest of the line after the last word
"answer", then in the whole reply; the first of these scopes in which any
option matches decides. Exactly one matching option gives ``ok=True`` with
``method="option_text"``; more than one is ``"ambiguous"`` (unless they all
have the same text -- an item that lists one text under two letters -- when
the first of those letters is given). An occurrence that
lies inside an occurrence of a longer matching option does not count ("Paris,
Texas" does not also match the option "Paris"). The fallback is *not* used
when a letter was found but was ambiguous, or when a declarative rule named a
letter outside the allowed set (loose out-of-set letters are ignored, so the
fallback does run for them).

Length and time
---------------
Only the last :data:`MAX_REPLY_CHARS` (20,000) characters of a reply are read
(the last declaration wins, so the end is what matters), and every rule runs
in time linear in that: answer tags are found by :func:`tag_bodies` (no
backtracking over thousands of unclosed ``<a>`` tags), no regex has nested
quantifiers, and the option-text fallback checks containment by bisection.
Any string gives a :class:`ChoiceParse`; only a non-string ``text`` or
malformed ``letters``/``options`` (caller errors) raise.

Examples
--------
>>> parse_choice("Answer: B").letter
'B'
>>> parse_choice("I think (A) fits, but the answer is C.").letter
'C'
>>> parse_choice("The answer is A. While the second passage suggests the answer is B.").letter
'A'
>>> parse_choice("A man went to the market.").reason
'no choice letter found'
>>> parse_choice("Final answer: E").ok
False
>>> parse_choice("It must be Rome.", options=["Paris", "Rome"]).letter
'B'
>>> letters_for(5)
'ABCDE'
"""

from __future__ import annotations

import bisect
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

__all__ = [
    "MAX_REPLY_CHARS",
    "ChoiceParse",
    "Method",
    "Tag",
    "clip",
    "continues_prefill",
    "first_tagged_answer",
    "letters_for",
    "loggable",
    "loggable_output",
    "parse_choice",
    "reported",
    "restore_prefill",
    "revised",
    "tag_bodies",
]

Method = Literal["tag", "phrase", "paren", "bare", "delimited", "option_text"]

#: Words that may follow a stand-alone "A"/"I" after an answer phrase without
#: turning the letter into an English article/pronoun ("The answer is A because").
_CONNECTIVES = frozenset(
    {
        "and",
        "or",
        "as",
        "because",
        "but",
        "given",
        "is",
        "since",
        "so",
        "which",
        "with",
        "was",
        "would",
        "here",
        "there",
        "then",
        "according",
        "based",
    }
)
#: Single letters that are also English words.
_WORD_LETTERS = frozenset({"a", "i"})
#: Characters of light markup that may wrap a letter: **B**, _B_, "B", `B`.
_MARKUP = "*_\"'`“”‘’"


@dataclass(frozen=True)
class ChoiceParse:
    """Result of :func:`parse_choice`.

    Attributes:
        letter: The chosen letter, upper-case, or ``None`` on failure.
        ok: ``True`` iff a single allowed choice was identified.
        reason: Why parsing failed (``None`` when ``ok``).
        span: ``(start, end)`` character offsets in the original text of the
            letter (or of the matched option text); ``None`` on failure.
        method: Which rule decided (see the module docstring); ``None`` on
            failure.
        index: 0-based position of ``letter`` in the allowed letters (i.e. the
            option index); ``None`` on failure.
    """

    letter: str | None
    ok: bool
    reason: str | None = None
    span: tuple[int, int] | None = None
    method: Method | None = None
    index: int | None = None

    def __post_init__(self) -> None:
        if self.ok and (self.letter is None or self.reason is not None):
            raise ValueError("an ok ChoiceParse needs a letter and no reason")
        if not self.ok and (self.letter is not None or not self.reason):
            raise ValueError("a failed ChoiceParse needs a reason and no letter")

    @classmethod
    def failure(cls, reason: str) -> ChoiceParse:
        """A failed parse with the given reason."""
        return cls(letter=None, ok=False, reason=reason)


def letters_for(n: int) -> str:
    """The first ``n`` upper-case letters, the usual labels for ``n`` options.

    >>> letters_for(4)
    'ABCD'
    >>> letters_for(1)
    'A'

    Raises:
        ValueError: unless ``1 <= n <= 26``.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    if not 1 <= n <= 26:
        raise ValueError(f"n must be between 1 and 26, got {n}")
    return string.ascii_uppercase[:n]


# --------------------------------------------------------------------------
# Reading model replies safely (shared by every parser of model output)

MAX_REPLY_CHARS = 20_000
"""How much of a reply a parser reads. A reply is never longer than a few
thousand characters at the usual token limits (512 new tokens is about 2,500
characters); a longer one is runaway output, and reading only this much keeps
every parser's time bounded whatever the model writes. Each parser says in its
docstring which end of an over-long reply it keeps."""


def clip(text: str, keep: Literal["head", "tail"] = "head", limit: int = MAX_REPLY_CHARS) -> str:
    """The first (``keep="head"``) or last (``keep="tail"``) ``limit`` characters of ``text``.

    Parsers whose answer is the *first* of something read the head; parsers
    where the *last* statement wins read the tail. Lone surrogates are
    replaced (:func:`loggable`), so nothing a parser returns breaks the log.

    >>> clip("abcdef", "tail", 2), clip("abcdef", "head", 2)
    ('ef', 'ab')
    """
    if len(text) > limit:
        text = text[:limit] if keep == "head" else text[len(text) - limit:]
    return loggable(text)


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def loggable(text: str) -> str:
    """``text`` with lone surrogates (which a model's raw bytes can decode to)
    replaced by U+FFFD, one for one, so offsets stay valid. Inspect cannot
    write a lone surrogate to the log (UTF-8 refuses it), so anything a method
    stores or logs from a reply goes through here; every parser's input does,
    via :func:`clip`.

    >>> loggable("a\\ud800b")
    'a\\ufffdb'
    """
    return _SURROGATE_RE.sub("\ufffd", text) if _SURROGATE_RE.search(text) else text


def loggable_output(output):
    """An Inspect ``ModelOutput`` whose completion has no lone surrogates
    (see :func:`loggable`); the same object, changed in place. A multi-turn
    method must pass every output through this before putting its message
    back into the conversation: Inspect fails to log (and ends the sample)
    when a model *input* holds a lone surrogate."""
    if _SURROGATE_RE.search(output.completion or ""):
        output.completion = loggable(output.completion)
    for choice in output.choices:
        message = choice.message
        if isinstance(message.content, str):
            message.content = loggable(message.content)
        else:
            for part in message.content:
                if isinstance(getattr(part, "text", None), str):
                    part.text = loggable(part.text)
    return output


@dataclass(frozen=True)
class Tag:
    """One closed tag ``<name>body</name>`` found by :func:`tag_bodies`."""

    name: str
    """Lower-case tag name."""
    start: int
    """Offset of the body's first character."""
    end: int
    """Offset just past the body (where the closing tag begins)."""
    stop: int
    """Offset just past the closing tag."""

    def body(self, text: str) -> str:
        return text[self.start:self.end]


_TAG_PATTERNS: dict[tuple[str, ...], tuple[re.Pattern[str], dict[str, re.Pattern[str]]]] = {}


def tag_bodies(text: str, names: str | Sequence[str], pos: int = 0) -> list[Tag]:
    """Every closed tag ``<name>...</name>`` of ``text`` from ``pos`` on, in order.

    Same matches as ``re.finditer(r"<(name)\\s*>(.*?)</(name)\\s*>", re.I | re.S)``
    (the body is the shortest one; tags do not nest), but in linear time: once
    a tag name has no closing tag after some opening tag, no later opening tag
    of that name can be closed either, so the rest is not searched again. (The
    regex is quadratic on thousands of unclosed tags.)

    >>> [t.name for t in tag_bodies("<a>B</a> <answer>C</answer> <a>x", ("a", "answer"))]
    ['a', 'answer']
    >>> t = tag_bodies("<A >B</a>", "a")[0]; t.body("<A >B</a>")
    'B'
    """
    key = (names,) if isinstance(names, str) else tuple(names)
    if key not in _TAG_PATTERNS:
        alternatives = "|".join(re.escape(n) for n in sorted(key, key=len, reverse=True))
        _TAG_PATTERNS[key] = (
            re.compile(rf"<({alternatives})[ \t\r\n]*>", re.IGNORECASE),
            {n.lower(): re.compile(rf"</{re.escape(n)}[ \t\r\n]*>", re.IGNORECASE) for n in key},
        )
    opening, closing = _TAG_PATTERNS[key]
    found: list[Tag] = []
    unclosed: set[str] = set()
    while True:
        m = opening.search(text, pos)
        if m is None:
            break
        name = m.group(1).lower()
        if name in unclosed:
            pos = m.end()
            continue
        c = closing[name].search(text, m.end())
        if c is None:
            unclosed.add(name)
            if len(unclosed) == len(closing):
                break
            pos = m.end()
            continue
        found.append(Tag(name, m.end(), c.start(), c.end()))
        pos = c.end()
    return found


# --------------------------------------------------------------------------
# Declarations quoted or reported from documents (shared by the answer parsers)

#: What a document is called in a reply: "Document 2", "the second passage",
#: "Passage [3]", "the evidence", "the retrieved text", "the search results".
_SOURCE_REF = (
    r"(?<!my )(?<!our )(?<!own )\b(?:documents?|docs?|passages?|paragraphs?|evidence|contexts?|sources?"
    r"|articles?|snippets?|excerpts?|texts?|statements?|results?|knowledge|information|wikipedia)\b"
    r"(?:[ \t]*(?:\[?#?\d{1,3}\]?|[A-Z]\b))?"
)
#: A particular document ("according to Document 2"); "according to the
#: evidence" is how replies echo the End-to-End prompt, the reply's own answer.
_DOCUMENT_REF = (
    r"\b(?:documents?|docs?|passages?|paragraphs?|sources?|articles?|snippets?|excerpts?|results?)\b"
    r"(?:[ \t]*(?:\[?#?\d{1,3}\]?|[A-Z]\b))?"
)
#: Verbs that report what a document says (not the reply's own conclusion:
#: "shows", "supports", "based on" are left out).
_REPORT_VERB = (
    r"(?:says?|said|states?|stated|suggests?|suggested|claims?|claimed|contains?|mentions?|mentioned"
    r"|reports?|reported|indicates?|indicated|implies|implied|argues?|asserts?|lists?|listed|reads?"
    r"|writes?|wrote|gives?|gave|names?|named|points?[ \t]+to|puts?[ \t]+it|has|had)"
)
_REPORTED_TAIL = re.compile(
    rf"(?:{_SOURCE_REF}[^.!?\n;]{{0,40}}?[ \t]+(?:\w+[ \t]+)?{_REPORT_VERB}"
    rf"|\baccording[ \t]+to[ \t]+(?:\w+[ \t]+){{0,2}}?{_DOCUMENT_REF}[^.!?\n;]{{0,40}}?)"
    r"(?:[ \t]+that)?[ \t:,\"'“‘`*_(]*(?:(?:the|a|an|another|different|other|new|correct|right|best|final|only)[ \t]+){0,3}$",
    re.IGNORECASE,
)
_REPORT_WINDOW = 160
_SOURCE_WORD = re.compile(
    r"doc|passage|paragraph|evidence|context|source|article|snippet|excerpt|text|statement|result"
    r"|knowledge|information|wikipedia", re.IGNORECASE)

#: Words by which a reply revises an earlier declaration ("Answer: A ... wait,
#: Answer: B", "Actually, the answer is B", "<a>A</a> no, <a>C</a>").
_REVISION_RE = re.compile(
    r"\b(?:actually|wait|no[,.!:;]|correction|scratch[ \t]+that|on[ \t]+(?:second[ \t]+thought|reflection)"
    r"|upon[ \t]+(?:reflection|review)|(?:I[ \t]+was|that[ \t]+is|that['’]s|this[ \t]+is)[ \t]+(?:wrong|incorrect)"
    r"|mistake|reconsider\w*|re-?reading|correcting)",
    re.IGNORECASE,
)


def revised(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` revises an earlier declaration ("Actually",
    "wait", "no,", "on second thought", "that is wrong", ...).

    >>> revised("Answer: A. Actually, the answer is B", 9, 22), revised("Answer: A. The answer is B", 9, 15)
    (True, False)
    """
    return _REVISION_RE.search(text, start, max(start, end)) is not None


def reported(text: str, start: int) -> bool:
    """Whether a declaration starting at ``start`` quotes or reports a document
    rather than stating the reply's own answer.

    Reported: inside double quotes on its line (``Document 2 says "the answer
    is B"``), right after an opening quote (``contains '<a>B</a>'``), on a
    markdown block-quote line (``> ...``), or governed by a document and a
    reporting verb in its sentence (``the second passage suggests the answer
    is B``, ``Document 2 contains <a>B</a>``, ``According to Document 2, the
    answer is B``). "Based on the evidence, the answer is B" is the reply's
    own conclusion. Looks at most :data:`_REPORT_WINDOW` characters back.

    >>> text = "The answer is A. While the second passage suggests the answer is B."
    >>> reported(text, 0), reported(text, text.rindex("answer"))
    (False, True)
    >>> text = "<a>A</a> ... Document 2 contains '<a>B</a>'"
    >>> reported(text, 0), reported(text, text.rindex("<a>"))
    (False, True)
    """
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].lstrip(" \t").startswith(">"):
        return True
    window_start = max(line_start, start - _REPORT_WINDOW)
    before = text[window_start:start]
    if before.count('"') % 2 or before.rfind("“") > before.rfind("”"):
        return True
    stripped = before.rstrip(" \t")
    if stripped.endswith(("'", "‘")) and not stripped.endswith(("s'", "S'")):
        return True
    cut = max(before.rfind(". "), before.rfind("! "), before.rfind("? "), before.rfind(";"))
    start = cut + 1 if cut >= 0 else 0
    if _SOURCE_WORD.search(before, start) is None:  # the common case, cheaply
        return False
    return _REPORTED_TAIL.search(before, start) is not None


# --------------------------------------------------------------------------
# Letter-set handling


def _normalise_letters(letters: str | Sequence[str]) -> str:
    if isinstance(letters, str):
        items = list(letters)
    else:
        items = list(letters)
    if not items:
        raise ValueError("letters must not be empty")
    out = []
    for item in items:
        if not isinstance(item, str) or len(item) != 1 or item not in string.ascii_letters:
            raise ValueError(f"each allowed letter must be a single ASCII letter, got {item!r}")
        up = item.upper()
        if up in out:
            raise ValueError(f"duplicate allowed letter {up!r}")
        out.append(up)
    return "".join(out)


def _describe_letters(allowed: str) -> str:
    return ", ".join(allowed)


# --------------------------------------------------------------------------
# Reading one letter token at a position (used by the declarative rules)


def _skip(text: str, pos: int, chars: str, end: int | None = None) -> int:
    limit = len(text) if end is None else end
    while pos < limit and text[pos] in chars:
        pos += 1
    return pos


_WORD_AFTER_RE = re.compile(r"[ \t]+([A-Za-z]{1,40})")


def _read_letter(text: str, pos: int, end: int | None = None) -> tuple[str, int] | None:
    """Read a stand-alone letter starting at ``pos`` (after optional markup).

    Returns ``(letter, offset)`` or ``None`` when the text at ``pos`` is not a
    stand-alone choice letter. ``end`` bounds the region (for tag bodies); the
    text is never copied, so reading many tags stays linear.
    """
    limit = len(text) if end is None else end
    pos = _skip(text, pos, " \t\r\n" + _MARKUP, limit)
    bracketed = False
    if pos < limit and text[pos] in "([":
        bracketed = True
        pos = _skip(text, pos + 1, " \t", limit)
    if pos >= limit or text[pos] not in string.ascii_letters:
        return None
    letter, at = text[pos], pos
    nxt = pos + 1
    # Part of a longer word, a contraction or a number ("Bob", "I'm", "B2")?
    if nxt < limit and (text[nxt].isalnum() or text[nxt] in "'’_"):
        return None
    if bracketed:
        close = _skip(text, nxt, " \t", limit)
        if close < limit and text[close] in ")]":
            return letter, at
        return None
    after = _skip(text, nxt, _MARKUP, limit)
    if after >= limit:
        return letter, at
    if text[after] not in " \t":
        # Punctuation, a newline, a dash ...: the letter stands alone.
        return letter, at
    word_match = _WORD_AFTER_RE.match(text, after, limit)
    if word_match is None:
        return letter, at  # whitespace then end/newline/punctuation
    if letter.lower() in _WORD_LETTERS and word_match.group(1).lower() not in _CONNECTIVES:
        return None  # "a bit", "I don't": an English word, not a choice
    return letter, at


# --------------------------------------------------------------------------
# The five rules. Each returns candidate (letter, offset) pairs in text order.

_ANSWER_TAGS = ("a", "answer")

_COPULA = r"(?:is|would\s+be|should\s+be|must\s+be|will\s+be|=)"
_PHRASE_RE = re.compile(
    r"\b(?:(?:final|correct|right|best|true)\s+(?:answer|option|choice|letter)|answer"
    r"|(?:i|we)(?:\s+(?:would|will|should)|['’]d|['’]ll)?\s+(?:choose|select|pick|go\s+with))\b"
    r"(?:"
    # "answer to the question is B" / "answer for this: B"
    rf"\s+(?:to|for|of)\b[^.\n:]{{0,80}}?(?:\s+{_COPULA}|\s*:)"
    r"|"
    # "answer is B", "answer: B", "answer is: B", "answer - B", "answer B"
    rf"(?:\s+{_COPULA})?\s*[:=\-–]?"
    r")"
    r"\s*(?:(?:option|choice|letter)\b\s*)?",
    re.IGNORECASE,
)
_PAREN_RE = re.compile(r"(?<![A-Za-z0-9])[(\[][ \t]*([A-Za-z])[ \t]*[)\]]")
_BARE_RE = re.compile(r"^[ \t*_\"'`“”‘’]*([A-Za-z])[ \t*_\"'`“”‘’.!]*$", re.MULTILINE)
_DELIM_RE = re.compile(r"^[ \t>*_#\-]*([A-Za-z])(?:[.)]|[*_]{0,2}[ \t]+[-–—])(?=[ \t*_]|$)", re.MULTILINE)


#: "B is correct", "(C) is the right answer", "B would be the best choice": a
#: letter standing alone (not part of a word or contraction) before a verdict.
_VERDICT_AFTER_RE = re.compile(
    r"(?<![A-Za-z0-9'’])[(\[]?([A-Za-z])[)\]*_\"'”’]{0,3}[ \t]+(?:is|would[ \t]+be|seems[ \t]+to[ \t]+be)"
    r"[ \t]+(?:the[ \t]+)?(?:correct|right|best|true|most[ \t]+(?:likely|plausible|accurate))\b",
    re.IGNORECASE,
)

_JOIN_RE = re.compile(r"[ \t]*(?:,|/|&|\band\b|\bor\b)[ \t]*", re.IGNORECASE)


def _more_letters(text: str, letter: str, at: int, end: int | None) -> tuple[str, ...]:
    """Further letters joined to a declared one: "B or C", "A, C and D", "A/B".

    A joined letter must stand alone (same rules as :func:`_read_letter`) and,
    unless bracketed, have the same case as the first one, so "Answer: A, a
    classic" is not read as two letters.
    """
    limit = len(text) if end is None else end
    more: list[str] = []
    pos = at + 1
    while True:
        pos = _skip(text, pos, _MARKUP + ")]", limit)
        joint = _JOIN_RE.match(text, pos, limit)
        if joint is None:
            break
        got = _read_letter(text, joint.end(), end)
        if got is None:
            break
        nxt, nxt_at = got
        bracketed = text[nxt_at - 1] in "([" if nxt_at > 0 else False
        if not bracketed and nxt.isupper() != letter.isupper():
            break
        if nxt.upper() != letter.upper() and nxt.upper() not in more:
            more.append(nxt.upper())
        pos = nxt_at + 1
    return tuple(more)


Candidate = tuple[str, int, tuple[str, ...], int, bool]
"""letter, offset, further joined letters, where the declaration starts, whether it is a final answer"""


def _rule_tag(text: str) -> list[Candidate]:
    found = []
    for tag in tag_bodies(text, _ANSWER_TAGS):
        got = _read_letter(text, tag.start, tag.end)
        if got is not None:
            opening = text.rfind("<", 0, tag.start)
            found.append((*got, _more_letters(text, *got, tag.end), opening, True))
    return found


_SUBJECT_WORDS = frozenset({"option", "choice", "answer", "letter", "so", "thus", "therefore", "hence", "but",
                            "and", "think", "believe", "guess", "say", "conclusion", "final"})


def _verdict_subject(text: str, start: int) -> bool:
    """Whether the letter at ``start`` opens its clause ("B is correct",
    "...; (B) is right", "I think B is best", "option B is correct"), rather
    than ending a name ("Vitamin C is the best", "Plan A is correct")."""
    i = start
    while i > 0 and text[i - 1] in " \t*_\"'“‘>":
        i -= 1
    if i == 0 or text[i - 1] in ".;:!?\n(,-–—":
        return True
    j = i
    while j > 0 and text[j - 1].isalpha() and i - j < 20:
        j -= 1
    return text[j:i].lower() in _SUBJECT_WORDS


def _rule_phrase(text: str) -> list[Candidate]:
    found = []
    for m in _PHRASE_RE.finditer(text):
        end = m.end()
        if end < len(text) and text[end] in "([" and text[end - 1].isalnum():
            continue  # "answer(s)": a bracket glued to the word is not a choice
        got = _read_letter(text, end)
        if got is not None:
            final = text[m.start():m.start() + 5].lower() == "final"
            found.append((*got, _more_letters(text, *got, None), m.start(), final))
    for m in _VERDICT_AFTER_RE.finditer(text):
        letter = m.group(1)
        if letter in "ai" or not _verdict_subject(text, m.start()):
            continue  # "a is ...", "Vitamin C is the best": not a choice
        found.append((letter, m.start(1), (), m.start(), False))
    found.sort(key=lambda c: c[1])
    return found


def _rule_regex(pattern: re.Pattern[str]):
    def rule(text: str) -> list[tuple[str, int]]:
        return [(m.group(1), m.start(1)) for m in pattern.finditer(text)]

    return rule


_DECLARATIVE_RULES = (("tag", _rule_tag), ("phrase", _rule_phrase))
_LOOSE_RULES = (
    ("paren", _rule_regex(_PAREN_RE)),
    ("bare", _rule_regex(_BARE_RE)),
    ("delimited", _rule_regex(_DELIM_RE)),
)


# --------------------------------------------------------------------------
# Option-text fallback


def _option_key(option: str) -> str:
    return " ".join(option.split()).casefold()


def _option_pattern(option: str) -> re.Pattern[str] | None:
    words = re.findall(r"\w+", option)
    if not words:
        return None
    body = r"\W+".join(re.escape(w) for w in words)
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


def _match_options(text: str, start: int, end: int, patterns: list[re.Pattern[str] | None]):
    """Options matching in ``text[start:end]``: list of (index, span)."""
    # Occurrences of one option do not overlap and come in text order, so the
    # only occurrence of option j that can contain position s is the last one
    # starting at or before s (found by bisection: n log n, not n^2).
    per_option: list[list[tuple[int, int]]] = []
    for pat in patterns:
        per_option.append([] if pat is None else [m.span() for m in pat.finditer(text, start, end)])
    starts = [[s for s, _ in occ] for occ in per_option]
    matched: dict[int, tuple[int, int]] = {}
    for i, occ in enumerate(per_option):
        for s, e in occ:
            inside_longer = False
            for j, other in enumerate(per_option):
                if j == i or not other:
                    continue
                k = bisect.bisect_right(starts[j], s) - 1
                if k >= 0:
                    s2, e2 = other[k]
                    if e <= e2 and (e2 - s2) > (e - s):
                        inside_longer = True
                        break
            if not inside_longer:
                matched[i] = (s, e)  # later occurrences overwrite: last one wins
    return sorted(matched.items())


_ANSWER_WORD_RE = re.compile(r"\banswer\b[^\n]*", re.IGNORECASE)


def _option_fallback(text: str, allowed: str, options: Sequence[str]) -> ChoiceParse | None:
    patterns = [_option_pattern(o) for o in options]
    scopes: list[tuple[int, int]] = []
    tags = tag_bodies(text, _ANSWER_TAGS)
    if tags:
        scopes.append((tags[-1].start, tags[-1].end))
    phrases = list(_ANSWER_WORD_RE.finditer(text))
    if phrases:
        scopes.append((phrases[-1].start(), phrases[-1].end()))
    scopes.append((0, len(text)))
    for start, end in scopes:
        matched = _match_options(text, start, end, patterns)
        if len(matched) == 1:
            index, span = matched[0]
            return ChoiceParse(
                letter=allowed[index], ok=True, span=span, method="option_text", index=index
            )
        if len(matched) > 1 and len({_option_key(options[i]) for i, _ in matched}) == 1:
            index, span = matched[0]  # one text listed under several letters: the first
            return ChoiceParse(
                letter=allowed[index], ok=True, span=span, method="option_text", index=index
            )
        if len(matched) > 1:
            names = ", ".join(allowed[i] for i, _ in matched)
            return ChoiceParse.failure(f"ambiguous: text of several options found ({names})")
    return None


# --------------------------------------------------------------------------
# Public entry point


def parse_choice(
    text: str,
    letters: str | Sequence[str] = "ABCD",
    *,
    options: Sequence[str] | None = None,
) -> ChoiceParse:
    """Parse a multiple-choice answer letter out of a model reply.

    Args:
        text: The model's reply.
        letters: The allowed choice letters, e.g. ``"ABCD"`` or
            ``["A", "B"]`` (case-insensitive, single ASCII letters, no
            duplicates). Use :func:`letters_for` for ``n`` options.
        options: Optional option texts; ``options[i]`` belongs to
            ``letters[i]``. Enables the option-text fallback described in the
            module docstring. Must not be longer than ``letters``.

    Returns:
        A :class:`ChoiceParse`. See the module docstring for the exact rules.

    Raises:
        TypeError: if ``text`` is not a string.
        ValueError: if ``letters`` or ``options`` is malformed.

    >>> parse_choice("<a>(d)</a>").letter
    'D'
    >>> parse_choice("(A) Paris\\n(B) London").reason
    'ambiguous: several different letters found (A, B)'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    allowed = _normalise_letters(letters)
    if options is not None:
        if isinstance(options, str):
            raise TypeError("options must be a sequence of strings, not a single string")
        options = list(options)
        if len(options) > len(allowed):
            raise ValueError(
                f"{len(options)} options but only {len(allowed)} allowed letters ({allowed})"
            )
        for o in options:
            if not isinstance(o, str):
                raise TypeError(f"options must be strings, got {type(o).__name__}")
    if not text.strip():
        return ChoiceParse.failure("empty response")
    # Only the last MAX_REPLY_CHARS characters are read (the last declaration
    # wins, so the end of an over-long reply is the part that matters); spans
    # are offsets in the original text.
    shift = max(0, len(text) - MAX_REPLY_CHARS)
    parsed = _parse_choice(clip(text, "tail"), allowed, options)
    if shift and parsed.span is not None:
        parsed = replace(parsed, span=(parsed.span[0] + shift, parsed.span[1] + shift))
    return parsed


def _decide(text: str, allowed: str, method: Method, found: list[Candidate]) -> ChoiceParse:
    """One letter from a rule's declarations (in text order): final-answer
    declarations outrank the others; among the rest the last one counts when
    they agree or when a revision ("Actually, ...", "no, ...") stands between
    it and the last declaration of another letter, else the reply is ambiguous."""
    finals = [c for c in found if c[4]]
    if finals and len(finals) < len(found) and method == "phrase":
        found = finals
    letter, at, more, start, _ = found[-1]
    up = letter.upper()
    if more:
        named = ", ".join([up, *more])
        return ChoiceParse.failure(f"ambiguous: the answer names several letters ({named})")
    others = [c for c in found if c[0].upper() != up]
    if others and not revised(text, others[-1][1] + 1, start):
        named = ", ".join(dict.fromkeys(c[0].upper() for c in found))
        return ChoiceParse.failure(f"ambiguous: the reply declares different answers ({named})")
    if up not in allowed:
        return ChoiceParse.failure(
            f"letter {up!r} is not one of the allowed choices {_describe_letters(allowed)}"
        )
    return ChoiceParse(letter=up, ok=True, span=(at, at + 1), method=method, index=allowed.index(up))


def _parse_choice(text: str, allowed: str, options: Sequence[str] | None) -> ChoiceParse:
    # Declarative rules: the model's own declarations (not text quoted or
    # reported from a document) of the strongest rule that has any decide;
    # an invalid letter is a failure.
    declared = [(method, rule(text)) for method, rule in _DECLARATIVE_RULES]
    for method, found in declared:
        own = [c for c in found if not reported(text, c[3])]
        if own:
            return _decide(text, allowed, method, own)
    for method, found in declared:  # only reported declarations: they are all the reply says
        if found:
            return _decide(text, allowed, method, found)

    # Loose rules: decide only when all matches agree.
    ambiguous: list[str] | None = None
    outside: list[str] = []
    for method, rule in _LOOSE_RULES:
        found = rule(text)
        valid = [(letter.upper(), at) for letter, at in found if letter.upper() in allowed]
        outside.extend(letter.upper() for letter, _ in found if letter.upper() not in allowed)
        distinct = sorted({letter for letter, _ in valid})
        if len(distinct) == 1:
            up, at = valid[-1]
            return ChoiceParse(
                letter=up, ok=True, span=(at, at + 1), method=method, index=allowed.index(up)
            )
        if len(distinct) > 1 and ambiguous is None:
            ambiguous = distinct
    if ambiguous is not None:
        return ChoiceParse.failure(
            f"ambiguous: several different letters found ({', '.join(ambiguous)})"
        )
    if options:
        fallback = _option_fallback(text, allowed, options)
        if fallback is not None:
            return fallback
    if outside:
        shown = ", ".join(dict.fromkeys(outside))
        return ChoiceParse.failure(
            f"no choice letter found (letters outside the allowed choices "
            f"{_describe_letters(allowed)}: {shown})"
        )
    return ChoiceParse.failure("no choice letter found")


# --------------------------------------------------------------------------
# prompts that end inside an open answer tag (Micro-Act Figures 10-12)

_PREFILL_TAGS = {tag: re.compile(rf"<(/?){tag[1]}[ \t\r\n]*>", re.IGNORECASE) for tag in ("<a>", "<t>")}


def continues_prefill(tag: str, reply: str) -> bool:
    """Whether ``reply`` continues a prompt that ends inside the open ``tag``.

    A continuation writes the tag's body and closes it (``B</a>``), or stops
    before closing it (``C. Great Britain``, a reply cut at the token limit):
    the first ``<a>``/``</a>`` it writes is the *closing* one, or it writes
    neither. A reply whose first such tag *opens* the tag started a fresh
    message instead -- a chat model writes ``The final answer is: <a>A</a>``,
    ``**Answer:** <a>A</a>`` or a fenced ``<a>A</a>`` -- and is no
    continuation, whatever comes before the tag. (A reply that continues a
    few-shot pattern holds later ``<a>`` tags too, so "contains the tag" is not
    the test; "which comes first" is.)

    >>> continues_prefill("<a>", "B</a> then <a>C</a>"), continues_prefill("<a>", "**Answer:** <a>B</a>")
    (True, False)
    """
    m = _PREFILL_TAGS[tag].search(reply)
    return m is None or m.group(1) == "/"


def restore_prefill(prompt: str, reply: str) -> str:
    """Put back the open tag (``<a>`` or ``<t>``) a prompt ends with, when the
    reply continues it (:func:`continues_prefill`).

    The prompt ends inside the tag. A completion model continues it, so the tag
    goes in front and the log shows the whole answer. A chat model usually
    starts a fresh message that writes the tag itself (``I think the answer is
    <a>A</a>``); that reply is returned unchanged, since putting ``<a>`` in
    front would turn its preamble into the answer.

    >>> restore_prefill("The final answer is: <a>", "B</a>")
    '<a>B</a>'
    >>> restore_prefill("The final answer is: <a>", "B</a> then <a>C</a>")
    '<a>B</a> then <a>C</a>'
    >>> restore_prefill("The final answer is: <a>", "The final answer is: <a>A</a>")
    'The final answer is: <a>A</a>'
    """
    for tag in _PREFILL_TAGS:
        if prompt.rstrip().endswith(tag) and continues_prefill(tag, reply):
            return tag + reply
    return reply


def first_tagged_answer(reply: str) -> tuple[str | None, str | None]:
    """The answer segment ``<a>...</a>`` of a reply to a prefilled prompt.

    Returns ``(segment, None)`` or ``(None, reason)``. The **first** closed tag
    counts: a model that goes on to invent further examples writes more tags
    after its answer. A tag the reply quotes from a document (``Document 2
    contains '<a>B</a>'``, see :func:`reported`) does not count while the
    reply has a tag of its own. A reply that opens ``<a>`` but never closes it (small
    models often stop after "C. Great Britain"; a chat reply cut at the token
    limit stops after "The final answer is: <a>A") is read from that ``<a>``
    up to the end of its line. No tag, or an empty answer, is a failure. Only
    the first :data:`MAX_REPLY_CHARS` characters are read.

    >>> first_tagged_answer("<a>B</a>\\n\\nEvidence: ... <a>C</a>")
    ('<a>B</a>', None)
    >>> first_tagged_answer("<a>C. Great Britain\\nmore text")
    ('<a>C. Great Britain</a>', None)
    >>> first_tagged_answer("The final answer is: <a>A")
    ('<a>A</a>', None)
    >>> first_tagged_answer("I think B")
    (None, 'no <a>...</a> answer')
    """
    reply = clip(reply, "head")
    tags = tag_bodies(reply, "a")
    if not tags:
        opened = _PREFILL_TAGS["<a>"].search(reply)
        if "</a>" in reply.lower() or opened is None:
            return None, "no <a>...</a> answer"
        start = opened.start()
        while reply[start:start + 3].lower() == "<a>":  # "<a><a><a>...": read after the last
            start += 3
            while start < len(reply) and reply[start] in " \t":
                start += 1
        end = reply.find("\n", start)
        first_line = reply[start:] if end < 0 else reply[start:end]
        if not first_line.strip():
            return None, "no <a>...</a> answer"
        return f"<a>{first_line.strip()}</a>", None
    first = next((t for t in tags if not reported(reply, reply.rfind("<", 0, t.start))), tags[0])
    body = first.body(reply)
    if not body.strip():
        return None, "empty <a></a> answer"
    return f"<a>{body.strip()}</a>", None
