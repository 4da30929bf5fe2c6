"""Reading MADAM-RAG replies (pure functions, each tested on its own).

* :func:`parse_agent_answer` -- the ``Answer: ...`` part of an agent's reply,
  used only for the early-stop test (as in the authors' loop).
* :func:`parse_aggregation` -- the ``All Correct Answers: [...]`` list of the
  aggregator's reply, the method's final answer.
* :func:`answers_unchanged` -- the authors' early-stop test on two rounds.

Choices where the authors' slicing (``response[find("Answer: ") + 8 :
find("Explanation")]``) is undefined: an agent reply without ``Answer:`` is
taken whole up to ``Explanation`` (the authors' slice would cut its first
seven characters) and flagged; a reply without ``Explanation`` runs to its
end (their slice would drop its last character). Markers are matched
without regard to case or markdown emphasis (``**Answer:**``).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

from conflict_eval.answers import clip
from conflict_eval.answers.text_metrics import normalize_squad

# ``[\s*]*`` where ``\s*\**\s*`` would do: two adjacent white-space runs make
# a marker followed by a long white-space run (and no colon) quadratic.
_ANSWER = re.compile(r"\banswer[\s*]*:[\s*]*", re.I)
_EXPLANATION = re.compile(r"\bexplanation\b", re.I)
#: A parenthetical gloss ending the answer: "Abingdon, Illinois (Abingdon-Avon High School)."
_GLOSS = re.compile(r"(\([^()\n]{1,200}\))[ \t.*]{0,20}")
_ALL_CORRECT = re.compile(r"all\s+correct\s+answers?[\s*]*:[\s*]*", re.I)
MAX_LIST_CHARS = 2000
"""A longer answer list is a failure (a 128-token reply is about 600 characters);
keeps the quoted-item fallback below well within linear-ish time."""
_QUOTED = re.compile(r'"([^"]*)"|\'((?:[^\'\\]|\\.|\'(?=\w))*)\'')


@dataclass(frozen=True)
class AgentAnswer:
    answer: str
    """The answer part (stripped; may be empty)."""
    marked: bool
    """Whether the reply had an ``Answer:`` marker (unmarked replies are counted)."""


def parse_agent_answer(reply: str) -> AgentAnswer:
    """The text after the first ``Answer:`` up to ``Explanation`` (or the end).

    >>> parse_agent_answer("Answer: 1963. Explanation: the document says so.")
    AgentAnswer(answer='1963.', marked=True)
    >>> parse_agent_answer("**Answer:** Paris\\n**Explanation:** ...").answer
    'Paris'
    >>> parse_agent_answer("Answer: Abingdon, Illinois (Abingdon-Avon High School). Explanation: ...").answer
    'Abingdon, Illinois.'
    >>> parse_agent_answer("I think it is Paris.")
    AgentAnswer(answer='I think it is Paris.', marked=False)
    """
    reply = clip(reply or "", "head")
    m = _ANSWER.search(reply)
    start = m.end() if m else 0
    e = _EXPLANATION.search(reply, start)
    answer = reply[start:e.start() if e else len(reply)].strip().strip("*").strip()
    opening = answer.rfind("(")
    gloss = _GLOSS.fullmatch(answer, opening) if opening > 0 and answer[:opening].strip() else None
    if gloss is not None:  # a gloss is not part of the answer: "Abingdon, Illinois (… High School)."
        answer = answer[:opening].rstrip() + answer[gloss.end(1):].strip()
    return AgentAnswer(answer, m is not None)


def answers_unchanged(previous: list[str], current: list[str]) -> bool:
    """The authors' early stop: every agent's normalised answer is contained in,
    or contains, its previous one (plain substring test after SQuAD
    normalisation, as in ``run_madam_rag.py``).

    >>> answers_unchanged(["1963."], ["It is 1963"])
    True
    >>> answers_unchanged(["1963", "1956"], ["1963", "1998"])
    False

    One departure: an empty answer (after normalisation) on either side is a
    change, never "unchanged" -- the empty string is contained in every
    answer, so with the plain test one agent that said nothing would stop
    the debate.

    >>> answers_unchanged(["1963"], [""]), answers_unchanged([""], ["1963"]), answers_unchanged([""], [""])
    (False, False, False)
    """
    if len(previous) != len(current):
        raise ValueError(f"{len(previous)} previous answers but {len(current)} current ones")
    for old, new in zip(previous, current):
        a, b = normalize_squad(old), normalize_squad(new)
        if not a or not b or not (a in b or b in a):
            return False
    return True


@dataclass(frozen=True)
class Aggregation:
    answers: list[str] | None
    """The listed answers (``[]`` for an empty list or a plain 'unknown'); None on failure."""
    error: str | None = None
    """Why no list could be read."""

    @property
    def ok(self) -> bool:
        return self.answers is not None


def _items(body: str) -> list[str]:
    for loader in (json.loads, ast.literal_eval):
        try:
            value = loader(f"[{body}]")
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            continue
        if isinstance(value, list | tuple):
            return [str(v).strip() for v in value if str(v).strip()]
    quoted = [a if a else b for a, b in _QUOTED.findall(body)]
    if quoted:
        return [q.strip() for q in quoted if q.strip()]
    return [x.strip().strip("'\"“”‘’*").strip() for x in body.split(",") if x.strip().strip("'\"“”‘’*").strip()]


def parse_aggregation(reply: str) -> Aggregation:
    """The answers of the first ``All Correct Answers: [...]`` list.

    Items may be JSON strings (the one-shot example's ``["1963", "1956"]``),
    Python-quoted, or bare and comma-separated (``[1963, 1956]``); a quoted
    item keeps its commas (``["3,559 people"]``). A reply that is just
    'unknown' (what the prompt asks for when nothing is correct) gives ``[]``.
    Anything else -- no list, an unclosed list (reply cut at the token limit),
    a list over :data:`MAX_LIST_CHARS` -- is a failure with its reason, never a guess.

    >>> parse_aggregation('All Correct Answers: ["1963", "1956"]. Explanation: ...').answers
    ['1963', '1956']
    >>> parse_aggregation("All Correct Answers: ['3,559 people']").answers
    ['3,559 people']
    >>> parse_aggregation("Unknown.").answers
    []
    >>> parse_aggregation("The answers are 1963 and 1956.").error
    "no 'All Correct Answers: [...]' list"
    """
    reply = clip(reply or "", "head")
    m = _ALL_CORRECT.search(reply)
    if m is None:
        if re.fullmatch(r"[\s*'\"]*unknown[\s.*'\"]*", reply, re.I):
            return Aggregation([])
        return Aggregation(None, "no 'All Correct Answers: [...]' list")
    rest = reply[m.end():]
    if not rest.startswith("["):
        line = rest.split("\n", 1)[0]
        head = line[:e.start()] if (e := _EXPLANATION.search(line)) else line
        if re.fullmatch(r"[\s*'\"]*unknown[\s.*'\"]*", head, re.I):
            return Aggregation([])
        return Aggregation(None, f"'All Correct Answers:' is not followed by a [...] list (got {line.strip()[:60]!r})")
    depth, end = 0, -1
    for i, ch in enumerate(rest):
        depth += ch == "["
        depth -= ch == "]"
        if depth == 0:
            end = i
            break
    if end < 0:
        return Aggregation(None, "the answer list is not closed (reply cut short?)")
    if end - 1 > MAX_LIST_CHARS:
        return Aggregation(None, f"the answer list is longer than {MAX_LIST_CHARS} characters")
    return Aggregation(_items(rest[1:end]))
