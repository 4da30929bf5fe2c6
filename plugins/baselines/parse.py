"""Pure parsing of baseline replies: where is the final answer?

Each function takes the model's reply (with any tag the prompt pre-filled put
back in front, see ``conflict_eval.answers.restore_prefill``) and returns an
:class:`Extraction`: the answer segment to be read by the metric (e.g.
``"<a>B</a>"``) or a failure reason. The metric then parses the letter out of
the segment (``conflict_eval.answers.parse_choice``); a failure here is a
parse failure there -- unless the reply, naming no letter, sincerely refuses
("I cannot determine ..."): the failure reason then starts with
``"refusal"`` and the metric counts a refusal. Nothing here guesses.

Every function takes any string and returns an :class:`Extraction` (never
raises) in time linear in the reply: tags are found with
:func:`conflict_eval.answers.tag_bodies` (thousands of unclosed ``<a>`` tags
cost linear time), lines are matched one at a time, and only
:data:`conflict_eval.answers.MAX_REPLY_CHARS` characters are read -- the first
ones where the *first* answer counts (Few-Shot, CoT, GKP), the last ones where
the *last* answer counts (Self-Ask, Comparative).

>>> parse_cot("<t>The evidence says A.</t> <a>B</a>").answer
'<a>B</a>'
>>> parse_cot("<t>The evidence says A. So (A).").reason
'thought not closed with </t>'
>>> parse_cot("<t>The evidence says A. **Answer:** <a>A</a>").answer
'<a>A</a>'
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field

from conflict_eval.answers import clip, first_tagged_answer, parse_choice, reported, revised_tag, tag_bodies

_T_CLOSE = re.compile(r"</t>", re.I)
_FINAL_PHRASE = re.compile(r"so the final answer is", re.I)
_INTERMEDIATE = re.compile(r"intermediate[ \t]+answer[ \t]*:", re.I)
_FOLLOW_UP = re.compile(r"follow[ \t]*up[ \t]*:", re.I)
_COMPARATIVE_LABEL = re.compile(r"\bANSWER[ \t]*([12])(?![0-9])", re.I)
_LABEL_QUALIFIER = re.compile(
    r"\([^)\n]{0,80}\)|(?:solely[ \t]+)?(?:based[ \t]+on|from|using)\b[^:.\n]{0,60}", re.I)
_LABEL_MARKUP = " \t*_"
_NEXT_LABEL = re.compile(r"\bANSWER[ \t]*[12](?![0-9])|\bfinal[ \t]+answer\b", re.I)
_A_TAG = re.compile(r"</?a[ \t]*>", re.I)
_INPUT = re.compile(r"^[ \t]*Input[ \t]*:", re.M)
_NEXT_EXAMPLE = re.compile(r"^[ \t]*(?:Evidence|Question|Input)[ \t]*:", re.M | re.I)


def _answer_tags(reply: str, pos: int = 0) -> list[str]:
    """Bodies of the closed ``<a>...</a>`` tags from ``pos`` on (linear)."""
    return [t.body(reply) for t in tag_bodies(reply, "a", pos)]


def _rest_of_line(text: str, pos: int) -> str:
    """What follows ``pos`` after white space and an optional colon, to the end
    of that line (the line after, if the phrase ends its line)."""
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    if pos < len(text) and text[pos] == ":":
        pos += 1
    while pos < len(text) and text[pos].isspace():
        pos += 1
    end = text.find("\n", pos)
    return text[pos:] if end < 0 else text[pos:end]


@dataclass(frozen=True)
class Extraction:
    answer: str | None
    """Answer segment for the metric, or ``None`` on failure."""
    reason: str | None = None
    """Why no answer segment was found (``None`` on success)."""
    parts: dict = field(default_factory=dict)
    """Intermediate pieces worth logging (thought, follow-ups, ANSWER1/2, ...)."""

    @property
    def ok(self) -> bool:
        return self.answer is not None


def _fail(reason: str, **parts) -> Extraction:
    return Extraction(None, reason, parts)


def _no_answer(reply: str, reason: str, **parts) -> Extraction:
    """A failure -- or, when the reply names no letter and sincerely refuses
    ("I cannot determine ...", :mod:`conflict_eval.answers.refusal`), a
    refusal: its reason then starts with ``"refusal"`` and the metric counts
    it as a refusal, not a parse failure."""
    parsed = parse_choice(reply, string.ascii_uppercase)
    return _fail(parsed.reason if parsed.refused else reason, **parts)


def _reads(region: str) -> bool:
    """Whether an untagged answer region names a letter for the shared reader
    (any letter: the metric reads it again against the item's own letters)."""
    return parse_choice(_A_TAG.sub(" ", region), string.ascii_uppercase).ok


def _tag(body: str) -> str:
    return f"<a>{body.strip()}</a>"


def parse_few_shot(reply: str) -> Extraction:
    """Few-Shot (Fig. 11): the **first** ``<a>...</a>``. A model continuing the
    few-shot pattern writes more examples after its answer; those are ignored.

    The prompt ends inside ``<a>``; a reply that never writes ``</a>`` (small
    models often stop after "C. Great Britain") is read up to the end of its
    first line, the same span End-to-End's metric reads. A reply with no
    ``<a>`` at all is read by the shared letter reader up to any example it
    goes on inventing (an ``Evidence:``/``Question:`` line)."""
    reply = clip(reply, "head")
    segment, reason = first_tagged_answer(reply)
    if segment is None:
        # No answer tag: the reply up to any example it goes on inventing
        # ("Evidence: ..."), read by the shared letter reader.
        own = _NEXT_EXAMPLE.split(reply, maxsplit=1)[0].strip()
        if not _reads(own):
            return _no_answer(reply, reason)
        return Extraction(own, parts={"untagged": True})
    unclosed = not tag_bodies(reply, "a")
    return Extraction(segment, parts={"unclosed_tag": True} if unclosed else {})


def _letter_or_text(body: str) -> str:
    """What an answer tag says, for comparing tags: its letter when one is read
    (``B``, ``(b)``, ``B. Paris``), else its text, white space and case folded."""
    parsed = parse_choice(body, string.ascii_uppercase)
    return parsed.letter if parsed.ok else " ".join(body.split()).casefold()


def parse_cot(reply: str) -> Extraction:
    """CoT (Fig. 12) and GKP's answer phase (Fig. 16): ``<t>thought</t>`` and
    then ``<a>answer</a>``. With the thought closed, the answer region is what
    follows ``</t>``: its first ``<a>...</a>`` (a later one after a revision,
    :func:`conflict_eval.answers.reply.revised_tag`), or, untagged, the whole
    region, read by the shared letter reader (``# Answer: C`` -> C; an
    ``<a>`` inside the thought does not count).

    A reply that never closes the thought (chat models often write
    ``**Thought:** ... **Answer:** <a>A</a>`` with no ``</t>``) is read when it
    is unambiguous: every non-empty answer tag it writes itself (not one it
    quotes from a document, :func:`conflict_eval.answers.reported`) says the
    same answer; ``parts["thought_unclosed"]`` is then set. Different answers
    in such a reply are a failure: nothing marks which one is the thought's."""
    reply = clip(reply, "head")
    close = _T_CLOSE.search(reply)
    if close is None:
        tags = [t for t in tag_bodies(reply, "a") if t.body(reply).strip()]
        own = [t for t in tags if not reported(reply, reply.rfind("<", 0, t.start))] or tags
        if not own:
            return _no_answer(reply, "thought not closed with </t>")
        read: dict[str, str] = {}  # body -> what it says (a reply may repeat one tag thousands of times)
        said: dict[str, None] = {}
        for t in own:
            body = t.body(reply).strip()
            if body not in read:
                read[body] = _letter_or_text(body)
            said[read[body]] = None
            if len(said) > 1:
                break
        thought = reply[:reply.rfind("<", 0, own[0].start)].strip()
        thought = thought[3:].strip() if thought.lower().startswith("<t>") else thought
        if len(said) > 1:
            return _fail(f"thought not closed with </t> and its answer tags differ ({', '.join(v[:30] for v in said)})",
                         thought=thought)
        return Extraction(_tag(own[-1].body(reply)), parts={"thought": thought, "thought_unclosed": True})
    thought = reply[: close.start()]
    opened = thought.lower().find("<t>")
    thought = thought[opened + 3:] if opened >= 0 else thought
    region = reply[close.end():]
    found = tag_bodies(region, "a")
    if not found:
        # "</t>" then "# Answer: C", "**Answer:** C — solemn", "My answer: option A":
        # the region after the thought is the answer, read by the shared letter reader.
        if not _reads(region):
            return _no_answer(region, "no <a>...</a> answer after the thought", thought=thought.strip())
        return Extraction(region.strip(), parts={"thought": thought.strip(), "untagged": True})
    chosen = revised_tag(region, found)
    if chosen is None:
        return _fail("ambiguous: answer tags after the thought differ with no revision", thought=thought.strip())
    if not chosen.body(region).strip():
        return _fail("empty <a></a> answer", thought=thought.strip())
    return Extraction(_tag(chosen.body(region)), parts={"thought": thought.strip()})


def parse_self_ask(reply: str) -> Extraction:
    """Self-Ask (Fig. 13): the last ``<a>...</a>``; failing that, Self-Ask's
    original closing line "So the final answer is: X" (its last occurrence);
    failing that, what follows the last "Intermediate answer:" line (the whole
    reply if none), read by the shared letter reader (``untagged``)."""
    reply = clip(reply, "tail")
    follow_ups = []
    for line in reply.splitlines():
        m = _FOLLOW_UP.match(line.strip())
        if m is not None and line.strip()[m.end():].strip():
            follow_ups.append(line.strip()[m.end():].strip())
    tags = [body for body in _answer_tags(reply) if body.strip()]
    if tags:
        return Extraction(_tag(tags[-1]), parts={"follow_ups": follow_ups})
    last = None
    for last in _FINAL_PHRASE.finditer(reply):
        pass
    phrase = _rest_of_line(reply, last.end()) if last is not None else ""
    if phrase.strip():
        return Extraction(_tag(phrase), parts={"follow_ups": follow_ups})
    # Neither: what follows the last intermediate answer's line goes to the
    # shared letter reader ("**Answer:** B", "\\boxed{B}").
    cut = 0
    for m in _INTERMEDIATE.finditer(reply):
        end = reply.find("\n", m.end())
        cut = len(reply) if end < 0 else end
    region = reply[cut:].strip()
    if not _reads(region):
        return _no_answer(reply, "no <a>...</a> answer and no 'So the final answer is'", follow_ups=follow_ups)
    return Extraction(region, parts={"follow_ups": follow_ups, "untagged": True})


def _comparative_parts(reply: str) -> dict[str, str]:
    """``answer1`` / ``answer2``: what follows each label, without the label.

    A label is ``ANSWER1``/``ANSWER 2`` (any case, in markup), an optional
    qualifier (``(context)``, ``based on the context``, ``from my own
    knowledge``) and a separator (``:``, ``-``, ``=``); its value runs to the
    next label or "final answer" on the line, or is the next line when the
    label ends its line. A mention without a separator (the model echoing the
    instruction "ANSWER1 solely based on the given context and ANSWER2 ...")
    is not a label. Markup and ``<a>`` tags are removed from the value; the last
    value of each label counts."""
    return _comparative_labels(reply)[0]


def _comparative_labels(reply: str) -> tuple[dict[str, str], list[tuple[int, int]]]:
    """:func:`_comparative_parts` and the spans ``(label start, value end)``
    of every label with its value, so the rest of the reply can be read."""
    parts: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    for m in _COMPARATIVE_LABEL.finditer(reply):
        start = _label_value_start(reply, m.end())
        if start is None:
            continue
        line_end = reply.find("\n", start)
        line_end = len(reply) if line_end < 0 else line_end
        nxt = _NEXT_LABEL.search(reply, start, line_end)
        end = nxt.start() if nxt else line_end
        value = reply[start:end]
        if not _clean_part(value) and nxt is None:  # "**ANSWER1:**\nA"
            following_start = line_end + 1
            while following_start < len(reply) and reply[following_start] == "\n":
                following_start += 1
            first_end = reply.find("\n", following_start)
            first_end = len(reply) if first_end < 0 else first_end
            first = reply[following_start:first_end]
            if not _COMPARATIVE_LABEL.search(first) and not _NEXT_LABEL.search(first):
                value, end = first, first_end
        line_start = reply.rfind("\n", 0, m.start()) + 1
        label_start = m.start() if reply[line_start:m.start()].strip(" \t*_#-") else line_start
        spans.append((label_start, end))
        value = _clean_part(value)
        if value:
            parts[f"answer{m.group(1)}"] = value
    return parts, spans


def _skip_markup(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _LABEL_MARKUP:
        pos += 1
    return pos


def _label_value_start(text: str, pos: int) -> int | None:
    """Where a label's value starts: after markup, an optional qualifier and a
    separator; ``None`` without a separator (not a label). Linear: the
    markup is skipped by hand, not by regex backtracking."""
    pos = _skip_markup(text, pos)
    qualifier = _LABEL_QUALIFIER.match(text, pos)
    if qualifier is not None:
        pos = _skip_markup(text, qualifier.end())
    if pos >= len(text) or text[pos] not in ":：=-–—":
        return None
    return _skip_markup(text, pos + 1)


def _clean_part(value: str) -> str:
    value = _A_TAG.sub("", value)
    return value.strip().strip("*_`").strip().rstrip(",;").strip().strip("*_`").strip()


def parse_comparative(reply: str) -> Extraction:
    """Comparative (Fig. 14): ANSWER1 (context) and ANSWER2 (own knowledge)
    are recorded when present (:func:`_comparative_parts`); the final answer
    is the last ``<a>...</a>``.

    The verbatim prompt ends with "Answer:", so a chat model often answers
    without the tag: ``B``, ``B. names``, ``E (walked)``, ``**E** — walked``,
    or ``ANSWER1: E`` / ``ANSWER2: D`` / ``Final answer: D``. Without a tag,
    the reply *minus its ANSWER1/ANSWER2 labels and their values* is the
    answer segment, read by the metric with the shared letter reader
    (:func:`conflict_eval.answers.parse_choice`: ``Final answer: D`` -> D,
    ``E (walked)`` -> E); ``parts["untagged"]`` is then set. A reply that is
    nothing but the two labelled answers has no final answer (a failure)."""
    reply = clip(reply, "tail")
    answers, spans = _comparative_labels(reply)
    tags = [body for body in _answer_tags(reply) if body.strip()]
    if not tags:
        rest, pos = [], 0
        for start, end in spans:
            rest.append(reply[pos:start])
            pos = max(pos, end)
        rest.append(reply[pos:])
        segment = "\n".join(part.strip("\n") for part in rest if part.strip()).strip()
        if not segment.strip(" \t\n*_`"):
            reason = "no <a>...</a> final answer" + (" (only ANSWER1/ANSWER2)" if spans else "")
            return _fail(reason, **answers)
        return Extraction(segment, parts={**answers, "untagged": True})
    return Extraction(_tag(tags[-1]), parts=answers)


def parse_knowledge(reply: str) -> Extraction:
    """GKP generation phase (Fig. 15): the knowledge text. A model that goes on
    to write a new "Input:" (continuing the pattern) is cut there. Empty
    knowledge is a failure (the answer phase still runs, see the solver)."""
    text = _INPUT.split(clip(reply, "head"), maxsplit=1)[0].strip()
    if not text:
        return _fail("no knowledge generated")
    return Extraction(text)
