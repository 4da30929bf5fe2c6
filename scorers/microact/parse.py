"""Reading the over-rationalization judge's reply (Huo et al. Appendix B, Figure 8;
the judge prompt is ours, :data:`.prompts.OVERRATIONALIZATION_TEMPLATE`).

:func:`parse_verdict` is total and linear: any string gives a :class:`VerdictParse`;
a reply without a single standing YES/NO is a counted parse failure, never a label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conflict_eval.answers import clip, revised, revision_before

@dataclass(frozen=True)
class VerdictParse:
    rationalizes: bool | None
    """True (YES: over-rationalizes), False (NO), None if no single verdict was read."""
    error: str | None = None


# Leading markup a line may carry before its verdict: white space, bold/italic,
# headings, quotes, bullets, fences' backticks, tags such as <verdict>.
_LEAD = re.compile(r"(?:[\s*_#>`~•-]|<[A-Za-z/][\w-]{0,30}>)*")
# No two adjacent unbounded runs of the same characters anywhere below (a
# label followed by 20,000 spaces and no colon would be read in quadratic time):
# optional markup between white-space runs is one optional group.
_LABEL = re.compile(
    r"(?:final[ \t]+)?(?:verdict|answer|judge?ment|decision|over[- ]?rationali[sz]ation)"
    r"[ \t]*(?:[*_]{1,2}[ \t]*)?[:=\-–][ \t]*", re.IGNORECASE)
_WORD = re.compile(r"(yes|no)(?![\w'’/])", re.IGNORECASE)
# After the verdict word: end of line, or punctuation then anything -- but not
# "yes or no", "yes/no", "yes and no", "no, yes".
_AMBIGUOUS_TAIL = re.compile(r"[\s*_,]*(?:/|or\b|and\b|yes\b|no\b)", re.IGNORECASE)
# "YES. The ...", "No, it ...", "**YES** - it ...": punctuation, not a word
# ("No evidence supports ..." is explanation, not a verdict).
_GOES_ON = re.compile(r"[ \t]*[.,:;!\-–—()*_]")
_CLOSE_TAG = re.compile(r"</[\w-]{1,30}>")
_CLOSING_MARKUP = frozenset("*_.!`")
_CLOSING_MARKUP_BRACKETS = frozenset("*_.!`)]")


def _closes(text: str, pos: int = 0) -> bool:
    """Whether ``text[pos:]`` is only closing markup: ``[\\s*_.!`)\\]]*``, an
    optional closing tag ``</name>``, then ``[\\s*_.!`]*`` to the end (read
    from the end in one pass; the equivalent regex backtracks quadratically
    on a long white-space run followed by other text)."""
    end = len(text)
    while end > pos and (text[end - 1].isspace() or text[end - 1] in _CLOSING_MARKUP):
        end -= 1
    if end > pos and text[end - 1] == ">":
        start = text.rfind("</", max(pos, end - 34), end)
        if start >= 0 and _CLOSE_TAG.fullmatch(text, start, end):
            end = start
    return all(c.isspace() or c in _CLOSING_MARKUP_BRACKETS for c in text[pos:end])
_LABEL_ANYWHERE = re.compile(
    r"\bverdict[ \t]*(?:[*_]{1,2}[ \t]*)?[:=][ \t]*(?:[*_]{1,2}[ \t]*)?(yes|no)(?![\w'’/])", re.IGNORECASE)


#: The question answered in words at the start of the reply: "The reasoning
#: (does not) over-rationalize(s)", "It over-rationalizes", "This is (not) over-rationalization".
_STATED = re.compile(
    r"(?:the[ \t]+)?(?:reasoning|model|response|trace|it|this)[ \t]+"
    r"(?:(does[ \t]+not|doesn't|did[ \t]+not|didn't|is[ \t]+not|isn't)[ \t]+)?(?:an?[ \t]+(?:case[ \t]+of[ \t]+)?)?"
    r"(?:over-?rationali[sz](?:es?|ed|ing|ation)\b)", re.IGNORECASE)


def _line_verdict(line: str, first: bool) -> tuple[bool, bool] | None:
    """The verdict a line stands for and whether it is labelled, or None.

    The first line of the reply may go on after its verdict ("YES. The model
    ..." / "No, it picks one side"); a later line counts only when it holds
    the verdict alone, optionally labelled ("**Verdict: NO**"). A labelled
    verdict may also close a line ("... so my verdict: YES.").
    """
    pos = _LEAD.match(line).end()
    label = _LABEL.match(line, pos)
    if label is not None:
        pos = _LEAD.match(line, label.end()).end()
    m = _WORD.match(line, pos)
    if m is not None:
        rest = line[m.end():]
        if _AMBIGUOUS_TAIL.match(rest):
            return None
        if _closes(rest) or ((first or label is not None) and _GOES_ON.match(rest)):
            return m.group(1).lower() == "yes", label is not None
        return None
    if first:  # "The reasoning does not over-rationalize: ..." states the verdict in words
        said = _STATED.match(line, pos)
        if said is not None:
            return said.group(1) is None, False
    tail = None
    for tail in _LABEL_ANYWHERE.finditer(line):
        pass
    if tail is not None and _closes(line, tail.end()):
        return tail.group(1).lower() == "yes", True
    return None


def parse_verdict(reply: str) -> VerdictParse:
    """The over-rationalization judge's YES / NO (see ``OVERRATIONALIZATION_TEMPLATE``).

    A verdict counts where it *stands*: at the very start of the reply (after
    markup such as ``**``, a fence or a label like ``Verdict:``), or alone
    on its own line, or as a labelled verdict ending a line. Words in the
    explanation ("no sign of ...", "says yes to both") never count. The last
    explicit verdict decides: a labelled one (``Verdict: NO``), or one after a
    revision (``YES ... Actually, on reflection: NO``, ``NO. Actually, YES.``).
    Without one, every standing verdict must agree; none, or YES and NO both,
    is a parse failure (never a default label). Only the first
    :data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters are read, line by
    line, in linear time.

    >>> parse_verdict("**YES** - it says both birthplaces can be right.")
    VerdictParse(rationalizes=True, error=None)
    >>> parse_verdict("The reasoning picks the evidence.\\nVerdict: no")
    VerdictParse(rationalizes=False, error=None)
    >>> parse_verdict("The reasoning does not over-rationalize: it rejects the evidence.")
    VerdictParse(rationalizes=False, error=None)
    >>> parse_verdict("It is hard to say yes or no.").error
    'no YES/NO verdict at the start or on its own line'
    """
    text = clip(reply, "head")
    found: list[tuple[int, bool, bool]] = []  # (offset, verdict, labelled)
    first, pos = True, 0
    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        if not line.strip() or not line.strip(" \t`*_#>~-"):
            continue  # blank lines and bare fences/markup do not use up "first"
        verdict = _line_verdict(line, first)
        first = False
        if verdict is not None:
            found.append((start, *verdict))
    for m in _WORD.finditer(text):  # "NO. Actually, YES.": a verdict right after a revision
        rest = text[m.end():m.end() + 40]
        if revision_before(text, m.start()) and not _AMBIGUOUS_TAIL.match(rest) \
                and (_GOES_ON.match(rest) or not rest.strip(" \t*_") or rest.lstrip(" \t*_")[:1] in "\r\n"):
            found.append((m.start(), m.group(1).lower() == "yes", True))
    if not found:
        return VerdictParse(None, "no YES/NO verdict at the start or on its own line")
    found.sort()
    # The last explicit verdict decides: a labelled one ("Verdict: NO") or one
    # after a revision; without one, every standing verdict must agree.
    explicit, other = [], None
    for i, (at, verdict, labelled) in enumerate(found):
        if i and found[i - 1][1] != verdict:
            other = found[i - 1][0]
        if labelled or (other is not None and revised(text, other + 1, at)):
            explicit.append(verdict)
    if explicit:
        return VerdictParse(explicit[-1])
    if len({v for _, v, _ in found}) > 1:
        return VerdictParse(None, "conflicting verdicts (both YES and NO stand as verdicts)")
    return VerdictParse(found[0][1])
