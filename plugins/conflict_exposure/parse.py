"""Parsing of Conflict Exposure model replies (pure functions).

Triplets (Algorithm 2 line 6, "a regular parsing process to find all items
that contains three elements"): an *item* is a bracketed group, ``( ... )``
or ``[ ... ]``, whose comma-separated top-level elements are not all
bracketed groups themselves; a group whose elements are all groups (the
outer list ``[(...), (...)]``, or a doubly wrapped ``((a, b, c))``) is a
container and its groups are read instead. Commas inside quotes or nested
brackets do not split elements; elements lose surrounding white space and
quotes. Items with exactly three non-empty elements are kept.

Names have commas in them (``Katri, Girl of the Meadows``, ``Great Eastern
Conventions, Inc.``, ``Greenwich Village, New York City``, ``January 22,
1965``) and models copy the prompt's unquoted example, so an item of more
than three non-empty elements is split around its **relation**: the first
element after the first one (and before the last one) that is a relation
phrase, i.e.

* one of the known relations: those of the reply's own three-element items
  and, for the detection step, those of the prompt's relations list; or
* an element that starts with a lower-case letter, in a reply that writes
  its relations in lower case (the prompt's ``relationship1``; every
  three-element item of the reply has a relation starting in lower case, or
  it has none). Names start with a capital or a digit.

The elements before the relation are the subject, those after it the
object, joined as written (``1,500`` stays ``1,500``):
``(Katri, Girl of the Meadows, is, anime series)`` gives ("Katri, Girl of the
Meadows", "is", "anime series"); ``(X, born on, January 22, 1965)`` gives
("X", "born on", "January 22, 1965"). Such items are listed in
``recovered`` as well. An item with no relation element
(``(Katri, Girl of the Meadows, Is, Anime Series)``, or an item of a reply
that capitalises its relations and whose relation is not a known one)
cannot be split unambiguously: it is rejected and counted, never guessed.
Every other item (fewer than three elements, an empty element) is counted as
rejected too, with its element count. A placeholder item that restates the
requested format rather than a fact (``(subject, predicate, object)``,
``(entityA, relationship1, entityB)``) is not a relation either: it is
listed in ``ignored``, not counted as rejected. An empty list ``[]`` is no
item (the natural "no conflicts" reply). Text outside brackets is ignored.

Every parser here takes any string and never raises. Time is linear in the
reply: only the first :data:`~conflict_eval.answers.MAX_REPLY_CHARS`
characters are read, bracket groups are found in one pass with an explicit
stack (no recursion, so 10,000 nested brackets are no RecursionError), and
containers are opened at most :data:`MAX_DEPTH` (4) levels deep (a group nested
deeper is rejected as an item, not read).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from conflict_eval.answers import clip
from conflict_eval.answers.text_metrics import fold_quotes

_OPEN = {"(": ")", "[": "]"}
_BRACKET = re.compile(r"[()\[\]]")
_QUOTES = "\"'“”‘’`"

Triplet = tuple[str, str, str]
MAX_DEPTH = 4
"""How many levels of containers (``[[(a, r, b)]]``) are opened."""


@dataclass
class _Group:
    start: int
    end: int  # index of the closing bracket
    content: str


def _top_groups(text: str) -> list[_Group]:
    """Balanced top-level bracket groups of ``text``, in order.

    A group still open at the end (a reply cut at the token limit, "[(a, r,
    b), (c, r") is re-read from just inside its opening bracket, so the
    complete groups in it count; at most :data:`MAX_DEPTH` times, which keeps
    10,000 unclosed brackets linear.
    """
    groups: list[_Group] = []
    pos, reopened = 0, 0
    while True:
        stack, start = [], -1
        for m in _BRACKET.finditer(text, pos):  # other characters change nothing: jump over them
            i, ch = m.start(), m.group()
            if ch in _OPEN:
                if not stack:
                    start = i
                stack.append(_OPEN[ch])
            elif stack and ch == stack[-1]:
                stack.pop()
                if not stack:
                    groups.append(_Group(start, i, text[start + 1 : i]))
            elif ch in ")]" and stack:
                stack = []  # mismatched bracket: abandon this group
        if not stack or reopened >= MAX_DEPTH:
            return groups
        pos, reopened = start + 1, reopened + 1


_SPECIAL = re.compile(r"[,()\[\]\"“]")
_NONSPACE = re.compile(r"\S")


def split_elements(content: str, strip: bool = True) -> list[str]:
    """Top-level comma-separated elements (commas in quotes or brackets do not split).

    A quote opens a quoted span only at the start of an element. Linear time
    (the scan jumps from one comma, bracket or quote to the next); the first
    :data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters are read.
    """
    content = clip(content, "head")
    parts: list[str] = []
    depth, start, pos = 0, 0, 0
    first_text = -1  # offset of the current element's first non-space character (-1: not looked up)
    while (m := _SPECIAL.search(content, pos)) is not None:
        i, ch = m.start(), m.group()
        pos = i + 1
        if ch in "\"“":
            if first_text < start:
                found = _NONSPACE.search(content, start)
                first_text = found.start() if found else len(content)
            if first_text == i:  # the element starts with a quote: skip to its end
                if ch == "\"":
                    close = content.find("\"", i + 1)
                else:
                    ends = [x for x in (content.find("“", i + 1), content.find("”", i + 1)) if x >= 0]
                    close = min(ends) if ends else -1
                if close < 0:
                    break
                pos = close + 1
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            if depth:
                depth -= 1
        elif depth == 0:  # a top-level comma
            parts.append(content[start:i])
            start, first_text = i + 1, -1
    parts.append(content[start:])
    return [p.strip() for p in parts] if strip else parts


def _as_groups(elements: list[str]) -> list[_Group] | None:
    """The groups, when every element is one bracketed group (a container);
    else None. One scan per element."""
    if not elements:
        return None
    out = []
    for e in elements:
        e = e.strip()
        if len(e) < 2 or e[0] not in _OPEN:
            return None
        groups = _top_groups(e)
        if len(groups) != 1 or groups[0].start != 0 or groups[0].end != len(e) - 1:
            return None
        out.append(groups[0])
    return out


def _clean(element: str) -> str:
    e = element.strip()
    while len(e) >= 2 and e[0] in _QUOTES and e[-1] in _QUOTES:
        e = e[1:-1].strip()
    return e.strip(_QUOTES).strip()


@dataclass
class TripletParse:
    triplets: list[Triplet] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    """Items not read as a triplet, e.g. ``"2 element(s): (a, b)"``."""
    recovered: list[Triplet] = field(default_factory=list)
    """Triplets recovered from items of more than three elements (also in ``triplets``)."""
    ignored: list[str] = field(default_factory=list)
    """Placeholder items that restate the requested format (not counted as rejected)."""
    empty_list: bool = False
    """The reply holds an empty list ``[]``."""

    @property
    def items(self) -> int:
        """Items seen: read (exact or recovered) plus rejected."""
        return len(self.triplets) + len(self.rejected)

    @property
    def reason(self) -> str | None:
        """Why nothing was kept (``None`` when a triplet was found)."""
        if self.triplets:
            return None
        return f"no 3-element item ({len(self.rejected)} rejected)" if self.rejected else "no bracketed item"


_PLACEHOLDER_RE = re.compile(
    r"(?:entity|subject|object|predicate|relation|relationship|head|tail|item|thing|value|attribute"
    r"|property|noun|verb|source|target|e|r|s|o|x|y|z)[ _-]?(?:[a-z]|\d{1,2})?", re.IGNORECASE)


def _is_placeholder(values: list[str]) -> bool:
    """``(subject, predicate, object)``, ``(entityA, relationship1, entityB)``: the format, not a fact."""
    return all(_PLACEHOLDER_RE.fullmatch(v) for v in values)


@dataclass
class _Long:
    """An item of more than three elements, split once the reply's relations are known."""

    elements: list[str]
    """Cleaned elements."""
    raw: list[str]
    """The same elements unstripped (to rejoin subject and object as written)."""
    content: str


def _rejoin(parts: list[str]) -> str:
    return ",".join(r[: len(r) - len(r.lstrip())] + _clean(r) for r in parts).strip()


def _relation_key(text: str) -> str:
    return " ".join(_clean(text).lower().split())


def _lower_case(text: str) -> bool:
    """Whether ``text`` starts with a lower-case letter."""
    return text[:1].isalpha() and text[:1].islower()


#: How relations are worded (the vocabulary that decides between two lower-case
#: elements): a verb phrase ending in a preposition ("written by", "based
#: in"), a copula or past-tense verb opening ("is", "was born"), or a property
#: noun of the knowledge graphs the datasets come from ("occupation", "instance of").
_RELATION_SHAPE = re.compile(
    r"(?:^|\s)(?:by|in|of|on|at|to|for|with|from|as|into|under|about|after)$"
    r"|^(?:is|was|are|were|has|had|have|became|won|created|wrote|founded|directed|produced|married)\b"
    r"|^(?:occupation|genre|country|nationality|citizenship|spouse|employer|author|director|composer|"
    r"performer|publisher|language|religion|sport|position|instance of|subclass of|part of|capital)$")


def _split_long(item: _Long, known: set[str], by_case: bool) -> Triplet | str:
    """(subject, relation, object) around the one element that can be the
    relation, or why the item cannot be split for certain: a known relation
    decides; without one, the one lower-case element (when the reply writes
    relations in lower case), or of several lower-case ones the one worded
    as a relation (:data:`_RELATION_SHAPE`: "written by" rather than "piika
    ja emäntä"). Still two candidates is ambiguous, never a pick ("(Paimen,
    piika ja emäntä, kirjoittaja, Auni Nuolivaara)": counted as rejected)."""
    values = item.elements
    inner = range(1, len(values) - 1)
    candidates = [r for r in inner if _relation_key(values[r]) in known]
    if not candidates and by_case:
        candidates = [r for r in inner if _lower_case(values[r])]
        shaped = [r for r in candidates if _RELATION_SHAPE.search(_relation_key(values[r]))]
        if len(candidates) > 1 and len(shaped) == 1:
            candidates = shaped  # only one of them is worded as a relation ("written by", "occupation")
    if len(candidates) == 1:
        r = candidates[0]
        return _rejoin(item.raw[:r]), values[r], _rejoin(item.raw[r + 1:])
    if candidates:
        return f"ambiguous split, relation one of {[values[r] for r in candidates]}"
    return "no relation element" if by_case else "no known relation (the reply capitalises relations)"


def _items(text: str, out: TripletParse) -> list[Triplet | _Long]:
    """Items of ``text`` in text order (rejected and ignored ones go into
    ``out``); containers are opened with an explicit stack (no recursion), at
    most :data:`MAX_DEPTH` levels deep."""
    found: list[Triplet | _Long] = []
    stack = [(iter(_top_groups(text)), 0)]  # depth-first, in text order
    while stack:
        groups, depth = stack[-1]
        g = next(groups, None)
        if g is None:
            stack.pop()
            continue
        if not g.content.strip():
            out.empty_list = True
            continue
        elements = split_elements(g.content)
        inner = _as_groups([e for e in elements if e])
        if inner is not None:
            if depth >= MAX_DEPTH:
                out.rejected.append(f"nested deeper than {MAX_DEPTH} levels: ({g.content.strip()[:80]})")
            else:
                stack.append((iter(inner), depth + 1))
            continue
        values = [_clean(e) for e in elements]
        if len(values) >= 3 and all(values) and _is_placeholder(values):
            out.ignored.append(f"placeholder, not a relation: ({g.content.strip()[:80]})")
        elif len(values) == 3 and all(values):
            found.append((values[0], values[1], values[2]))
        elif len(values) > 3 and all(values):
            found.append(_Long(values, split_elements(g.content, strip=False), g.content.strip()[:80]))
        else:
            n = len([v for v in values if v])
            out.rejected.append(f"{n} element(s): ({g.content.strip()[:80]})")
    return found


def parse_triplets(text: str, relations: Iterable[str] = ()) -> TripletParse:
    """Every triplet of a reply, in order, and the rejected items.

    ``relations``: relation phrases known beforehand (the detection step
    passes the relations of the list in its prompt); see the module
    docstring for how they split items of more than three elements.

    >>> parse_triplets('Here: [(Paris, capital of, France), (a, b)]').triplets
    [('Paris', 'capital of', 'France')]
    >>> parse_triplets('[("Smith, John", "born in", "1950")]').triplets
    [('Smith, John', 'born in', '1950')]
    >>> parse_triplets('[(Adriana Trigiani, based in, Greenwich Village, New York City)]').recovered
    [('Adriana Trigiani', 'based in', 'Greenwich Village, New York City')]
    >>> parse_triplets('[(Katri, Girl of the Meadows, is, anime series)]').triplets
    [('Katri, Girl of the Meadows', 'is', 'anime series')]
    >>> parse_triplets('[(Katri, Girl of the Meadows, Is, Anime Series)]').rejected
    ['no relation element among 4 elements: (Katri, Girl of the Meadows, Is, Anime Series)']
    """
    out = TripletParse()
    found = _items(clip(text or "", "head"), out)
    exact = [t for t in found if isinstance(t, tuple)]
    known = {_relation_key(r) for r in relations if isinstance(r, str)} | {_relation_key(t[1]) for t in exact}
    known.discard("")
    by_case = not any(t[1][:1].isalpha() and not _lower_case(t[1]) for t in exact)
    for item in found:
        if isinstance(item, tuple):
            out.triplets.append(item)
            continue
        triplet = _split_long(item, known, by_case)
        if isinstance(triplet, str):
            out.rejected.append(f"{triplet} among {len(item.elements)} elements: ({item.content})")
        else:
            out.triplets.append(triplet)
            out.recovered.append(triplet)
    return out


_NO_CONFLICT_RE = re.compile(
    r"^\W*(?:none|nothing|n/a)\W*$"
    r"|\b(?:no|none of (?:the|these|those|them)|not any|zero|without|free of|cannot find any|could not find any"
    r"|did not find any|didn't find any|don't see any|do not see any|there are no|there is no|found no)\b"
    r"[^.\n]{0,40}?\b(?:conflict|contradict|inconsisten|discrepanc)"
    r"|\b(?:do|does|did) not (?:conflict|contradict)|\b(?:don't|doesn't|didn't) (?:conflict|contradict)",
    re.IGNORECASE)


#: After a "no conflicts" statement, an exception turns it into a conflict report.
_EXCEPTION_RE = re.compile(r"\b(?:except|apart from|other than|besides|save for|exception|the only conflict"
                           r"|one conflict|only one)\b", re.IGNORECASE)
_LINE_LEAD = " \t*_`>-•+0123456789.)"
#: A note after an explicit "[]" names a conflict only with one of these words
#: (outside a "no conflicts" phrase): quoting a relation as agreeing does not.
_CONFLICT_WORD_RE = re.compile(r"conflict|contradict|inconsisten|discrepan|disagree|clash", re.IGNORECASE)


def _listed(text: str, g: _Group) -> bool:
    """Whether a bracket group is given as an answer: a ``[...]`` list, or a
    group that starts its line (after markup or a list marker), not a
    parenthesis inside a sentence."""
    if text[g.start] == "[":
        return True
    i = g.start - 1
    while i >= 0 and g.start - i <= 12 and text[i] in _LINE_LEAD:
        i -= 1
    return i < 0 or text[i] in "\r\n"


def says_no_conflicts(reply: str, parsed: TripletParse) -> bool:
    """Whether a detection reply (Appendix C) says there are no conflicts.

    * an empty list ``[]`` and no item; or
    * an explicit empty list ``[]`` first, then a note that names no conflict
      (a note quoting a relation as agreeing, "(Paris, capital of, France)
      agrees in every document", is still no conflicts; "... but (A, born
      in, 1950) conflicts with ..." is not); or
    * a "no conflicts" statement in prose ("There are no conflicting
      relations.", "I don't see any relations that contradict each other")
      with no exception to it ("except", "apart from", "the only conflict",
      ...), where every bracket group of the reply is a parenthesis inside a
      sentence, not an answer: "There are no conflicting relations; they are
      about different schools (Westminster School, Concho Elementary, Grace
      Church School and Grennaskolan)" means no conflicts. A group given as
      an answer (a ``[...]`` list, or a group that starts its line) is a
      conflict report whatever the prose says.

    >>> says_no_conflicts("[]", parse_triplets("[]"))
    True
    >>> r = "[]\\n\\nNote: (Paris, capital of, France) agrees across documents."
    >>> says_no_conflicts(r, parse_triplets(r))
    True
    >>> says_no_conflicts("There are no conflicting relations.", parse_triplets("There are no conflicting relations."))
    True
    >>> r = "There are no conflicting relations: the schools (Westminster School, Concho, Grace Church School) differ."
    >>> says_no_conflicts(r, parse_triplets(r))
    True
    >>> r = "There are no conflicting relations except these: [(A, born in, 1950), (A, born in, 1951)]"
    >>> says_no_conflicts(r, parse_triplets(r))
    False
    """
    text = fold_quotes(clip(reply or "", "head"))
    groups = _top_groups(text)
    if groups and text[groups[0].start] == "[" and not groups[0].content.strip():
        # "[]" first, then a note: no conflicts, unless the note names one
        note = _NO_CONFLICT_RE.sub(" ", text[groups[0].end + 1:])
        return not (_CONFLICT_WORD_RE.search(note) or _EXCEPTION_RE.search(note))
    if not parsed.triplets and not parsed.rejected:
        # a placeholder item alone ("(entityA, relationship1, entityB)") does not count
        return parsed.empty_list or bool(_NO_CONFLICT_RE.search(text))
    if not _NO_CONFLICT_RE.search(text) or _EXCEPTION_RE.search(text):
        return False
    return not any(_listed(text, g) for g in _top_groups(text) if g.content.strip())


def triplet_key(t: Triplet) -> tuple[str, str, str]:
    """Comparison key: lower case, white space collapsed, quotes and end punctuation dropped."""
    def norm(s: str) -> str:
        return " ".join(_clean(s).lower().split()).strip(".;:")
    return norm(t[0]), norm(t[1]), norm(t[2])


def format_triplets(triplets: list[Triplet]) -> str:
    """``[(a, r, b), (c, r, d)]`` -- the ``{relations_list}`` of Appendix C."""
    return "[" + ", ".join(f"({a}, {r}, {b})" for a, r, b in triplets) + "]"


@dataclass(frozen=True)
class QuestionList:
    questions: list[str]
    method: str | None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return bool(self.questions)


_LIST_MARK_RE = re.compile(r"(?:[-*•]|\d{1,6}[.)]|question[ \t]*\d{1,6}[ \t]*:)[ \t]*", re.IGNORECASE)


def _standalone(text: str, g: _Group) -> bool:
    """Whether the bracket group is alone on its line(s) (markup, code fences
    and a trailing full stop aside), i.e. not part of a sentence or heading."""
    i = g.start - 1
    while i >= 0 and text[i] in " \t*_`>:":
        i -= 1
    j = g.end + 1
    while j < len(text) and text[j] in " \t*_`.":
        j += 1
    return (i < 0 or text[i] in "\r\n") and (j >= len(text) or text[j] in "\r\n")


_QUESTION_END_RE = re.compile(r"(?<=\?)[\s\"'”’]*,")


def _list_items(content: str, cut: bool = False) -> list[str]:
    """The items of a sub-question list's content. Quoted items are split at
    the commas between quotes. The Appendix A prompt shows an *unquoted* list
    (``[question1, question2, question3]``), and questions have commas in them
    ("Who directed X, and when?"): when the items are not all quoted and the
    list has a ``?``, it is split after each ``?`` that a comma follows, never
    at a comma inside a question; a list without ``?`` is split at commas.
    ``cut``: the list was cut at the token limit, so its last item is dropped."""
    elements = [e for e in split_elements(content) if e]
    quoted = bool(elements) and all(e[0] in _QUOTES for e in elements)
    if not quoted and "?" in content:
        elements = [e.strip() for e in _QUESTION_END_RE.split(content)]
    if cut:
        elements = elements[:-1]
    return list(dict.fromkeys(i for i in (_clean(e) for e in elements) if i))


def parse_question_list(text: str) -> QuestionList:
    """Sub-questions from the Appendix A reply.

    The first ``[...]`` list that is really the answer gives the questions
    (:func:`_list_items`: an unquoted list is split after each ``?``, not at
    commas inside a question; quotes stripped, duplicates dropped): it must
    have two or more items, or
    an item ending in ``?``, or stand alone on its line. So a heading such as
    "Sub-questions for [Entity X]:" or a mention like "about [Paris]" is not
    read as a list. A list cut at the token limit (``["Q1?", "Q2?", "Q``)
    gives its complete items, ``method="truncated list"``. Without a list,
    lines ending in ``?`` (list markers
    and markdown bold removed) are taken, ``method="lines"``. Otherwise the
    reply is a parse failure. Total and linear; the first
    :data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters are read.

    >>> parse_question_list('["Who wrote X?", "When?"]').questions
    ['Who wrote X?', 'When?']
    >>> parse_question_list("1. Who is A?\\n2. Where is B?").method
    'lines'
    >>> parse_question_list("Sub-questions for [Entity X]:\\n1. Who is X?").questions
    ['Who is X?']
    >>> parse_question_list("[Who directed Jaws, and when?, Where was he born?]").questions
    ['Who directed Jaws, and when?', 'Where was he born?']
    """
    text = clip(text or "", "head")
    for g in _top_groups(text):
        if text[g.start] != "[":
            continue
        items = _list_items(g.content)
        if items and (len(items) > 1 or items[0].endswith("?") or _standalone(text, g)):
            return QuestionList(items, "list")
    opened = text.rfind("[")
    if opened >= 0 and "]" not in text[opened:]:
        # a list cut at the token limit: its complete items (the last one is cut)
        items = _list_items(text[opened + 1:], cut=True)
        if items:
            return QuestionList(items, "truncated list")
    lines = []
    for line in text.splitlines():
        line = line.strip().strip("*_").strip()
        m = _LIST_MARK_RE.match(line)
        if m is not None:
            line = line[m.end():]
        line = _clean(line.strip().strip("*_").strip())
        if line.endswith("?") and len(line) > 1:
            lines.append(line)
    lines = list(dict.fromkeys(lines))
    if lines:
        return QuestionList(lines, "lines")
    return QuestionList([], None, "no [..] list and no line ending in '?'" if text.strip() else "empty reply")
