"""The executor's answers (AtomR Figures 8-11): ``So the answer is: (1) Paraphrase
Answer: ...; (2) Answer List: [...]`` (:func:`parse_answer`), and the knowledge
sources a reply names (:func:`parse_sources`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .plan import _OPEN_QUOTES

MAX_ANSWER_CHARS = 20_000
""":func:`parse_answer` reads the last this-many characters of a reply."""
MAX_SOURCE_CHARS = 4_000
""":func:`parse_sources` reads the first this-many characters."""



@dataclass(frozen=True)
class Answer:
    answers: list[str]
    paraphrase: str
    error: str | None = None
    """Why the reply could not be parsed (``answers`` is then empty)."""

    @property
    def unknown(self) -> bool:
        return self.error is None and (not self.answers or all(a.strip().lower() == "unknown" for a in self.answers))

    @property
    def text(self) -> str:
        """The prediction: the answer list joined with ``", "``."""
        return ", ".join(self.answers)


_QUOTE_CHARS = "\"'“”‘’"


def _parse_list(text: str) -> tuple[list[str], bool, int]:
    """Items of ``[...]`` at the start of ``text``: quoted strings (any quote
    style, commas inside quotes kept) or unquoted comma-separated items.
    Returns ``(items, closed, end)`` (``end``: just past the closing ``]``,
    or ``len(text)``); on a list cut off before ``]`` only the complete items
    are returned. Linear, no eval."""
    items: list[str] = []
    i, n = 1, len(text)
    cur: list[str] = []
    quote: str | None = None
    was_quoted = False
    depth = 0
    while i < n:
        ch = text[i]
        if quote:
            if ch == "\\" and i + 1 < n:
                cur.append(text[i + 1])
                i += 2
                continue
            if ch in _OPEN_QUOTES.get(quote, quote):
                k = i + 1
                while k < n and text[k] in " \t\r\n":  # a list printed one item a line closes on the next line
                    k += 1
                if k >= n or text[k] in ",]":
                    quote = None
                    i += 1
                    continue
            cur.append(ch)
        elif ch in _QUOTE_CHARS and not "".join(cur).strip():
            quote, was_quoted, cur = ch, True, []
        elif ch in "[{(":
            depth += 1
            cur.append(ch)
        elif ch in ")}" and depth:
            depth -= 1
            cur.append(ch)
        elif ch == "]" and depth:
            depth -= 1
            cur.append(ch)
        elif ch in ",]":
            item = "".join(cur).strip()
            if item:
                items.append(item if was_quoted else item.strip(_QUOTE_CHARS).strip())
            cur, was_quoted = [], False
            if ch == "]":
                return [x for x in items if x], True, i + 1
        else:
            cur.append(ch)
        i += 1
    return [x for x in items if x], False, n


def _find_last(low: str, needle: str, end: int | None = None, start: int = 0) -> int:
    return low.rfind(needle, start, len(low) if end is None else end)


def _find_last_own(text: str, low: str, needle: str, end: int | None = None, start: int = 0) -> int:
    """The last ``needle`` in ``[start, end)`` the reply writes itself, not
    quoted or reported from a paragraph (:func:`conflict_eval.answers.reported`);
    the last of all when every one is reported; -1 when there is none."""
    from conflict_eval.answers import reported

    last = at = _find_last(low, needle, end, start)
    while at >= 0:
        if not reported(text, at):
            return at
        at = _find_last(low, needle, at, start)
    return last


_NO_ANSWER = "no 'So the answer is: (1) Paraphrase Answer: ...; (2) Answer List: [...]' in the reply"
_LIST, _PARA, _LEAD = "answer list", "paraphrase answer", "so the answer is"


def _read_line(text: str, low: str, li: int, lo: int, hi: int) -> tuple[Answer, int, int]:
    """The answer line whose "Answer List" starts at ``li``: its paraphrase is
    the last own "Paraphrase Answer" in ``[lo, li)``, its list is read from
    ``text[li:hi]``. ``error`` set when the line declares nothing. Returns
    the answer and where the line starts (its "So the answer is", else its
    "Paraphrase Answer", else its "Answer List") and ends (past its list's
    ``]``, else past its label)."""
    pi = _find_last_own(text, low, _PARA, li, lo)
    lead = _find_last(low, _LEAD, pi if pi >= 0 else li, lo)
    start = lead if lead >= 0 else pi if pi >= 0 else li
    end = li + len(_LIST)
    para = ""
    if pi >= 0:
        # drop the "; (2)" / "2." separator before "Answer List"
        chunk = text[pi + len(_PARA):li].lstrip(" :\t").rstrip()
        for tail in ("(2)", "2.", "2)"):
            if chunk.endswith(tail):
                chunk = chunk[: -len(tail)].rstrip()
        para = chunk.rstrip(";,. ").strip().strip(_QUOTE_CHARS).strip()
    after = text[li + len(_LIST):hi]
    j = 0
    while j < len(after) and j < 20 and after[j] in " :\t\n":
        j += 1
    items: list[str] | None = None
    if j < len(after) and after[j] == "[":
        items, closed, stop = _parse_list(after[j:])
        end += j + stop
        if not closed and not items:
            items = None
    if items is not None:
        if items and not (not para and all(i.lower() == "unknown" for i in items)):
            return Answer(items, para), start, end
        if not items and para and para.lower() != "unknown":
            return Answer([para], para), start, end
        return Answer(items, para), start, end
    if para:
        return Answer([para], para), start, end
    return Answer([], "", error=_NO_ANSWER), start, end


def _answer_key(a: Answer) -> tuple[str, ...]:
    """The answer list compared across lines: items normalised as AtomR's
    scorer does (case, punctuation, articles, whitespace), order and repeats
    ignored; every Unknown / empty list is one answer."""
    from conflict_eval.answers.text_metrics import normalize_atomr

    if a.unknown:
        return ("unknown",)
    return tuple(sorted({normalize_atomr(x) for x in a.answers} - {""}))


def _line_key(a: Answer) -> tuple[str, tuple[str, ...]]:
    from conflict_eval.answers.text_metrics import normalize_atomr

    return normalize_atomr(a.paraphrase), _answer_key(a)


_PROMPT_LINES: set[tuple[str, tuple[str, ...]]] = set()


def prompt_answer_lines() -> set[tuple[str, tuple[str, ...]]]:
    """Normalised answer lines written in AtomR's answer prompts (Figures
    8-11, :mod:`.prompts`): each example's own "So the answer is: ..." line and
    the instruction's format line (``{paraphrase_answer}``/``[answer_list]``).
    A reply that repeats one of these before its own answer is quoting the
    prompt. (The instruction's Unknown line is not among them: a model's own
    Unknown is written exactly that way.)"""
    if not _PROMPT_LINES:
        from .. import prompts

        for template in (prompts.SEARCH_TEMPLATE, prompts.RELATE_TEMPLATE, prompts.FILTER_TEMPLATE,
                         prompts.CHILD_TEMPLATE):
            shown = template.replace("{{", "{").replace("}}", "}")
            at = shown.find("So the answer is:")
            while at >= 0:
                line = shown[at:shown.find("]", at) + 1]
                low = line.lower()
                a, _, _ = _read_line(line, low, low.rfind(_LIST), 0, len(line))
                if a.error is None:
                    _PROMPT_LINES.add(_line_key(a))
                at = shown.find("So the answer is:", at + 1)
    return _PROMPT_LINES


def parse_answer(reply: str) -> Answer:
    """Parse "So the answer is: (1) Paraphrase Answer: ...; (2) Answer List: [...]".

    Reads the last :data:`MAX_ANSWER_CHARS` characters; labels are found
    case-insensitively and markdown emphasis (``**``, ``__``, backticks) is
    ignored. Each "Answer List" the reply writes itself is an answer line;
    one it quotes or reports from a paragraph (``Paragraph 2 gives the Answer
    List: ["Alice"]``, a quoted or block-quoted answer line: see
    :func:`conflict_eval.answers.reported`) is left out while the reply has
    one of its own (with none of its own, the last counts). The last own line
    that declares an answer counts. An earlier own line that repeats an answer
    line of AtomR's prompts (an example's, :func:`prompt_answer_lines`,
    compared after normalisation: case, whitespace, punctuation, markdown) is
    quoted text from the prompt and left out too; one that restates the same
    answer list (normalised, in any order) is fine. A later own line with a
    *different* answer list decides when a revision stands between the two
    (:func:`conflict_eval.answers.revised`: "actually", "wait", "on second
    thought", "I revise", "Final:"; the reader contract's rule 2 in
    ``docs/metrics-and-parsing.md``); with none it makes the reply
    ambiguous: a parse failure (``error`` starts with "ambiguous"), never a
    guess. The answer list is
    preferred; when it is missing, empty with a non-Unknown paraphrase, or
    cut off before its first item, the paraphrase becomes a one-item list
    (AtomR's fallback). A list cut off at the token limit keeps its complete
    items. A reply with neither is a parse failure (``error`` set). Never
    raises; linear.

    >>> parse_answer('x. So the answer is: (1) Paraphrase Answer: Bob won; (2) Answer List: ["Bob"]').text
    'Bob'
    >>> parse_answer('So the answer is: (1) Paraphrase Answer: Unknown; (2) Answer List: []').unknown
    True
    >>> parse_answer('Answer List: ["Bob"] ... So the answer is: (1) Paraphrase Answer: Al; (2) Answer List: ["Al"]').error[:9]
    'ambiguous'
    >>> parse_answer('Answer List: ["Bob"] Wait, no. Paraphrase Answer: Al; (2) Answer List: ["Al"]').text
    'Al'
    """
    if not isinstance(reply, str):
        return Answer([], "", error=f"reply is {type(reply).__name__}, not text")
    from conflict_eval.answers import reported, revised

    text = reply[-MAX_ANSWER_CHARS:]
    for mark in ("**", "__", "`"):
        text = text.replace(mark, "")
    low = text.lower()
    found: list[int] = []
    at = low.find(_LIST)
    while at >= 0:
        found.append(at)
        at = low.find(_LIST, at + len(_LIST))
    if not found:  # a paraphrase alone: up to the end of its line / clause
        pi = _find_last_own(text, low, _PARA)
        if pi < 0:
            return Answer([], "", error=_NO_ANSWER)
        chunk = text[pi + len(_PARA):].lstrip(" :\t")
        for sep in ("\n", ";"):
            cut = chunk.find(sep)
            if cut >= 0:
                chunk = chunk[:cut]
        para = chunk.strip().strip(_QUOTE_CHARS).strip()
        return Answer([para], para) if para else Answer([], "", error=_NO_ANSWER)
    own = [k for k, at in enumerate(found) if not reported(text, at)] or [len(found) - 1]
    lines = []
    for k in own:  # each line's paraphrase and list stay between its neighbouring "Answer List"s
        lo = found[k - 1] + len(_LIST) if k else 0
        hi = found[k + 1] if k + 1 < len(found) else len(text)
        lines.append(_read_line(text, low, found[k], lo, hi))
    declared = [line for line in lines if line[0].error is None]
    if not declared:
        return lines[-1][0]
    echoes = prompt_answer_lines()
    declared = [line for line in declared[:-1] if _line_key(line[0]) not in echoes] + declared[-1:]
    chosen, _, prev_end = declared[0]
    for a, start, end in declared[1:]:  # a later different answer counts only after a revision (contract, rule 2)
        if _answer_key(a) != _answer_key(chosen) and not revised(text, prev_end, start):
            return Answer([], "", error=f"ambiguous: two different answers of its own, "
                                        f"{chosen.answers or ['Unknown']} and then {a.answers or ['Unknown']}")
        chosen, prev_end = a, end
    return chosen


_SOURCE_NAMES = {"text": "text", "wikipedia": "text", "kg": "kg", "wikidata": "kg",
                 "knowledge graph": "kg", "web": "web", "google": "web"}
_SOURCE_WORDS = {word: re.compile(rf"\b{word}\b") for word in _SOURCE_NAMES}


def parse_sources(reply: str, allowed: list[str]) -> list[str] | None:
    """Sources named in a source-selection reply (``Wikipedia``/``Text``,
    ``Wikidata``/``KG``, ``Google``/``Web``), restricted to ``allowed`` and in
    that order; ``None`` when the reply names none of them (a parse failure).
    Reads the first :data:`MAX_SOURCE_CHARS` characters; never raises.

    >>> parse_sources("Selected: [Google, Wikipedia]", ["text", "kg", "web"])
    ['text', 'web']
    """
    if not isinstance(reply, str):
        return None
    text = reply[:MAX_SOURCE_CHARS].lower()
    found = {canon for word, canon in _SOURCE_NAMES.items() if _SOURCE_WORDS[word].search(text)}
    chosen = [s for s in allowed if s in found]
    return chosen or None
