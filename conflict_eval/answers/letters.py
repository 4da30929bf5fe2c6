"""Letter sets and reading a choice letter at a position (used by :mod:`conflict_eval.answers.choice`)."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from conflict_eval.answers.reply import MAX_GAP

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
    """Read a stand-alone letter starting at ``pos`` (after optional markup,
    at most :data:`MAX_GAP` characters of it).

    Returns ``(letter, offset)`` or ``None`` when the text at ``pos`` is not a
    stand-alone choice letter. ``end`` bounds the region (for tag bodies); the
    text is never copied, so reading many tags stays linear.
    """
    limit = len(text) if end is None else end
    pos = _skip(text, pos, " \t\r\n" + _MARKUP, min(limit, pos + MAX_GAP))
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

_COPULA = r"(?:is|would\s{1,20}be|should\s{1,20}be|must\s{1,20}be|will\s{1,20}be|=)"
_PHRASE_RE = re.compile(
    r"(?=[abcfirtw])"  # the letters a match starts with (tests/test_regex_lookaheads.py)
    r"\b(?:(?:final|correct|right|best|true)\s{1,20}(?:answer|option|choice|letter)|answer"
    r"|(?:i|we)(?:\s{1,20}(?:would|will|should)|['’]d|['’]ll)?\s{1,20}(?:choose|select|pick|go\s{1,20}with))\b"
    r"(?:"
    # "answer to the question is B" / "answer for this: B"
    rf"\s{{1,20}}(?:to|for|of)\b[^.\n:]{{0,80}}?(?:\s{{1,20}}{_COPULA}|\s{{0,20}}:)"
    r"|"
    # "answer is B", "answer: B", "answer is: B", "answer - B", "answer B"
    rf"(?:\s{{1,20}}{_COPULA})?[*_]{{0,3}}\s{{0,20}}[:=\-–—]?"
    r")"
    r"\s{0,20}(?:(?:option|choice|letter)\b\s{0,20})?",
    re.IGNORECASE,
)
#: What makes an answer phrase a label ("Answer: B", "Answer = B", "Answer — B").
_LABEL_RE = re.compile(r"answer[ \t*_]*[:=\-–—]", re.IGNORECASE)
_PAREN_RE = re.compile(r"(?<![A-Za-z0-9])[(\[][ \t]*([A-Za-z])[ \t]*[)\]]")
_BARE_RE = re.compile(r"^[ \t*_\"'`“”‘’]*([A-Za-z])[ \t*_\"'`“”‘’.!]*$", re.MULTILINE)
#: Not initials ("C. S. Lewis", as :func:`_line_choice`): a letter and a period
#: followed by another capital and a period is a name, not a choice.
_DELIM_RE = re.compile(r"^[ \t>*_#\-]*([A-Za-z])(?:\.(?![ \t]+[A-Z]\.)|\)|[*_]{0,2}[ \t]+[-–—])(?=[ \t*_]|$)",
                       re.MULTILINE)


#: "B is correct", "(C) is the right answer", "B would be the best choice": a
#: letter standing alone (not part of a word or contraction) before a verdict.
_VERDICT_AFTER_RE = re.compile(
    r"(?<![A-Za-z0-9'’])[(\[]?([A-Za-z])[)\]*_\"'”’]{0,3}[ \t]+(?:is|would[ \t]+be|seems[ \t]+to[ \t]+be)"
    r"[ \t]+(?:the[ \t]+)?(?:correct|right|best|true|most[ \t]+(?:likely|plausible|accurate))\b",
    re.IGNORECASE,
)

# --------------------------------------------------------------------------
# Explicit final markers besides "Final answer:" (each one decides like it)
# and hedges that name one option (issue 42, Deliver 1).

#: ``\boxed{B}``, ``\boxed{\text{B}}``, ``\boxed{(B)}``.
_BOXED_RE = re.compile(r"\\boxed[ \t]{0,3}\{[ \t]{0,3}(?:\\(?:text|textbf|mathrm|mathbf)[ \t]{0,3}\{[ \t]{0,3})?[(\[]?"
                       r"[ \t]{0,3}([A-Za-z])[ \t]{0,3}[)\]]?[ \t]{0,3}\}")
#: A JSON object's answer field: ``{"answer": "B"}``, ``"final_answer": "(B) Paris"``.
_JSON_ANSWER_RE = re.compile(r"[\"'](?:final[_ ]?)?answer[\"'][ \t]*:[ \t]*[\"'][ \t]*[(\[]?([A-Za-z])"
                             r"(?![A-Za-z0-9'’_-])", re.IGNORECASE)
#: A markdown table row labelled final: ``| **Final answer** | **B** |``.
_TABLE_FINAL_RE = re.compile(r"^[ \t]*\|[ \t*_]*(?:final(?:[ \t]+(?:answer|choice|option))?|answer)[ \t*_:]*\|"
                             r"[ \t*_`]*[(\[]?([A-Za-z])(?![A-Za-z0-9'’_-])", re.IGNORECASE | re.MULTILINE)
FINAL_MARKERS = (_BOXED_RE, _JSON_ANSWER_RE, _TABLE_FINAL_RE)

#: A hedge that names one option: "I think it's B.", "Probably B.", "It's B.",
#: "My best guess is B", "I'd say (C)". The letter must end its clause (a
#: period, comma, line end, or "because ..."), so "I think B is wrong" is not
#: a hedge for B.
_HEDGE_RE = re.compile(
    r"(?=[bgilmp])"  # the letters a match starts with (tests/test_regex_lookaheads.py)
    r"(?<![\w'’])(?:i[ \t]+(?:think|believe|guess|suspect|reckon)(?:[ \t]+(?:that|it['’]s|it[ \t]+is|it[ \t]+would[ \t]+be))?"
    r"|(?:my[ \t]+)?(?:best[ \t]+)?guess[ \t]*(?:is|would[ \t]+be|:)|probably|most[ \t]+likely|likely"
    r"|it['’]s|it[ \t]+is|i['’]d[ \t]+(?:say|go[ \t]+with)|i[ \t]+would[ \t]+say|(?:i['’]m[ \t]+|i[ \t]+am[ \t]+)?leaning"
    r"[ \t]+towards?|i[ \t]+lean[ \t]+towards?)(?![\w'’])",
    re.IGNORECASE,
)
#: After a hedge phrase (and at most a few spaces, a colon, "option"): one
#: letter that ends its clause. Bounded runs only, so a hedge followed by
#: 20,000 spaces is read in linear time.
_HEDGE_LETTER_RE = re.compile(
    r"[ \t]{0,3}:?[ \t]{1,3}(?:(?:option|choice|answer)[ \t]{1,3})?[*_\"'`“‘(\[]{0,3}([A-Za-z])[)\]*_\"'`”’]{0,3}"
    r"(?=[ \t]{0,3}(?:[.!,;:]|\r?$|\n)|[ \t]{1,3}(?:because|since|as)\b|[ \t]{1,3}[—–-])",
    re.IGNORECASE,
)

#: A letter standing right after a revision ("A. Actually, B.", "no, (C)",
#: "On second thought: D"): it must end its clause, as a hedge's letter.
_REVISED_LETTER_RE = re.compile(
    r"[ \t,:;.!—–-]{0,6}(?:it['’]s[ \t]{1,3}|it[ \t]{1,3}is[ \t]{1,3})?[*_\"'`“‘(\[]{0,3}([A-Z])[)\]*_\"'`”’]{0,3}"
    r"(?=[ \t]{0,3}(?:[.!,;:]|\r?$|\n)|[ \t]{1,3}(?:because|since|as)\b|[ \t]{1,3}[—–-])",
    re.MULTILINE,
)

#: What makes a line plainly list options rather than explain a choice: no
#: sentence punctuation or dash between two bracketed letters ("(A) Paris (B) London").
_EXPLAINS = re.compile(r"[.;:!?—–]|\s-\s")

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

# --------------------------------------------------------------------------
# The leading choice: a reply that opens with its choice ("B: text", "E (walked)")

_LEAD_SKIP = " \t*_`\"'“‘#"
_DASHES = "-–—"


def _line_choice(text: str, start: int, end: int) -> tuple[str, int] | None:
    """The choice letter a line ``text[start:end]`` opens with, or ``None``.

    Forms (any case; markup around the letter and a list bullet before it
    allowed): ``B``, ``(B)``,
    ``[B]``, ``B.``, ``B:``, ``B)`` -- each followed by white space or the end
    of the line -- ``B – text`` / ``**E** — walked`` (a spaced dash),
    ``E (walked)`` (a bracketed gloss that ends the line), and ``**B** ...``
    (a letter wrapped in emphasis, then anything). "A man ...", "I think ...",
    "B2", "A.M." are not choices.
    """
    pos = start
    while pos < end and text[pos] in " \t":
        pos += 1
    if pos + 1 < end and text[pos] in "-•" and text[pos + 1] in " \t":
        pos += 2  # a list bullet: "- A – The uterus"
    while pos < end and text[pos] in _LEAD_SKIP:
        pos += 1
    wrapped = pos > start and text[pos - 1] in "*_`"
    if pos + 2 < end and text[pos] in "([" and text[pos + 2] in ")]" and text[pos + 1] in string.ascii_letters:
        return text[pos + 1], pos + 1
    if pos >= end or text[pos] not in string.ascii_letters:
        return None
    letter, at = text[pos], pos
    nxt = pos + 1
    if nxt < end and (text[nxt].isalnum() or text[nxt] in "'’_-"):
        return None
    closing = nxt
    while closing < end and text[closing] in "*_`\"'”’":
        closing += 1
    if closing >= end:
        return letter, at
    c = text[closing]
    if c in ".:)" and (closing + 1 >= end or text[closing + 1] in " \t*_`"):
        after = closing + 1
        while after < end and text[after] in " \t":
            after += 1
        if c == "." and after + 1 < end and text[after].isupper() and text[after + 1] == ".":
            return None  # initials: "C. S. Lewis wrote it"
        return letter, at
    if c not in " \t":
        return None
    if wrapped and closing > nxt:
        return letter, at  # "**B** ..." : an emphasised letter
    gap = closing
    while gap < end and text[gap] in " \t":
        gap += 1
    if gap < end and text[gap] in _DASHES and (gap + 1 >= end or text[gap + 1] in " \t"):
        return letter, at
    if gap < end and text[gap] == "(":
        close = text.find(")", gap, end)
        if close > 0 and not text[close + 1:end].strip(" \t.*_`\"'”’!"):
            return letter, at  # "E (walked)"
    return None


_LINE_TEXT_RE = re.compile(r"[^ \t\r*_`\n]")


def _lines_after(text: str, pos: int):
    """(start, end) of the non-empty lines from ``pos`` on (a line holding only
    blanks and ``*_` `` is empty; a regex finds the next character that is not,
    so a run of empty lines costs one search)."""
    n = len(text)
    while pos < n and (m := _LINE_TEXT_RE.search(text, pos)) is not None:
        start = max(pos, text.rfind("\n", pos, m.start()) + 1)
        end = text.find("\n", m.start())
        end = n if end < 0 else end
        yield start, end
        pos = end + 1


def _lead(text: str, allowed: str) -> tuple[str, int, int] | None:
    """The reply's leading choice: ``(letter, offset, line start)`` when its
    first non-empty line (or the one after a one-line preamble ending in ``:``,
    "Here is my answer:") opens with a choice (:func:`_line_choice`) among
    ``allowed``, and that line does not begin an option listing (the next
    non-empty line opening with the next letter: "A. Paris" / "B. Rome", or
    the next letter bracketed later on the line: "(A) Paris (B) London")."""
    lines = _lines_after(text, 0)
    first = next(lines, None)
    if first is None:
        return None
    got = _line_choice(text, *first)
    if got is None and first[1] - first[0] <= 200 and text[first[0]:first[1]].rstrip(" \t\r*_").endswith(":"):
        first = next(lines, None)
        got = _line_choice(text, *first) if first is not None else None
    if got is None or got[0].upper() not in allowed:
        return None
    following = chr(ord(got[0]) + 1)
    rest = text[got[1] + 1:first[1]]
    bracketed = got[1] > 0 and text[got[1] - 1] in "(["
    for mark in (f"({following})", f"[{following}]"):
        at = rest.find(mark)
        if bracketed and at >= 0 and not _EXPLAINS.search(rest, 1, at):
            return None  # "(A) Paris (B) London": a listing on one line, not "A — ... (B) is wrong"
    after = next(lines, None)
    if after is not None:
        nxt = _line_choice(text, *after)
        if nxt is not None and ord(nxt[0].upper()) == ord(got[0].upper()) + 1:
            return None  # an option listing, not a choice
    return got[0], got[1], first[0]
