"""A yes/no verdict read from a reply, by partial match (Conflict Exposure §4.6 ACC).

:func:`parse_yes_no` is shared by the ``yes_no_accuracy`` metric
(scorers/conflict_exposure) and the polluted KB's pre-screening
(plugins/polluted_kb/build.py). A reply with no single verdict is a
:class:`Parsed` failure with its reason, counted by the caller, never a label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conflict_eval.answers.reply import clip, reported, revised, revision_before


@dataclass(frozen=True)
class Parsed:
    value: str | None
    ok: bool
    reason: str | None = None

    @classmethod
    def fail(cls, reason: str) -> Parsed:
        return cls(None, False, reason)


_YES_NO_RE = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_MARKUP = " \t\r\n*_\"'`#>-[(“‘:"
#: Words after which "no" is a determiner, not an answer ("No doubt, yes",
#: "There is no evidence", "no longer"): such a "no" is not a verdict.
_NO_IDIOMS = frozenset("""
    doubt doubts question questions matter longer one more idea information evidence mention
    mentions need reason reasons indication sign signs way clear direct specific relevant data
    record records conflict conflicts contradiction contradictions answer knowledge context
    document documents explicit further other such less sooner wonder surprise problem issue
    proof support supporting details detail single known definitive definite reliable
    """.split())
#: "yes or no", "yes/no", "no and yes": a restated question, not a verdict.
_PAIR_RE = re.compile(r"\b(?:yes|no)[\"'*_`]{0,2}[ \t]*(?:/|\bor\b|\band\b)[ \t]*[\"'*_`]{0,2}(?:yes|no)\b",
                      re.IGNORECASE)
_LABEL_RE = re.compile(r"\b(?:answer|verdict|conclusion)\b", re.IGNORECASE)
_LABEL_LINK_RE = re.compile(r"(?:\bis\b|\bbe\b|:|=|[-–—](?=[ \t]))", re.IGNORECASE)
_ADVERBS = ("definitely", "clearly", "simply", "probably", "likely", "certainly", "most likely",
            "therefore", "thus")
_WORD_RE = re.compile(r"[ \t]*([A-Za-z]{1,30})")


def _is_verdict(text: str, m: re.Match) -> bool:
    """A yes/no token that states an answer: not "no" used as a determiner."""
    if m.group(1).lower() == "yes":
        return True
    nxt = _WORD_RE.match(text, m.end())
    return nxt is None or nxt.group(1).lower() not in _NO_IDIOMS


def _labels(text: str, tokens: dict[int, str]) -> list[tuple[int, int, str, bool]]:
    """Every answer label and its yes/no: ``(label start, token start, value,
    explicit)`` for "Answer: No", "the answer is yes", "Final verdict - no",
    "The answer to the question is definitely yes"; *explicit*: a label field
    ("Answer: No", "Verdict - yes") or a final one ("the final answer is no")."""
    found = []
    for m in _LABEL_RE.finditer(text):
        window_end = min(len(text), m.end() + 80)
        stop = text.find("\n", m.end(), window_end)
        link = _LABEL_LINK_RE.search(text, m.end(), window_end if stop < 0 else stop)
        if link is None:
            continue
        pos = link.end()
        while pos < len(text) and text[pos] in _MARKUP:
            pos += 1
        for adverb in _ADVERBS:
            if text[pos:pos + len(adverb)].lower() == adverb:
                pos += len(adverb)
                while pos < len(text) and text[pos] in _MARKUP + ",":
                    pos += 1
                break
        if pos in tokens:
            final = text[max(0, m.start() - 6):m.start()].lower().rstrip(" \t*_").endswith("final")
            found.append((m.start(), pos, tokens[pos], final or link.group() in (":", "=", "-", "–", "—")))
    return found


def _own(text: str, found: list[tuple]) -> list[tuple]:
    """The declarations the reply makes itself; all of them when every one is
    quoted or reported from a document (:func:`conflict_eval.answers.reported`)."""
    own = [f for f in found if not reported(text, f[0])]
    return own or found


def _agreeing(text: str, found: list[tuple]) -> str | None:
    """The last value, unless an earlier one differs and the reply does not
    revise itself in between; ``None`` for two different answers."""
    last_start, _, value = found[-1][:3]
    others = [f for f in found if f[2] != value]
    if others and not revised(text, others[-1][1] + 1, last_start):
        return None
    return value


def parse_yes_no(reply: str) -> Parsed:
    """``"yes"`` or ``"no"`` from a reply, by partial match (§4.6 ACC).

    The paper checks whether "the LLM output contains yes or no". Our reading,
    for replies that contain the words more than once or not as an answer:

    * only *verdict* tokens count: the whole words yes/no in any case, but not
      "no" as a determiner ("No doubt, yes", "there is no evidence", "no
      longer": the word after it is in a list of such nouns/idioms) and not a
      restated question ("yes or no", "yes/no", "Yes or no?");
    * the **last explicit verdict** decides first: an answer field or a
      final label ("Answer: yes ... Final answer: no" is no), a label after
      a revision ("Actually, the answer is no"), or a token right after a
      revision ("Yes. Actually, no." is no);
    * else an **answer label** decides: the token right after an
      "answer"/"verdict"/"conclusion" + "is"/"be"/":"/"-" ("Answer: No",
      "I think the answer is no.", "The final answer to the question is
      definitely yes"). A label quoted or reported from a document ("the
      second passage says the answer is no") does not count while the reply
      has one of its own; when the reply's own labels differ, the last wins
      only after a revision ("Actually, the answer is no"), else the reply
      is ambiguous;
    * else a **leading** verdict decides: the reply's first word after light
      markup ("**Yes**", "yes.", "No, it is not", "Yes, ... however no ...");
    * else every verdict token in the reply must agree (tokens reported from
      a document left out, when others remain); yes and no both is a failure
      ("ambiguous"), none is a failure ("neither").

    Total and linear: any string gives a :class:`Parsed`; only the first
    :data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters are read.

    >>> parse_yes_no("Yes, it is.").value
    'yes'
    >>> parse_yes_no("The documents say no.").value
    'no'
    >>> parse_yes_no("No doubt, yes.").value
    'yes'
    >>> parse_yes_no("Yes or no? Hard to say.").reason
    'neither yes nor no'
    >>> parse_yes_no("It might be yes; it might be no.").reason
    'ambiguous: both yes and no'
    >>> parse_yes_no("Nobody knows").reason
    'neither yes nor no'
    >>> parse_yes_no("The answer is yes. While Document 2 says the answer is no, it is outdated.").value
    'yes'
    """
    reply = clip(reply or "", "head")
    if not reply.strip():
        return Parsed.fail("empty reply")
    pairs = [m.span() for m in _PAIR_RE.finditer(reply)]
    tokens: dict[int, str] = {}
    pair_at = 0
    for m in _YES_NO_RE.finditer(reply):
        while pair_at < len(pairs) and pairs[pair_at][1] <= m.start():
            pair_at += 1
        if pair_at < len(pairs) and pairs[pair_at][0] <= m.start():
            continue  # inside "yes or no"
        if _is_verdict(reply, m):
            tokens[m.start()] = m.group(1).lower()
    if not tokens:
        return Parsed.fail("neither yes nor no")
    labels = _labels(reply, tokens)
    # The last explicit verdict decides: a label field or final label ("Answer:
    # yes ... Final answer: no"), a label after a revision ("Actually, the
    # answer is no"), or a yes/no right after a revision ("Yes. Actually, no.").
    explicit, other = [], None
    own = _own(reply, labels)
    for i, (start, at, v, e) in enumerate(own):
        if i and own[i - 1][2] != v:
            other = own[i - 1][1]
        if e or (other is not None and revised(reply, other + 1, start)):
            explicit.append((at, v))
    explicit += [(at, v) for at, v in tokens.items() if revision_before(reply, at)]
    if explicit:
        return Parsed(max(explicit)[1], True)
    if labels:
        value = _agreeing(reply, _own(reply, labels))
        if value is None:
            return Parsed.fail("ambiguous: the reply's answers say both yes and no")
        return Parsed(value, True)
    lead = 0
    while lead < len(reply) and reply[lead] in _MARKUP:
        lead += 1
    if lead in tokens:
        return Parsed(tokens[lead], True)
    found = {value for _, _, value in _own(reply, [(at, at, v) for at, v in tokens.items()])}
    if len(found) == 1:
        return Parsed(found.pop(), True)
    return Parsed.fail("ambiguous: both yes and no")
