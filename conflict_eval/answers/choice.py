"""Multiple-choice answer parsing.

:func:`parse_choice` turns a free-text model reply into one choice letter, or
reports *why* it could not. It never guesses: whenever the reply does not name
exactly one allowed choice the result has ``ok=False`` and a ``reason``.

Recognised forms
----------------
Any case (``b`` is ``B``): ``B``, ``(B)``, ``B.``, ``B:``, ``B)``,
``**B**``, ``B. text``, ``B: text``, ``E (walked)``, ``**E** — walked``,
``B – text``, ``Answer: B``, ``<a>B</a>`` after a preamble, and a
final-answer line after working (``ANSWER1: E`` / ``ANSWER2: D`` /
``Final answer: D`` gives D). Text quoted from the documents or the options
is not a vote, and neither is an explanation after the choice. A sincere
refusal with no letter of its own is reported as one (``refused``, see
"Refusals" below).

The reply is scanned by six *rules*, listed from strongest to weakest. The
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
3. ``lead`` -- the choice the reply *opens with*: its first non-empty line
   (or the line after a one-line preamble ending in ``:``, "Here is my
   answer:") starts with ``B``, ``(B)``, ``[B]``, ``B.``, ``B:``, ``B)``
   (each followed by white space or the end of the line), ``B – text`` /
   ``**E** — walked`` (a spaced dash), ``E (walked)`` (a bracketed gloss
   ending the line), or an emphasised ``**B**`` -- after an optional list
   bullet. What follows is the explanation: ``(B)`` then a document's quoted
   "(A)" is B; ``B: Biochemistry does not study gluons.`` then a sentence
   quoting option A's text is B. Not a lead: running text ("A man ...", "I
   think ..."), a letter outside the allowed set, and an option *listing*
   (the next non-empty line opens with the next letter, "A. Paris" / "B.
   Rome", or the next letter is bracketed later on the line, "(A) Paris (B)
   London"). With ``options``, a lead followed on its line by exactly the
   text of a *different* option ("A – The placenta" where the placenta is
   option B) is a failure (``"ambiguous: letter A but the text of option
   B"``). A lead ranks below the declarative rules: an own declaration
   counts together with it (agreeing: fine; a different letter: ambiguous
   unless an explicit final marker decides, as below).
4. ``paren`` -- a parenthesised or bracketed letter anywhere: ``(A)``, ``[c]``.
5. ``bare`` -- a line consisting only of a letter, optionally wrapped in
   markdown emphasis or quotes and followed by ``.``/``!``: ``B``, ``**b**``.
6. ``delimited`` -- a letter at the start of a line followed by ``.`` or
   ``)`` and whitespace/end, or by a spaced dash: ``B. Paris``, ``- C) Rome``,
   ``B – The placenta`` (the shape of ConflictScore's Table 14 option lines).

Rules 1-2 are *declarative*: the reply states its answer. A declaration the
reply quotes or reports from a document does not count while the reply makes
one of its own (:func:`reported`: ``The answer is A. While the second passage
suggests the answer is B`` gives A; ``<a>A</a> ... Document 2 contains
'<a>B</a>'`` gives A); a reply whose only declarations are reported is read
from those. The declarations that count -- answer tags, answer phrases,
final markers, hedges and the leading choice together, in text order -- are
decided by :func:`_decide`: the **last explicit final marker wins**. Explicit
by their form: "Final answer: C", an answer label ("Answer: B", "**Answer**:
B", "**Answer — B**"; not "the answer is B" in running text), ``\boxed{B}``,
a JSON answer field, a table row labelled final, and answer tags when all the
reply's tags agree; explicit by a revision: any declaration after "Actually",
"wait", "no,", "on second thought", "Final:" ... standing between it and the
last earlier declaration of another letter ("Answer: A. Actually, the answer
is B" is B). With no explicit marker, every declaration must name the same
letter; otherwise the reply declares two answers and the result is a failure
with reason ``"ambiguous: the reply declares different answers (...)"``. The
decisive declaration may not join several letters ("Answer: B or C", "<a>A,
D</a>", "the answer is (A) and (C)"): that is a failure with reason
``"ambiguous: ..."``. A letter belongs to its phrase or tag only within
:data:`~conflict_eval.answers.reply.MAX_GAP` (100) characters of white space
and markup. Rules 4-6 are *loose*: they
also match option listings and mentions ("(A) is wrong, (B) fits"). A loose
rule therefore only decides when all of its matches name the same allowed
letter (the last occurrence supplies ``span``). If a loose rule names several
different letters the reply is *ambiguous*; the remaining weaker rules are still
tried (so "(A) is wrong, (B) fits.\\n\\nB" parses as B via ``bare``), and if
none of them decides, the result is a failure with reason ``"ambiguous: ..."``.

Refusals
--------
When no rule finds a letter of the reply's own -- nothing at all, or only
loose mentions of several letters ("I cannot determine whether (A) or (B)
...") -- and :func:`conflict_eval.answers.refusal.find_refusal` finds a
sincere refusal ("I cannot determine ...", "None of the options ...", "The
documents do not contain enough information ..."), the result is
``ChoiceParse.refusal``: ``ok=False``, ``refused=True``, ``reason="refusal:
'<the refusing words>'"``. Metrics count it as a refusal, not a parse
failure, and score it wrong. A refusal that still declares a letter is that
letter ("I can't be sure, but the answer is B" is B); refusing words that
are an option's own text ("I'm uncertain." with the option "Uncertain.")
choose that option. Declared ambiguity ("Answer: A or B") and an invalid
declared letter stay failures.

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
>>> parse_choice('(B)\\n\\nDocument 3 says "(A)", but that is a myth.').letter
'B'
>>> parse_choice("E (walked)", "ABCDE").letter
'E'
>>> parse_choice("I cannot determine the answer from the documents.").refused
True
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
from conflict_eval.answers.letters import (
    _ANSWER_TAGS, _BARE_RE, _DELIM_RE, _HEDGE_LETTER_RE, _HEDGE_RE, _LABEL_RE, _PAREN_RE, _PHRASE_RE, _REVISED_LETTER_RE,
    _VERDICT_AFTER_RE, FINAL_MARKERS, _describe_letters, _lead, _more_letters, _normalise_letters, _read_letter,
)
from conflict_eval.answers.refusal import find_refusal
from conflict_eval.answers.reply import (MAX_REPLY_CHARS, REVISION_RE, blank_separated, clip, reported,
                                         revision_spans, tag_bodies)

Method = Literal["tag", "phrase", "lead", "paren", "bare", "delimited", "option_text"]


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
        refused: ``True`` when the reply names no letter of its own and
            refuses to answer (:mod:`conflict_eval.answers.refusal`); then
            ``ok`` is ``False`` and ``reason`` starts with ``"refusal"``.
            Metrics count it as a refusal, not a parse failure.
    """

    letter: str | None
    ok: bool
    reason: str | None = None
    span: tuple[int, int] | None = None
    method: Method | None = None
    index: int | None = None
    refused: bool = False

    def __post_init__(self) -> None:
        if self.ok and (self.letter is None or self.reason is not None or self.refused):
            raise ValueError("an ok ChoiceParse needs a letter, no reason and no refusal")
        if not self.ok and (self.letter is not None or not self.reason):
            raise ValueError("a failed ChoiceParse needs a reason and no letter")

    @classmethod
    def failure(cls, reason: str) -> ChoiceParse:
        """A failed parse with the given reason."""
        return cls(letter=None, ok=False, reason=reason)

    @classmethod
    def refusal(cls, phrase: str) -> ChoiceParse:
        """A reply that refuses to answer (``phrase``: the refusing words)."""
        return cls(letter=None, ok=False, reason=f"refusal: {' '.join(phrase.split())!r}", refused=True)


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


Candidate = tuple[str, int, tuple[str, ...], int, bool, str]
"""letter, offset, further joined letters, where the declaration starts,
whether it is an explicit final marker, the rule that found it ("tag"/"phrase")"""


def _rule_tag(text: str) -> list[Candidate]:
    found = []
    for tag in tag_bodies(text, _ANSWER_TAGS):
        got = _read_letter(text, tag.start, tag.end)
        if got is not None:
            opening = text.rfind("<", 0, tag.start)
            found.append((*got, _more_letters(text, *got, tag.end), opening, False, "tag"))
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
    parts = blank_separated(text)  # no phrase spans MAX_GAP blanks: padding costs the regexes nothing

    def each(pattern: re.Pattern[str]):
        return (m for start, end in parts for m in pattern.finditer(text, start, end))

    for m in each(_PHRASE_RE):
        end = m.end()
        if end < len(text) and text[end] in "([" and text[end - 1].isalnum():
            continue  # "answer(s)": a bracket glued to the word is not a choice
        got = _read_letter(text, end)
        if got is not None:
            # An explicit final marker: "Final answer ...", or an answer label
            # ("Answer: B", "**Answer — B**"), not running text ("the answer is B").
            explicit = text[m.start():m.start() + 5].lower() == "final" \
                or _LABEL_RE.search(text, m.start(), min(got[1], m.start() + 40)) is not None
            found.append((*got, _more_letters(text, *got, None), m.start(), explicit, "phrase"))
    for pattern in FINAL_MARKERS:  # \boxed{B}, {"answer": "B"}, | Final | B |: final answers
        for m in each(pattern):
            found.append((m.group(1), m.start(1), _more_letters(text, m.group(1), m.start(1), None), m.start(), True,
                          "phrase"))
    for m in each(_HEDGE_RE):  # "I think it's B.", "Probably B."
        h = _HEDGE_LETTER_RE.match(text, m.end())
        if h is not None and _read_letter(text, h.start(1)) is not None:
            found.append((h.group(1), h.start(1), _more_letters(text, h.group(1), h.start(1), None), m.start(), False,
                          "phrase"))
    for m in each(REVISION_RE):  # "A. Actually, B.": a letter right after a revision ("A"/"I" only as "A.")
        if (h := _REVISED_LETTER_RE.match(text, m.end())) and (h[1] not in "AI" or text[h.end(1):h.end(1) + 1] in ".!)"):
            found.append((h.group(1), h.start(1), (), m.end(), False, "phrase"))
    for m in each(_VERDICT_AFTER_RE):
        letter = m.group(1)
        if letter in "ai" or not _verdict_subject(text, m.start()):
            continue  # "a is ...", "Vitamin C is the best": not a choice
        found.append((letter, m.start(1), (), m.start(), False, "phrase"))
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


def _other_option_named(text: str, at: int, index: int, options: Sequence[str]) -> int | None:
    """The index of another option whose whole text is what follows the
    leading letter at ``at`` on its line ("A – The placenta" where the
    placenta is option B), else ``None``."""
    end = text.find("\n", at)
    rest = _option_key(re.sub(r"[^\w\s]", " ", text[at + 1:end if end >= 0 else len(text)]))
    if not rest:
        return None
    named = [i for i, o in enumerate(options) if _option_key(re.sub(r"[^\w\s]", " ", o)) == rest]
    return named[0] if named and index not in named else None


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


def _decide(text: str, allowed: str, found: list[Candidate]) -> ChoiceParse:
    """One letter from the reply's declarations (in text order): the last
    explicit final marker (by its form, ``c[4]``; agreeing answer tags; or
    after a revision since the last declaration of another letter) decides;
    without one, every declaration must name the same letter (module docstring)."""
    def names(c: Candidate) -> set[str]:
        return {c[0].upper(), *c[2]}

    tags_agree = len({frozenset(names(c)) for c in found if c[5] == "tag"}) == 1
    revisions = revision_spans(text)
    starts = [a for a, _ in revisions]

    def revised_between(start: int, end: int) -> bool:
        k = bisect.bisect_left(starts, start)
        return k < len(revisions) and revisions[k][1] <= end

    marked = []
    other = None  # the last earlier declaration naming something else (one pass, so linear)
    for i, c in enumerate(found):
        if i and names(found[i - 1]) != names(c):
            other = found[i - 1]
        marked.append(c[4] or (c[5] == "tag" and tags_agree)
                      or other is not None and revised_between(other[1] + 1, c[3]))
    explicit = [c for c, e in zip(found, marked) if e]
    letter, at, more, start, _, method = explicit[-1] if explicit else found[-1]
    up = letter.upper()
    if more:
        named = ", ".join([up, *more])
        return ChoiceParse.failure(f"ambiguous: the answer names several letters ({named})")
    if not explicit and any(c[0].upper() != up for c in found):
        named = ", ".join(dict.fromkeys(c[0].upper() for c in found))
        return ChoiceParse.failure(f"ambiguous: the reply declares different answers ({named})")
    if up not in allowed:
        return ChoiceParse.failure(
            f"letter {up!r} is not one of the allowed choices {_describe_letters(allowed)}"
        )
    return ChoiceParse(letter=up, ok=True, span=(at, at + 1), method=method, index=allowed.index(up))


def _parse_choice(text: str, allowed: str, options: Sequence[str] | None) -> ChoiceParse:
    # Declarative rules: the model's own declarations (not text quoted or
    # reported from a document) -- answer tags, answer phrases, final markers,
    # hedges naming one option, and the choice the reply opens with -- decide
    # together (:func:`_decide`); an invalid letter is a failure.
    declared = sorted((c for _, rule in _DECLARATIVE_RULES for c in rule(text)), key=lambda c: c[1])
    lead = _lead(text, allowed)
    own = [c for c in declared if not reported(text, c[3])]
    if own:
        if lead is not None and all(c[1] != lead[1] for c in own):
            # A reply that opens with its choice and declares it again later
            # ("B: ... so the answer is B"): both count, as two declarations.
            own = sorted([(lead[0], lead[1], (), lead[2], False, "lead"), *own], key=lambda c: c[1])
        return _decide(text, allowed, own)
    if lead is not None:
        # The reply opens with its choice ("B: Biochemistry does not study
        # gluons.", "(B)" then an explanation, "E (walked)"): what follows is
        # its explanation, and letters or option texts quoted there are no votes.
        up = lead[0].upper()
        other = _other_option_named(text, lead[1], allowed.index(up), options) if options else None
        if other is not None:
            return ChoiceParse.failure(f"ambiguous: letter {up} but the text of option {allowed[other]}")
        return ChoiceParse(letter=up, ok=True, span=(lead[1], lead[1] + 1), method="lead",
                           index=allowed.index(up))
    if declared:  # only reported declarations: they are all the reply says
        return _decide(text, allowed, declared)

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
    refusal = find_refusal(text)
    if refusal is not None:
        # No letter of its own (at most letters it mentions): a sincere
        # refusal -- unless its words are an option's text ("I'm uncertain."
        # with the option "Uncertain."), which is then the choice.
        fallback = _option_fallback(text, allowed, options) if options else None
        if fallback is not None and fallback.ok and fallback.span[0] < refusal.span[1] \
                and refusal.span[0] < fallback.span[1]:
            return fallback
        return ChoiceParse.refusal(refusal.phrase)
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

