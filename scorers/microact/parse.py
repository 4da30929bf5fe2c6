"""Pure parsing of Micro-Act model replies (each function tested on its own): the
method's (``plugins/microact``) and its over-rationalization judge's
(``scorers/microact/overrationalization.py``). One module for the paper, on the
scorer side because a scorer never imports a plugin.

* :func:`parse_turn` -- a main-loop reply: ``**Thought:** ... **Action:** <f>name(args)</f>``.
* :func:`parse_assert` -- the assert helper's ``<c>0|1</c> <p>confidence</p>``.
* :func:`parse_steps` -- numbered / bulleted lines of reason and decompose helpers.
* :func:`parse_verdict` -- the over-rationalization judge's YES / NO (Appendix B,
  Figure 8; the judge prompt is ours, :data:`.prompts.OVERRATIONALIZATION_TEMPLATE`).

Nothing here guesses: a reply that does not say what is needed yields an
``error`` string, which the solver turns into an observation (main loop) or a
counted helper parse failure; a judge reply without a single standing YES/NO
is a counted parse failure, never a label. Every reader is total and linear.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from conflict_eval.answers import clip, revised, revision_before

ACTIONS: dict[str, tuple[str, ...]] = {
    "knowledge_gen": ("target",),
    "reason": ("evidence",),
    "decompose": ("reasoning_step",),
    "assert": ("state_left", "state_right"),
    "terminate": (),
}
"""Every action of Figure 17 with its parameters, in order."""

EVIDENCE_VARIABLE = "given_evidence"
"""Figure 17 names the evidence ``given_evidence`` and calls ``reason(evidence=given_evidence)``;
this bare name is the one variable an action may use instead of a string."""

_F_OPEN = re.compile(r"<f>", re.IGNORECASE)
_F_CLOSE = re.compile(r"</f>", re.IGNORECASE)
_THOUGHT_WORD = re.compile(r"thought", re.IGNORECASE)
_ACTION_LABEL = re.compile(r"\baction[ \t]*(?::|\*\*)", re.IGNORECASE)
_ACTION_TAIL = re.compile(r"action[ \t]*:?[ \t]*$", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z_]\w{0,99}")
_PLACEHOLDER = {"", "...", "…"}
_MARKUP = "*:"
MAX_CALL_CHARS = 4_000
"""Longest action call read (argument strings included)."""

@dataclass(frozen=True)
class TurnParse:
    """One main-loop reply. ``error`` is set (and ``action`` is None) when the
    reply holds no single valid action."""

    thought: str
    action: str | None = None
    args: dict[str, str] = field(default_factory=dict)
    """Arguments by parameter name; ``given_evidence`` is kept as the marker
    ``EVIDENCE_VARIABLE`` for the solver to resolve."""
    call: str | None = None
    """The text inside ``<f>...</f>``."""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _f_calls(reply: str) -> list[str]:
    """Bodies of ``<f>...</f>``; an unclosed last ``<f>`` runs to the end (linear)."""
    calls, pos = [], 0
    while (m := _F_OPEN.search(reply, pos)) is not None:
        c = _F_CLOSE.search(reply, m.end())
        if c is None:
            calls.append(reply[m.end():])
            break
        calls.append(reply[m.end():c.start()])
        pos = c.end()
    return calls


def _thought(reply: str) -> str:
    """The text after the first "thought" label, up to an "Action:" label or
    ``<f>``; without a label, the text before the first ``<f>`` with a dangling
    "Action:" removed. Linear: plain searches, no backtracking over white space."""
    f = _F_OPEN.search(reply)
    f_at = f.start() if f else len(reply)
    m = _THOUGHT_WORD.search(reply, 0, f_at)
    if m is not None:
        start = m.end()
        # skip the label's markup: "**Thought:**", "Thought :", "thought**:"
        while start < f_at and (reply[start] in _MARKUP or reply[start].isspace()):
            start += 1
        a = _ACTION_LABEL.search(reply, start, f_at)
        body = reply[start:a.start() if a else f_at]
        return body.strip().strip("*").strip()
    head = reply[:f_at].rstrip().rstrip("*").rstrip()
    tail = _ACTION_TAIL.search(head[-200:])
    if tail is not None:
        head = head[: len(head) - 200 + tail.start()] if len(head) > 200 else head[: tail.start()]
    return head.strip().rstrip("*").strip()


_CLOSING_QUOTE = {"“": "”", "‘": "’"}
_OPENING_QUOTES = "\"'“‘"
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "\n": ""}


def _string(text: str, pos: int) -> tuple[str, int]:
    """A Python-style string literal at ``pos`` ('...', "...", or triple
    quoted; escapes \\n \\t \\r \\\\ \\' \\" understood, others kept
    as written; curly quotes “...” and ‘...’ are read too). Returns (value,
    end). Raises ValueError when unterminated."""
    quote = _CLOSING_QUOTE.get(text[pos], text[pos])
    if text.startswith(quote * 3, pos):
        quote = quote * 3
    i, out = pos + len(quote), []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
            continue
        if text.startswith(quote, i):
            return "".join(out), i + len(quote)
        if ch == "\n" and len(quote) == 1:
            break
        out.append(ch)
        i += 1
    raise ValueError("unterminated string literal")


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _arguments(text: str) -> list[tuple[str | None, str | None]]:
    """``(keyword or None, value)`` pairs of an argument list: each value a
    string literal (adjacent literals are joined, as in Python) or the bare
    name ``given_evidence``; ``None`` marks any other bare name. One left to
    right pass: no recursion, no backtracking. Raises ValueError (message for
    the model) on anything else."""
    pairs: list[tuple[str | None, str | None]] = []
    pos = _skip_space(text, 0)
    seen_keyword = False
    while pos < len(text):
        key = None
        m = _NAME.match(text, pos)
        if m is not None:
            after = _skip_space(text, m.end())
            if after < len(text) and text[after] == "=" and not text.startswith("==", after):
                key, pos = m.group(0), _skip_space(text, after + 1)
                m = _NAME.match(text, pos)
        if key is None and seen_keyword:
            raise ValueError("positional argument follows keyword argument")
        seen_keyword = seen_keyword or key is not None
        if pos < len(text) and text[pos] in _OPENING_QUOTES:
            parts = []
            while pos < len(text) and text[pos] in _OPENING_QUOTES:
                value, pos = _string(text, pos)
                parts.append(value)
                pos = _skip_space(text, pos)
            value = "".join(parts)
        elif m is not None and m.start() == pos:
            value = EVIDENCE_VARIABLE if m.group(0) == EVIDENCE_VARIABLE else None
            pos = _skip_space(text, m.end())
        else:
            shown = text[pos:pos + 20]
            raise ValueError(f"invalid syntax near {shown!r}")
        pairs.append((key, value))
        if pos < len(text):
            if text[pos] != ",":
                raise ValueError(f"expected ',' near {text[pos:pos + 20]!r}")
            pos = _skip_space(text, pos + 1)
    return pairs


def parse_call(call: str, allowed: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """``name(args)`` -> (name, {param: value}). For any malformed call it
    raises ``ValueError`` with a message meant for the model, and nothing else
    (its documented failure; :func:`parse_turn` turns it into ``error``).

    Arguments are keyword (``reason(evidence="...")``) or positional, in the
    order of :data:`ACTIONS`; each must be a string literal or the variable
    ``given_evidence``. The argument list is read by a small linear scanner,
    not by Python's parser (which recurses, and takes minutes or runs out of
    memory on replies like ``****...``). A call longer than
    :data:`MAX_CALL_CHARS` characters is refused.

    >>> parse_call('assert(state_left="a", state_right="b")', tuple(ACTIONS))
    ('assert', {'state_left': 'a', 'state_right': 'b'})
    """
    text = call.strip().strip("*`").strip()
    if len(text) > MAX_CALL_CHARS:
        raise ValueError(f"the action call is {len(text)} characters long (at most {MAX_CALL_CHARS})")
    m = _NAME.match(text)
    open_at = _skip_space(text, m.end()) if m else 0
    if m is None or open_at >= len(text) or text[open_at] != "(" or not text.endswith(")"):
        raise ValueError(f"{text[:120]!r} is not a call like name(argument=\"...\")")
    name = m.group(0).lower() if m.group(0).lower() in ACTIONS else m.group(0)
    try:
        arguments = _arguments(text[open_at + 1:-1])
    except ValueError as exc:
        raise ValueError(f"could not read the arguments of {text[:120]!r} ({exc})") from None
    if name not in ACTIONS:
        raise ValueError(f"unknown action {name!r}")
    if name not in allowed:
        raise ValueError(f"action {name!r} is not available in this session")
    params = ACTIONS[name]
    positional = [v for k, v in arguments if k is None]
    if len(positional) > len(params):
        raise ValueError(f"{name} takes {len(params)} argument(s), got {len(positional)}")
    args: dict[str, str] = {}
    pairs = list(zip(params, positional)) + [(k, v) for k, v in arguments if k is not None]
    for key, value in pairs:
        if key not in params:
            raise ValueError(f"{name} has no parameter {key!r} (parameters: {', '.join(params) or 'none'})")
        if key in args:
            raise ValueError(f"{name} got argument {key!r} twice")
        if value is None:
            raise ValueError(f"argument {key!r} of {name} must be a quoted string or {EVIDENCE_VARIABLE}")
        args[key] = value
    missing = [p for p in params if p not in args]
    if missing:
        raise ValueError(f"{name} is missing argument(s) {', '.join(missing)}")
    empty = [p for p in params if not args[p].strip()]
    if empty:
        raise ValueError(f"argument(s) {', '.join(empty)} of {name} are empty")
    return name, args


def parse_turn(reply: str, allowed: tuple[str, ...] = tuple(ACTIONS)) -> TurnParse:
    """Thought and the one action of a main-loop reply.

    The action is the content of ``<f>...</f>`` (a missing closing tag at the
    end of the reply is tolerated). The template placeholder ``<f>...</f>``
    that models often echo is ignored; two or more real actions are an error
    (Figure 17: one action per turn). Any string gives a :class:`TurnParse`;
    only the first :data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters
    are read.

    >>> parse_turn("**Thought:** check.\\n**Action:** <f>terminate()</f>").action
    'terminate'
    >>> parse_turn("I think the answer is B.").error
    'no action in the template <f>...</f>'
    """
    reply = clip(reply, "head")
    thought = _thought(reply)
    calls = [c.strip() for c in _f_calls(reply)]
    calls = [c for c in calls if c not in _PLACEHOLDER]
    if not calls:
        return TurnParse(thought, error="no action in the template <f>...</f>")
    if len(set(calls)) > 1:
        return TurnParse(thought, call=calls[0],
                         error=f"{len(calls)} actions given; take only one action per turn")
    try:
        name, args = parse_call(calls[0], allowed)
    except ValueError as exc:
        return TurnParse(thought, call=calls[0], error=str(exc))
    return TurnParse(thought, action=name, args=args, call=calls[0])


@dataclass(frozen=True)
class AssertParse:
    conflict: int | None
    """1 conflict, 0 no conflict, None if the reply gave no verdict."""
    confidence: float | None = None
    error: str | None = None


_C_TAG = re.compile(r"<c>([^<]*)</c>", re.IGNORECASE)
_P_TAG = re.compile(r"<p>([^<]*)</p>", re.IGNORECASE)


def parse_assert(reply: str) -> AssertParse:
    """The verdict of the assert helper: ``<c>1</c> <p>0.8</p>``.

    The verdict must be exactly one of 0/1 (several different verdicts are an
    error, unless the reply revises its verdict before the later one --
    "actually", "on reflection", "Final:" -- when the revised verdict and the
    confidence after it count); the confidence is optional but, when given, must be a number in
    [0, 1] (a percentage like ``80%`` is read as 0.8). Only the first
    :data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters are read.

    >>> parse_assert("<c>1</c> <p>0.9</p>")
    AssertParse(conflict=1, confidence=0.9, error=None)
    >>> parse_assert("<c>0</c> actually, on reflection, they differ. Final: <c>1</c> <p>0.85</p>")
    AssertParse(conflict=1, confidence=0.85, error=None)
    >>> parse_assert("They conflict.").error
    'no verdict in <c>...</c>'
    """
    reply = clip(reply, "head")
    tags = list(_C_TAG.finditer(reply))
    if not tags:
        return AssertParse(None, error="no verdict in <c>...</c>")
    chosen = tags[0]
    for prev, tag in zip(tags, tags[1:]):  # a later verdict after a revision revises it
        if tag.group(1).strip() != chosen.group(1).strip() and revised(reply, prev.end(), tag.start()):
            chosen = tag
    verdicts = {t.group(1).strip() for t in tags if t.start() >= chosen.start()}
    if len(verdicts) > 1:
        return AssertParse(None, error=f"several verdicts {sorted(verdicts)}")
    verdict = verdicts.pop()
    if verdict not in ("0", "1"):
        return AssertParse(None, error=f"verdict {verdict!r} is not 0 or 1")
    confidence = None
    m = _P_TAG.search(reply, chosen.end()) or (_P_TAG.search(reply) if chosen is tags[0] else None)
    if m:
        raw = m.group(1).strip()[:100]
        try:
            confidence = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
        except ValueError:
            return AssertParse(int(verdict), None, error=f"confidence {raw!r} is not a number")
        if not 0 <= confidence <= 1:
            return AssertParse(int(verdict), None, error=f"confidence {raw!r} is not in [0, 1]")
    return AssertParse(int(verdict), confidence)


_STEP = re.compile(r"(?:[*_]{0,2}(?:step[ \t]*)?\d{1,6}[ \t]*[.):][*_]{0,2}|[-*•])", re.IGNORECASE)


def parse_steps(reply: str) -> list[str]:
    """Numbered (``1.``, ``2)``, ``Step 3:``) or bulleted lines; empty if none.

    Read line by line (the first :data:`~conflict_eval.answers.MAX_REPLY_CHARS`
    characters), each line stripped before its marker is matched, so runs of
    blank lines or spaces cost linear time.

    >>> parse_steps("Sub-steps:\\n1. find X\\n2. compare X with Y")
    ['find X', 'compare X with Y']
    """
    steps = []
    for line in clip(reply, "head").splitlines():
        line = line.strip()
        m = _STEP.match(line)
        if m is not None:
            step = line[m.end():].strip()
            if line.startswith("**") and step.endswith("**"):
                step = step[:-2].strip()  # "**1. find X**"
            elif len(step) > 4 and step.startswith("**") and step.endswith("**"):
                step = step[2:-2].strip()
            if step:
                steps.append(step)
    return steps


def word_count(text: str) -> int:
    return len(text.split())


# --------------------------------------------------------------------------- the over-rationalization judge

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
