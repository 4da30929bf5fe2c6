"""Shared utilities for reading model replies: clipping, logging, answer tags, reported and revised answers, prefills.

``parse_choice`` lives next door in :mod:`conflict_eval.answers.choice`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

# Reading model replies safely (shared by every parser of model output)

MAX_REPLY_CHARS = 20_000
"""How much of a reply a parser reads. A reply is never longer than a few
thousand characters at the usual token limits (512 new tokens is about 2,500
characters); a longer one is runaway output, and reading only this much keeps
every parser's time bounded whatever the model writes. Each parser says in its
docstring which end of an over-long reply it keeps."""


MAX_GAP = 100
"""How far (in white space and markup) an answer may stand from the marker
that declares it (an answer phrase, an unclosed ``<a>``, ``Final answer:``):
``Answer:\n\n**B**`` is B, but a letter after a run of hundreds of blank
characters is not the marker's answer. The bound also keeps a marker followed
by 2,000 or by 20,000 spaces (then a letter) on one reading path, so a reader's
time grows linearly there too."""


_BLANK_RUN = re.compile(rf"[ \t\r\n]{{{MAX_GAP},}}")


def blank_separated(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the parts of ``text`` between runs of at least
    :data:`MAX_GAP` blank characters (no phrase spans such a run). A reader
    runs a costly many-branch regex over these parts only, so a reply padded
    with 20,000 spaces costs it next to nothing.

    >>> blank_separated("a" + " " * 200 + "b")
    [(0, 1), (201, 202)]
    """
    parts, pos = [], 0
    for m in _BLANK_RUN.finditer(text):
        if m.start() > pos:
            parts.append((pos, m.start()))
        pos = m.end()
    if pos < len(text):
        parts.append((pos, len(text)))
    return parts


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
    r"(?=[acfimnorstuw])"  # the letters a match starts with (tests/test_regex_lookaheads.py)
    r"\b(?:actually|wait|no[,.!:;]|correction|scratch[ \t]+that|on[ \t]+(?:second[ \t]+thought|reflection)"
    r"|upon[ \t]+(?:reflection|review)|(?:I[ \t]+was|that[ \t]+is|that['’]s|this[ \t]+is)[ \t]+(?:wrong|incorrect)"
    r"|mistake|reconsider\w*|re-?reading|correcting|I[ \t]+revise|revis(?:ed|ing)[ \t]+(?:my[ \t]+)?answer"
    r"|final[ \t]*:)",
    re.IGNORECASE,
)


def revised(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` revises an earlier declaration ("Actually",
    "wait", "no,", "on second thought", "that is wrong", ...).

    >>> revised("Answer: A. Actually, the answer is B", 9, 22), revised("Answer: A. The answer is B", 9, 15)
    (True, False)
    """
    return _REVISION_RE.search(text, start, max(start, end)) is not None


REVISION_RE = _REVISION_RE
"""The words by which a reply revises an earlier declaration (:func:`revised`)."""


def revision_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every revision (:func:`revised`) in ``text``, in
    order: one scan, for a reader that asks about many ranges.

    >>> revision_spans("A. Actually, B. No, C.")
    [(3, 11), (16, 19)]
    """
    return [m.span() for m in _REVISION_RE.finditer(text)]


_REVISION_JUST_BEFORE = re.compile(
    rf"(?:{_REVISION_RE.pattern})[ \t,:;.!?—–*_\"'()-]*(?:it[ \t]+|it['’]s[ \t]+|it[ \t]+is[ \t]+)?$", re.IGNORECASE)


def revision_before(text: str, pos: int) -> bool:
    """Whether a revision ("Actually,", "no,", "on second thought,",
    "Final:") stands right before ``pos``, with at most punctuation, markup
    and "it"/"it's" between: ``SUPPORTS. Actually, CONTRADICTS`` revises to
    the word at ``pos``. Looks 40 characters back at most.

    >>> text = "SUPPORTS. Actually, CONTRADICTS"
    >>> revision_before(text, text.index("CONTRA")), revision_before(text, 0)
    (True, False)
    """
    return _REVISION_JUST_BEFORE.search(text, max(0, pos - 40), pos) is not None


def _says(text: str, tag: Tag) -> str:
    return tag.body(text).strip().strip("()[].*_ ").casefold()


def revised_tag(text: str, tags: Sequence[Tag]) -> Tag | None:
    """The answer tag that counts among ``tags`` (closed tags of ``text``, in
    order): the first, or a later one with another answer that comes after a
    revision (:func:`revised`: "actually", "on second thought", "Final:")
    standing between it and the tag before it. ``None`` when two tags give
    different answers with no revision between them (ambiguous: never a pick).

    >>> text = "<a>A</a> no, <a>C</a>"
    >>> revised_tag(text, tag_bodies(text, "a")).body(text)
    'C'
    >>> revised_tag("<a>A</a> and <a>C</a>", tag_bodies("<a>A</a> and <a>C</a>", "a")) is None
    True
    """
    tags = [t for t in tags if _says(text, t).strip(".…")] or list(tags[:1])  # "<a>...</a>": the template, echoed
    chosen = tags[0]
    for prev, tag in zip(tags, tags[1:]):
        if _says(text, tag) != _says(text, chosen):
            if not revised(text, prev.stop, tag.start):
                return None
            chosen = tag
    return chosen


#: Where a reply that continues a few-shot pattern starts inventing the next
#: example (the End-to-End and Few-Shot prompts' own example openings).
_INVENTED = re.compile(r"^[ \t]*(?:(?:Evidence|Question|Input)[ \t]*:|According[ \t]+to[ \t]+the[ \t]+evidence"
                       r"[ \t]+provided\b)", re.IGNORECASE | re.MULTILINE)


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


_A_RUN = re.compile(r"<a[ \t\r\n]*>(?:[ \t]*<a>)*", re.IGNORECASE)


def first_tagged_answer(reply: str) -> tuple[str | None, str | None]:
    """The answer segment ``<a>...</a>`` of a reply to a prefilled prompt.

    Returns ``(segment, None)`` or ``(None, reason)``. The **first** closed tag
    counts: a model that goes on to invent further examples writes more tags
    after its answer. A tag the reply quotes from a document (``Document 2
    contains '<a>B</a>'``, see :func:`reported`) does not count while the
    reply has a tag of its own. A reply that opens ``<a>`` but never closes it (small
    models often stop after "C. Great Britain"; a chat reply cut at the token
    limit stops after "The final answer is: <a>A") is read from that ``<a>``
    on (to the end of its own answer, see below). No tag, or an empty answer, is a failure. Only
    the first :data:`MAX_REPLY_CHARS` characters are read. A later tag counts
    instead when the reply revises its answer before it ("Actually, wait",
    "on second thought", "Final:"; :func:`revised_tag`).

    >>> first_tagged_answer("<a>B</a>\\n\\nEvidence: ... <a>C</a>")
    ('<a>B</a>', None)
    >>> first_tagged_answer("<a>C. Great Britain\\nEvidence: an invented example")
    ('<a>C. Great Britain</a>', None)
    >>> first_tagged_answer("The final answer is: <a>A")
    ('<a>A</a>', None)
    >>> first_tagged_answer("<a>D</a> Actually, wait: the date rules it out. <a>E</a>")
    ('<a>E</a>', None)
    >>> first_tagged_answer("I think B")
    (None, 'no <a>...</a> answer')
    """
    reply = clip(reply, "head")
    tags = tag_bodies(reply, "a")
    opened = _PREFILL_TAGS["<a>"].search(reply)
    after = tags[0].stop if tags else opened.end() if opened is not None else 0
    invented = _INVENTED.search(reply, after)
    if invented is not None:  # the reply goes on inventing examples: only its own answer counts
        reply = reply[:invented.start()]
        tags = [t for t in tags if t.stop <= invented.start()]
    if not tags:
        if "</a>" in reply.lower() or opened is None:
            return None, "no <a>...</a> answer"
        start = _A_RUN.match(reply, opened.start()).end()  # "<a><a><a>...": read after the last
        body = reply[start:start + MAX_GAP + 1].lstrip() and reply[start:].strip()
        if not body:  # nothing, or nothing within MAX_GAP characters of the tag
            return None, "no <a>...</a> answer"
        return f"<a>{body}</a>", None
    own = [t for t in tags if not reported(reply, reply.rfind("<", 0, t.start))] or tags[:1]
    first = revised_tag(reply, own)
    if first is None:
        return None, "ambiguous: answer tags differ with no revision between them"
    body = first.body(reply)
    if not body.strip():
        return None, "empty <a></a> answer"
    return f"<a>{body.strip()}</a>", None
