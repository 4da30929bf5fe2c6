"""Pure parsers for grader replies. Failures are returned, never guessed.

Every parser here is *total* and *linear*: it accepts any ``str`` (anything
else is treated as an empty reply), never raises, reads at most a fixed
number of leading characters (the ``MAX_*_CHARS`` caps below; the rest is
ignored as if the reply had been truncated there) and uses no regex with
nested quantifiers. JSON is only handed to ``json.loads`` for balanced
``{...}``/``[...]`` spans found by a single linear scan, nested at most
:data:`MAX_JSON_DEPTH` levels, so deep brackets cannot recurse.

* :func:`parse_claims` -- Table 7 replies (decomposition); see its docstring
  for what is a claim and what is chatter.
* :func:`parse_label` -- Table 8 replies (one label); rule: the grader's
  **last** verdict, a standalone verdict winning over words in the explanation.
* :func:`parse_label_list` -- replies of the all-documents-in-one-call variant.
* :func:`parse_table14_choice` -- Table 14 replies (regenerated binary
  choice: ``B – The placenta`` then ``Justification: ...``).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from conflict_eval.answers import ChoiceParse, parse_choice, revised, revision_before
from conflict_eval.records import LETTERS

LABELS = ("SUPPORTS", "CONTRADICTS", "IRRELEVANT")
_ALIASES = {"SUPPORT": "SUPPORTS", "SUPPORTED": "SUPPORTS", "CONTRADICT": "CONTRADICTS",
            "CONTRADICTED": "CONTRADICTS"}

#: Characters of a label reply that are read (a 512-token grader reply is ~2.5k).
MAX_LABEL_CHARS = 20_000
#: Characters of an all-documents reply that are read.
MAX_LABEL_LIST_CHARS = 60_000
#: Characters of a decomposition reply that are read.
MAX_CLAIMS_CHARS = 50_000
#: Claims kept from one decomposition (or sentence split); more are dropped and counted.
MAX_CLAIMS = 100
#: Characters of a Table 14 reply that are read.
MAX_CHOICE_CHARS = 8_000
#: JSON spans nested deeper than this are not parsed.
MAX_JSON_DEPTH = 20
#: At most this many JSON spans are handed to the JSON decoder per reply.
MAX_JSON_ATTEMPTS = 500

_QUOTES = "\"'“”‘’`"
_MARKUP = "*_#>~" + _QUOTES


@dataclass(frozen=True)
class LabelParse:
    label: str | None
    snippet: str = ""
    reasoning: str = ""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.label is not None


def _text(reply: object, cap: int) -> str:
    return reply[:cap] if isinstance(reply, str) else ""


def _preview(text: str) -> str:
    return repr(text[:80])


# --------------------------------------------------------------------------- JSON spans

_JSON_TOKEN = re.compile(r'[\[\]{}"\\]')


def _json_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every balanced ``{...}``/``[...]`` span (at most
    :data:`MAX_JSON_DEPTH` levels inside), sorted by start. One pass; double
    quotes open JSON strings only inside a span (prose quotes are ignored);
    a mismatched closer abandons every open span."""
    starts: list[int] = []  # open spans: start, expected closer, depth of the deepest span inside
    closers: list[str] = []
    inner: list[int] = []
    spans: list[tuple[int, int]] = []
    in_string, skip = False, -1
    for m in _JSON_TOKEN.finditer(text):
        i = m.start()
        if i < skip:
            continue
        ch = m.group()
        if in_string:
            if ch == "\\":
                skip = i + 2
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = bool(starts)
        elif ch == "{" or ch == "[":
            starts.append(i)
            closers.append("}" if ch == "{" else "]")
            inner.append(0)
        elif ch != "\\" and starts:
            if closers[-1] != ch:
                starts.clear()  # a mismatched closer: no open span is JSON
                closers.clear()
                inner.clear()
                continue
            start, depth = starts.pop(), inner.pop()
            closers.pop()
            if inner and inner[-1] <= depth:
                inner[-1] = depth + 1
            if depth < MAX_JSON_DEPTH:
                spans.append((start, i + 1))
    spans.sort()
    return spans


_DECODER = json.JSONDecoder(strict=False)  # strict=False: raw newlines inside strings


def _loads(chunk: str):
    try:
        return True, _DECODER.decode(chunk)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError; so is a >4300-digit int
        pass
    if "“" in chunk or "”" in chunk:  # JSON written with curly quotes
        try:
            return True, _DECODER.decode(chunk.replace("“", '"').replace("”", '"'))
        except (ValueError, RecursionError):
            pass
    return False, None


def _json_values_at(text: str) -> Iterator[tuple[int, int, object]]:
    """Outermost JSON values in ``text`` in order, as ``(start, end, value)``:
    a span inside one that parsed is not returned again; inside one that did
    not parse, it is tried. Only spans holding a string (a ``"`` or ``“``) are
    tried, at most :data:`MAX_JSON_ATTEMPTS` of them."""
    covered, attempts = -1, 0
    for start, end in _json_spans(text):
        if start < covered:
            continue
        chunk = text[start:end]
        if '"' not in chunk and "“" not in chunk and not chunk.startswith("[]"):
            continue
        attempts += 1
        if attempts > MAX_JSON_ATTEMPTS:
            return
        ok, value = _loads(chunk)
        if ok:
            covered = end
            yield start, end, value


def _json_values(text: str) -> Iterator[object]:
    """The values of :func:`_json_values_at`."""
    for _, _, value in _json_values_at(text):
        yield value


# --------------------------------------------------------------------------- labels

def normalise_label(value: object) -> str | None:
    """``SUPPORTS``/``CONTRADICTS``/``IRRELEVANT`` from a grader's label
    (any case, wrapped in markup, quotes or ``<>``, trailing ``.``; the
    singular/past forms SUPPORT(ED), CONTRADICT(ED) too), else ``None``."""
    if not isinstance(value, str) or len(value) > 200:
        return None
    word = value.strip().strip(_MARKUP + "<>.!:[]() \t\n").upper()
    word = _ALIASES.get(word, word)
    return word if word in LABELS else None


_ANSWER_KEYS = ("answer", "label", "verdict")


def _answer_of(obj: dict) -> tuple[bool, object]:
    """``(has_verdict, value)``: the ``answer`` (else ``label``/``verdict``)
    field, keys case-insensitive; the template placeholder
    ``<SUPPORTS|CONTRADICTS|IRRELEVANT>`` is not a verdict."""
    keys = {k.lower(): k for k in obj if isinstance(k, str)}
    for name in _ANSWER_KEYS:
        if name in keys:
            value = obj[keys[name]]
            if isinstance(value, str) and "|" in value:
                return False, None
            return True, value
    return False, None


def _field(obj: dict, name: str) -> str:
    value = obj.get(name)
    return value if isinstance(value, str) else ""


def _label_from_object(obj: dict) -> LabelParse:
    _, raw = _answer_of(obj)
    label = normalise_label(raw)
    if label is None:
        return LabelParse(None, error=f"unknown label {str(raw)[:80]!r}")
    return LabelParse(label, snippet=_field(obj, "document_snippet"), reasoning=_field(obj, "reasoning"))


_DOC_OPEN = re.compile(r"<\s*document\b", re.IGNORECASE)
_DOC_CLOSE = re.compile(r"<\s*/\s*document\s*>", re.IGNORECASE)


def _drop_document_blocks(text: str) -> str:
    """Text without closed ``<document ...>...</document>`` blocks (a grader
    echoing the document it was shown)."""
    parts, pos = [], 0
    while True:
        o = _DOC_OPEN.search(text, pos)
        if o is None:
            break
        c = _DOC_CLOSE.search(text, o.end())
        if c is None:
            break
        parts.append(text[pos:o.start()])
        pos = c.end()
    parts.append(text[pos:])
    return " ".join(parts)


# "Answer: SUPPORTS", "**Final answer:** contradicts", "the answer is
# CONTRADICTS", '"answer": "IRRELEVANT"' (also inside broken or truncated
# JSON). Adjacent quantifiers use disjoint character classes, so a long run of
# white space cannot backtrack.
_TEXT_VERDICT = re.compile(
    r"(?<![A-Za-z])(?:final\s)?(?:answer|label|verdict)(?:[\"“”'*_]{0,6}\s{0,20}[:：=]|\sis\b:?|\swould\sbe\b:?)"
    r"[\"“”'*_`<\s]{0,100}([A-Za-z]+)(?![A-Za-z|])",
    re.IGNORECASE)


# a label as the reply's first word: "IRRELEVANT ...", "**Irrelevant** - ...", "Supports. ..."
_LEADING_LABEL = re.compile(r"[\s*_#>`\"'“‘\[(<]{0,100}([A-Za-z]+)(?![A-Za-z])([*_`\"'”’\])>]*)([^\n]?)")


def _leading_label(text: str) -> str | None:
    """The reply's first word when it is a verdict: a label in capitals, or in
    any case followed directly by a separator (``.``, ``:``, ``,``, a dash,
    the end of the line) -- not "Irrelevant details aside, ..."."""
    m = _LEADING_LABEL.match(text)
    if m is None or normalise_label(m.group(1)) is None:
        return None
    word, after = m.group(1), m.group(3)
    if word.isupper() or after in ("", ".", ":", ",", ";", "-", "–", "—", "!", "\r", "\n") or (
            after == " " and text[m.end():m.end() + 2][:1] in ("-", "–", "—", "(")):
        return word
    return None


#: A label joined to another one: "SUPPORTS and CONTRADICTS", "supports / contradicts".
_JOINED_LABEL = re.compile(r"[*_`\"'”’]{0,3}[ \t]{0,3}(?:and|or|nor|/|,|&)[ \t]{0,3}[*_`\"'“‘]{0,3}"
                           r"(supports?|supported|contradicts?|contradicted|irrelevant)(?![A-Za-z])", re.IGNORECASE)
#: A label word anywhere (read as a verdict only right after a revision).
_LABEL_WORD = re.compile(r"(?<![A-Za-z])(supports?|supported|contradicts?|contradicted|irrelevant)(?![A-Za-z])",
                         re.IGNORECASE)
_SEPARATORS = ("", ".", ":", ",", ";", "-", "–", "—", "!", "\r", "\n")


def _verdict_word(text: str, start: int, end: int) -> bool:
    """Whether the label word ``text[start:end]`` stands as a verdict: in
    capitals, or followed by a separator (not "contradicts the claim")."""
    after = text[end:end + 1]
    return text[start:end].isupper() or after in _SEPARATORS or (
        after in (" ", "*", "_", "`", "\"", "'") and text[end:end + 5].strip(" *_`\"'")[:1] in _SEPARATORS)


def _joined(text: str, end: int, word: str) -> bool:
    """Whether the label ``word`` ending at ``end`` is joined to a different
    label ("SUPPORTS and CONTRADICTS"): a hedge across labels."""
    m = _JOINED_LABEL.match(text, end)
    return m is not None and normalise_label(m.group(1)) != normalise_label(word)


_LINE_RE = re.compile(r"[^\n]+")

Signal = tuple[int, object, bool, bool]
"""position, the verdict (a word, or a JSON object), whether it is explicit,
whether it is joined to another label (ambiguous)"""


def _text_verdicts(text: str, skip: list[tuple[int, int]]) -> list[Signal]:
    """The textual verdicts of ``text`` outside the JSON spans ``skip``, in order.

    Explicit: a label as the reply's first word, a line that is nothing but a
    label, an ``answer/label/verdict`` field or statement (``Answer: X``,
    ``the correct label is X``, ``Final answer: X``), and a label word right
    after a revision (``SUPPORTS. Actually, CONTRADICTS``). Not explicit: a
    hypothetical ``... the label would be X`` in an explanation.
    """
    found: list[Signal] = []
    m = _LEADING_LABEL.match(text)
    first = _leading_label(text)
    if first:
        found.append((0, first, True, _joined(text, m.end(2), first)))
    for line in _LINE_RE.finditer(text):  # the non-empty lines (an empty one holds no label)
        word = line.group().strip().strip(_MARKUP + "<>.!:[]() \t\r")
        if len(word) <= 20 and normalise_label(word):
            found.append((line.start(), word, True, False))
    for m in _TEXT_VERDICT.finditer(text):
        explicit = " would be" not in " ".join(m.group(0).lower().split())
        found.append((m.start(), m.group(1), explicit, _joined(text, m.end(1), m.group(1))))
    for m in _LABEL_WORD.finditer(text):
        if revision_before(text, m.start()) and _verdict_word(text, m.start(), m.end()):
            found.append((m.start(), m.group(1), True, _joined(text, m.end(), m.group(1))))
    starts = [a for a, _ in skip]
    kept = []
    for signal in found:
        i = bisect.bisect_right(starts, signal[0]) - 1
        if i < 0 or signal[0] >= skip[i][1]:
            kept.append(signal)
    kept.sort(key=lambda v: v[0])
    return kept


def parse_label(reply: str) -> LabelParse:
    """The label of a Table 8 reply: the grader's **last explicit** verdict.

    Reads the first :data:`MAX_LABEL_CHARS` characters, without any closed
    ``<document>...</document>`` block (an echoed document). Every verdict
    of the reply is collected in text order:

    * *explicit* verdicts: a top-level JSON object (or object directly in a
      top-level list) with an ``answer`` field (else ``label``/``verdict``;
      keys in any case; curly-quoted JSON accepted; not the prompt's
      ``<SUPPORTS|CONTRADICTS|IRRELEVANT>`` placeholder); a label as the
      reply's first word (``IRRELEVANT - the document ...``; in capitals, or
      followed by a separator); a line that is nothing but a label; an
      ``answer``/``label``/``verdict`` field or statement anywhere outside
      JSON (``Answer: SUPPORTS``, ``**Final answer:** supports``, ``so the
      correct label is CONTRADICTS``, ``"answer": "CONTRADICTS"`` in broken
      or truncated JSON); and a label word right after a revision
      (``SUPPORTS. Actually, CONTRADICTS``, ``no, IRRELEVANT``);
    * *hypothetical* ones: ``... the label would be SUPPORTS`` in an
      explanation.

    The **last explicit verdict decides** (an object quoted earlier, or a
    verdict the grader then restated, is overridden by the final one); a
    hypothetical one counts only when there is no explicit one, and then all
    of them must agree. Statements whose word is not a label ("whether the
    answer is living room") are skipped while some verdict is a label. A
    decisive verdict joined to another label (``SUPPORTS and CONTRADICTS``,
    ``SUPPORTS or IRRELEVANT``) is ambiguous: a failure, never a pick.

    Labels in any case, in markup or quotes, and the singular forms SUPPORT /
    CONTRADICT (the paper's own text) are accepted. If the decisive verdict
    is not a label (``PARTIALLY SUPPORTS``, ``The document ...``) or there is
    none (prose, a reply cut before its answer), the result is a failure
    with ``error`` set; a label is never guessed from prose.
    """
    text = _drop_document_blocks(_text(reply, MAX_LABEL_CHARS))
    objects: list[Signal] = []
    parsed: list[tuple[int, int]] = []
    for start, end, value in _json_values_at(text):
        parsed.append((start, end))
        for obj in ([value] if isinstance(value, dict) else value if isinstance(value, list) else []):
            if isinstance(obj, dict) and _answer_of(obj)[0]:
                objects.append((start, obj, True, False))
    signals = sorted(objects + _text_verdicts(text, parsed), key=lambda v: v[0])
    if any(isinstance(v[1], dict) or normalise_label(v[1]) for v in signals):
        signals = [v for v in signals if isinstance(v[1], dict) or normalise_label(v[1])]
    if not signals:
        return LabelParse(None, error=f"no verdict (JSON 'answer' field, 'Answer: LABEL' or a label line) "
                                      f"in reply {_preview(text)}")
    explicit = [v for v in signals if v[2]]
    if not explicit:
        named = sorted({normalise_label(v[1]) or str(v[1]) for v in signals})
        if len(named) > 1:
            return LabelParse(None, error=f"ambiguous: the reply gives different labels ({', '.join(named)})")
    _, verdict, _, joined = (explicit or signals)[-1]
    if joined:
        return LabelParse(None, error=f"ambiguous: the verdict joins several labels ({str(verdict)[:80]!r} ...)")
    if isinstance(verdict, dict):
        return _label_from_object(verdict)
    label = normalise_label(verdict)
    return LabelParse(label) if label else LabelParse(None, error=f"unknown label {verdict[:80]!r}")


def _document_number(obj: dict, pos: int) -> int | None:
    """1-based document number of an object (``document``/``doc`` field: an
    integer, or a string such as ``"2"``, ``"Document 2"``), else ``pos + 1``
    when it has none; ``None`` if the field is unreadable."""
    keys = {k.lower(): k for k in obj if isinstance(k, str)}
    key = keys.get("document") or keys.get("doc") or keys.get("document_number")
    if key is None:
        return pos + 1
    value = obj[key]
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(?:doc(?:ument)?\s*)?#?\s*(\d{1,6})\s*", value[:40], re.IGNORECASE)
        return int(m.group(1)) if m else None
    return None


def _is_entry(x: object) -> bool:
    return (isinstance(x, dict) and _answer_of(x)[0]) or normalise_label(x) is not None


def _cell_number(cell: str) -> int | None:
    """``1``, ``**2**``, ``Doc 3``, ``Document #4`` -> the number (no regex: cells may be long)."""
    word = cell[:40].strip(_MARKUP + " \t").lower()
    for prefix in ("document", "doc"):
        if word.startswith(prefix):
            word = word[len(prefix):].strip(" \t.#")
            break
    word = word.lstrip("#").strip()
    return int(word) if word.isdigit() and len(word) <= 6 else None


def _table_entries(text: str) -> list[dict]:
    """Rows of a markdown table, one per document (``| 1 | **IRRELEVANT** | reason |``):
    a row counts when exactly one cell is a label; its document is the first
    cell that is a number, else its position among the rows (ours: a grader
    may answer the all-documents prompt with a table instead of JSON)."""
    rows: list[dict] = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = line.strip("|").split("|")
        labels = [label for label in map(normalise_label, cells) if label]
        if len(labels) != 1:
            continue
        numbers = [n for n in map(_cell_number, cells) if n is not None]
        rows.append({"document": numbers[0] if numbers else len(rows) + 1, "answer": labels[0]})
    return rows


def parse_label_list(reply: str, n_documents: int) -> list[LabelParse]:
    """One label per document from an all-documents reply.

    Reads the first :data:`MAX_LABEL_LIST_CHARS` characters. The labels are
    the **last** top-level JSON list (or list held by a top-level object,
    ``{"results": [...]}``) with at least one verdict entry: an object with
    an ``answer`` field or a bare label string. Without such a list, the
    top-level objects that carry both ``document`` and ``answer`` fields
    are used (one object per line); without those, the rows of a markdown
    table with a label cell (:func:`_table_entries`). Entries are matched to documents by
    their ``document`` number (1-based); without a number, by position. The
    last list is the last explicit marker; among one-per-line objects, a
    later object for a document after a revision ("Actually: {...}") replaces
    the earlier one. A document with no entry, an unknown label, or two
    entries that disagree with no revision between them gets a failure; so
    does every document when the reply holds no list.
    """
    n = n_documents if isinstance(n_documents, int) and n_documents > 0 else 0
    text = _drop_document_blocks(_text(reply, MAX_LABEL_LIST_CHARS))
    lists, loose, where = [], [], []
    for start, _, value in _json_values_at(text):
        if isinstance(value, dict):
            inner = [v for v in value.values() if isinstance(v, list) and any(_is_entry(x) for x in v)]
            if inner:
                lists.append(inner[-1])
            elif _answer_of(value)[0] and any(isinstance(k, str) and k.lower() in ("document", "doc")
                                              for k in value):
                loose.append(value)
                where.append(start)
        elif isinstance(value, list) and any(_is_entry(x) for x in value):
            lists.append(value)
    entries = lists[-1] if lists else loose or _table_entries(text)
    if not entries:
        return [LabelParse(None, error=f"no JSON list of labels in reply {_preview(text)}")] * n
    out: list[LabelParse | None] = [None] * n
    seen = [0] * n  # where a loose object's entry for each document was read
    for pos, entry in enumerate(entries):
        if isinstance(entry, dict):
            number = _document_number(entry, pos)
            parsed = _label_from_object(entry) if _answer_of(entry)[0] else None
        else:
            number = pos + 1
            label = normalise_label(entry)
            parsed = LabelParse(label) if label else None
        if parsed is None or number is None or not 1 <= number <= n:
            continue
        prev = out[number - 1]
        if prev is None or (not lists and loose and revised(text, seen[number - 1], where[pos])):
            out[number - 1] = parsed  # first, or a loose object after a revision ("Actually: {...}")
            seen[number - 1] = where[pos] if not lists and loose else 0
        elif prev.label != parsed.label:
            out[number - 1] = LabelParse(None, error=f"conflicting labels for document {number}: "
                                                     f"{prev.label or prev.error} and {parsed.label or parsed.error}")
    return [p if p is not None else LabelParse(None, error=f"no label for document {i + 1}")
            for i, p in enumerate(out)]


# --------------------------------------------------------------------------- claims

# list markers followed by white space: -, *, •, ·, +, –, 1., 1), (1), [1],
# a., a), (a), (A), A) -- not "A." (an initial: "J. K. Rowling") nor "2.5"
_LIST_MARKER = re.compile(
    r"(?:[-*•·+–—▪◦]|\(?\d{1,3}[.)]|\(\d{1,3}\)|\[\d{1,3}\]|\([a-zA-Z]\)|[a-z][.)]|[A-Z]\))(?=\s)\s*")
_CLAIM_PREFIX = re.compile(r"claims?(?:\s{0,3}#?\d{1,3})?\s{0,3}[:.)\-–]\s*", re.IGNORECASE)
_HEADING_WORDS = re.compile(r"(?:the\s)?(?:atomic\s|individual\s|extracted\s|identified\s|list\sof\s)?"
                            r"(?:claims?|statements?)(?:\smade)?(?:\sin\sthe\sreport)?(?:\s\(\d{1,3}\))?",
                            re.IGNORECASE)
_INTERJECTION = r"(?:sure|certainly|of course|okay|ok|absolutely|alright|great|yes)"
# an interjection alone ("Sure!") or a line announcing the claims ("Sure! Here
# are the claims made in the report.", "Below are the statements.")
_INTERJECTION_ONLY = re.compile(_INTERJECTION + r"[!.,]*", re.IGNORECASE)
_PREAMBLE = re.compile(
    r"(?:" + _INTERJECTION + r"[!.,]\s*)?"
    r"(?:here(?:'s| is| are)|below (?:is|are)|the following|these are|i (?:have|'ve)?\s?(?:identified|extracted|"
    r"broken|broke|found|listed)|i've (?:identified|extracted|broken|listed)|let me|breaking down)\b",
    re.IGNORECASE)
_CLOSER = re.compile(
    r"\(?(?:notes?|n\.b\.|explanation|disclaimer)\s{0,3}[:\-–]|"
    r"(?:let me know|i hope|hope this|feel free|if you (?:need|want|have)|please let|is there anything|"
    r"these (?:are|were) (?:all |the )?(?:the )?(?:claims|statements)|each (?:of these )?claim)",
    re.IGNORECASE)
# "Note that ..." / "Summary: ..." is a claim ("Note that the museum closed in 2001.") unless it
# talks about the list itself ("Note that these claims are opinions.", "Summary: I listed 5 claims.")
_NOTE_OR_SUMMARY = re.compile(r"\(?(?:(note that)\b|summary\s{0,3}[:\-–])\s*", re.IGNORECASE)
_META_WORDS = re.compile(
    r"\b(?:claims?|statements?|report|list(?:ed)?|above|below|these|those|both (?:are|of|claims)|all of|each of|"
    r"i|i've|we)\b", re.IGNORECASE)
_REFUSAL = re.compile(
    r"(?:i'?m sorry|i am sorry|sorry[,.!]|i apologi[sz]e|i cannot|i can'?t|i can not|i am unable|i'm unable|"
    r"i won'?t|unfortunately,? i|as an ai)",
    re.IGNORECASE)
_NONE_LINE = re.compile(r"(?:none|n/?a|no claims?(?: (?:found|identified|made))?|\[\s*\])\.?", re.IGNORECASE)


def _unwrap(line: str) -> str:
    """Strip surrounding markdown emphasis and quotes."""
    for _ in range(3):
        stripped = line.strip()
        for mark in ("**", "__", "*", "_", "`", '"', "“", "”"):
            if len(stripped) > 2 * len(mark) and stripped.startswith(mark) and stripped.endswith(mark):
                stripped = stripped[len(mark):-len(mark)]
                break
        stripped = stripped.strip()
        if stripped == line:
            break
        line = stripped
    if line[:1] in "“\"" and line[-1:] in "”\"" and len(line) > 2:
        line = line[1:-1].strip()
    return line


def _json_claims(text: str) -> list[str] | None:
    """Claims of a reply that is a JSON list of strings (or ``{"claims": [...]}``)."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`").strip()
        if stripped[:4].lower() == "json":
            stripped = stripped[4:]
    stripped = stripped.strip()
    if not stripped[:1] in "[{" or stripped[-1:] not in "]}":
        return None
    spans = _json_spans(stripped)
    if not spans or spans[0] != (0, len(stripped)):
        return None
    ok, value = _loads(stripped)
    if ok and isinstance(value, dict):
        keys = {k.lower(): k for k in value if isinstance(k, str)}
        value = value.get(keys.get("claims", ""), None)
    if ok and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    return None


def _claim_lines(text: str) -> tuple[list[tuple[int, str]], bool, bool]:
    """``([(marked, line)], saw_refusal, saw_none)`` for the candidate claim
    lines: fences, headings, preambles, closers and notes removed, list
    markers, ``Claims:`` prefixes and markdown stripped. ``marked`` = 1 for
    a list marker, 2 for a ``Claims:`` prefix only, else 0."""
    out: list[tuple[int, str]] = []
    refusal = none = False
    in_note = False
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("```"):
            in_note = False
            continue
        indented = raw[:1] in " \t"
        heading = line.startswith("#")
        line = line.lstrip("#>").strip()
        bold_line = len(line) > 4 and line.startswith("**") and line.endswith("**")
        marked = 0
        m = _LIST_MARKER.match(line)
        if m and m.end() < len(line):
            line, marked = line[m.end():], 1
        line = _unwrap(line)
        m = _CLAIM_PREFIX.match(line.lstrip("*_ "))
        if m:
            line, marked = line.lstrip("*_ ")[m.end():].strip(), marked or 2
            line = _unwrap(line.lstrip("*_ ").strip())
            m = _LIST_MARKER.match(line)  # "Claims: 1. X"
            if m and m.end() < len(line):
                line, marked = _unwrap(line[m.end():]), 1
        if not any(ch.isalnum() for ch in line):
            continue  # no word at all ("---", "[[[")
        note = _NOTE_OR_SUMMARY.match(line)
        if note and _META_WORDS.search(line, note.end()):
            in_note = True
            continue
        if note and not note.group(1):
            line = line[note.end():]  # "Summary: X" -> "X"
        if not note and _CLOSER.match(line):
            in_note = True
            continue
        if in_note and not marked:
            continue
        in_note = False
        bare = line.rstrip(":*_ ").strip()
        if not marked and _REFUSAL.match(line):
            refusal = True
            continue
        if _NONE_LINE.fullmatch(bare):
            none = True
            continue
        if _HEADING_WORDS.fullmatch(bare) or (not marked and line.rstrip("*_ ").endswith(":")):
            continue  # a heading or preamble ("Sure! Here are the claims:", "**Claims**")
        if (heading or bold_line) and not marked and bare[-1:] not in ".!?":
            continue  # a markdown heading without a full stop
        if not marked and (_INTERJECTION_ONLY.fullmatch(bare) or (
                _PREAMBLE.match(line) and any(w in line.lower() for w in ("claim", "statement")))):
            continue  # "Sure!", "Sure! Here are the claims made in the report."
        out.append((marked, line if not indented else " " + line))
    return out, refusal, none


def _parse_claims(reply: str, truncated: bool = False) -> tuple[list[str], str | None, int, int]:
    """``(claims, error, dropped over MAX_CLAIMS, lost)``; ``lost`` = 1 when
    ``truncated`` (the reply hit its token limit) and its last claim, cut
    mid-sentence, was dropped."""
    text = _text(reply, MAX_CLAIMS_CHARS)
    from_json = _json_claims(text)
    if from_json is not None:
        lines, refusal, none = [(1, c) for c in from_json], False, not from_json
    else:
        lines, refusal, none = _claim_lines(text)
    bullets = sum(1 for marked, _ in lines if marked == 1)
    claims: list[str] = []
    for marked, line in lines:
        if not marked and claims and claims[-1].rstrip("*_ ").endswith(":"):
            claims[-1] = f"{claims[-1].rstrip('*_ ')} {line.strip()}"  # an item ending with ":" continues
            continue
        if bullets and not marked:
            # in a list, an indented unmarked line continues the previous
            # item; any other unmarked line is chatter around the list
            if line.startswith(" ") and claims:
                claims[-1] = f"{claims[-1]} {line.strip()}"
            continue
        claims.append(line.strip())
    # an item ending with ":" that nothing continued is a heading ("- **Economy:**")
    claims = [c for c in claims if not c.rstrip("*_ ").endswith(":")]
    seen: set[str] = set()
    claims = [c for c in claims if c and not (c in seen or seen.add(c))]
    # the reply hit its token limit: a last claim without final punctuation was cut mid-sentence
    lost = 0
    if truncated and claims and claims[-1][-1:] not in ".!?\"”)":
        claims, lost = claims[:-1], 1
    if not claims:
        why = "refusal" if refusal else "empty claim list" if none else "no claims found"
        return [], f"{why} in reply {_preview(text)}", 0, lost
    dropped = max(0, len(claims) - MAX_CLAIMS)
    return claims[:MAX_CLAIMS], None, dropped, lost


def parse_claims(reply: str) -> tuple[list[str], str | None]:
    """Claims listed in a Table 7 reply, in order, without duplicates.

    Returns ``(claims, error)``; ``error`` is set (and claims empty) on a
    decomposition failure: a refusal ("Sorry, I cannot help with that."), an
    empty list ("None", "[]") or no claim at all.

    Reads the first :data:`MAX_CLAIMS_CHARS` characters; keeps at most
    :data:`MAX_CLAIMS` claims. What a proper reply looks like (Table 7):
    ``Claims: <claim>`` lines, or ``Claims:`` followed by one claim per
    line. Also accepted: markdown lists (``-``, ``*``, ``•``, ``1.``,
    ``1)``, ``(a)``), ``Claim 1:`` prefixes, bold/quoted claims, code
    fences, a JSON list of strings. Dropped: empty lines, fences, headings
    and preambles (a line with no letter or digit, a line ending in ``:``, ``**Claims**``, ``# ...``, "Sure!
    Here are the claims made in the report."), notes and closers ("Note:
    ...", "Let me know if ..."), refusals. When the reply uses list markers,
    only the marked lines are claims (an indented unmarked line continues
    the item above it; any line continues an item ending with ``:``, and an
    item ending with ``:`` that nothing continues is a heading). "Note that
    X" and "Summary: X" are claims unless they talk about the list ("Note
    that these claims ..."). A last claim without final punctuation is
    kept: only the pipeline, which knows the reply hit its token limit,
    drops such a claim and counts it (``_parse_claims(truncated=True)``).
    """
    claims, error, _, _ = _parse_claims(reply)
    return claims, error


# --------------------------------------------------------------------------- sentences

#: Characters of a response that :func:`split_sentences` reads.
MAX_SENTENCE_CHARS = 100_000
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")


def split_sentences(text: str) -> list[str]:
    """Rule-based sentences (break after ``.``/``!``/``?`` + whitespace, or
    at a newline) of the first :data:`MAX_SENTENCE_CHARS` characters."""
    parts = _SENTENCE_BREAK.split(_text(text, MAX_SENTENCE_CHARS).strip())
    return [p.strip() for p in parts if p.strip()]


# --------------------------------------------------------------------------- Table 14

def parse_table14_choice(reply: str, options: Sequence[str], letters: str | None = None) -> ChoiceParse:
    """The chosen letter of a Table 14 reply (regenerated binary choice).

    Table 14 asks for a first line that is exactly one of ``A – <option>``
    and a second line ``Justification: ...``. Reads the first
    :data:`MAX_CHOICE_CHARS` characters. ``Justification:`` lines (which cite
    documents, never choose) are dropped, and the rest is read by the shared
    letter reader :func:`conflict_eval.answers.parse_choice` with the option
    texts: its leading-choice rule reads ``B – The placenta``,
    ``**b: the placenta**``, ``- A – The uterus``, ``(B)`` after a preamble
    ending in ``:``; ``Answer: A – The uterus`` and ``Final answer: **b**`` are
    answer phrases; a line that is exactly one option's text is read by the
    option-text fallback. A letter followed by the text of a *different*
    option (``A – The placenta``) is a failure (``ambiguous``).
    """
    options = [o for o in options if isinstance(o, str)]
    letters = letters or LETTERS[: len(options)]
    if not letters:
        return ChoiceParse(None, False, "no options to choose from")
    text = _text(reply, MAX_CHOICE_CHARS)
    kept = [line for line in text.split("\n")
            if not line.strip().strip("`").strip().lower().lstrip("*_ ").startswith("justification")]
    return parse_choice("\n".join(kept), letters, options=list(options))


def parse_rag_choice(reply: str, options: Sequence[str], letters: str | None = None) -> ChoiceParse:
    """A Table 12/13 reply (``(A)`` or ``(B)``): :func:`conflict_eval.answers.parse_choice`
    on the first :data:`MAX_CHOICE_CHARS` characters (the prompt asks for the
    letter only; the cap bounds the work on any reply)."""
    options = [o for o in options if isinstance(o, str)]
    if not (letters or options):
        return ChoiceParse(None, False, "no options to choose from")
    return parse_choice(_text(reply, MAX_CHOICE_CHARS), letters or LETTERS[: len(options)], options=options)
