"""What a plan's leaf says: AtomR's operator calls ``Search``/``Relate``/``Filter``,
references ``[i]`` to answered nodes and sibling-reasoning marks (AtomR §3.2,
Figure 5), plus the limits and the one error every tree reader shares.
See :mod:`conflict_eval.plugins.atomr.parse` for the format as a whole."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal, Union

OPERATORS = ("Search", "Relate", "Filter")
SIBLING_MARKS = ("[END]", "[SIB]", "[DR]")
_SIBLING_MARK = re.compile(r"(?i)\[(?:END|SIB|DR)\]")

MAX_TREE_CHARS = 100_000
"""Longest planner reply (or tree text) :func:`parse_tree` reads; longer is rejected."""
MAX_NODES = 300
"""Most nodes in a tree; the authors' trees have at most a few dozen."""
MAX_OPERATOR_CHARS = 4_000
"""Longest leaf text read as an operator call (longer: the node degrades)."""
MAX_NESTING = 4
"""Deepest nesting of operator calls, ``Filter(Relate(Search(...)))`` is 3."""
NOT_A_TREE_MARKS = ("TREE_PARSING_ERROR",)


class TreeError(ValueError):
    """The planner's reply is not an Atomic Reasoning Tree; the message says why."""


@dataclass(frozen=True)
class Ref:
    """``[i]``: the answer of the node labelled ``i`` (``"3"``, ``"3.1"``)."""

    label: str


@dataclass(frozen=True)
class OperatorCall:
    name: Literal["Search", "Relate", "Filter"]
    args: tuple[Any, ...]
    """Each a quoted string (may contain ``[i]``), a :class:`Ref`, a list of
    strings/refs, or (before :func:`parse_tree` lifts it into a child node)
    a nested :class:`OperatorCall`."""

    def refs(self) -> list[str]:
        """Labels referenced by the arguments (``Ref`` and ``[i]`` inside strings)."""
        out: list[str] = []
        for a in self.args:
            for x in (a if isinstance(a, list) else [a]):
                if isinstance(x, Ref):
                    out.append(x.label)
                elif isinstance(x, str):
                    out += ref_labels(x)
                elif isinstance(x, OperatorCall):
                    out += x.refs()
        return out

    def text(self) -> str:
        return f"{self.name}({', '.join(_show_arg(a) for a in self.args)})"


def _show_arg(a) -> str:
    if isinstance(a, Ref):
        return f"[{a.label}]"
    if isinstance(a, OperatorCall):
        return a.text()
    if isinstance(a, list):
        return "[" + ", ".join(_show_arg(x) for x in a) + "]"
    return json.dumps(a, ensure_ascii=False)


Arg = Union[str, Ref, list, OperatorCall]

_REF = re.compile(r"\[\s?(\d{1,4}(?:\.\d{1,4}){0,3})\s?\]")


def ref_labels(text: str) -> list[str]:
    """``[3]``, ``[3.1]`` labels in ``text``, in order (bounded pattern, linear)."""
    return _REF.findall(text[:MAX_TREE_CHARS])





_OPEN_QUOTES = {'"': '"”“', "“": '"”“', "”": '"”“', "'": "'’‘", "‘": "'’‘", "’": "'’‘"}
_NAME_START = re.compile(r"(?i)\b(search|relate|filter)\s{0,8}\(")


class _OpParser:
    """Hand-written recursive-descent parser; recursion only on nested calls (<= MAX_NESTING)."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def fail(self, why: str):
        raise TreeError(f"operator call {self.s[:120]!r}: {why}")

    def ws(self) -> None:
        s, i = self.s, self.i
        while i < len(s) and s[i].isspace():
            i += 1
        self.i = i

    def call(self, depth: int) -> OperatorCall:
        if depth > MAX_NESTING:
            self.fail(f"operator calls nested deeper than {MAX_NESTING}")
        self.ws()
        s, start = self.s, self.i
        while self.i < len(s) and (s[self.i].isalnum() or s[self.i] == "_"):
            self.i += 1
        name = s[start:self.i]
        canon = {o.lower(): o for o in OPERATORS}.get(name.lower())
        if not name:
            self.fail("no function name")
        if canon is None:
            self.fail(f"unknown operator {name!r}; expected one of {', '.join(OPERATORS)}")
        self.ws()
        if self.i >= len(s) or s[self.i] != "(":
            self.fail(f"{name} is not followed by '('")
        self.i += 1
        args: list[Arg] = []
        while True:
            self.ws()
            if self.i >= len(s):
                self.fail("the call is not closed with ')' (truncated?)")
            if s[self.i] == ")":
                self.i += 1
                break
            args.append(self.arg(depth))
            self.ws()
            while self.i < len(s) and s[self.i] == "+":  # "capital in " + [1]
                self.i += 1
                self.ws()
                nxt = self.arg(depth)
                args[-1] = " ".join((_show_arg(args[-1]).strip('"') + " " + _show_arg(nxt).strip('"')).split())
                self.ws()
            if self.i < len(s) and s[self.i] == ",":
                self.i += 1
            elif self.i < len(s) and s[self.i] == ")":
                continue
            elif self.i >= len(s):
                self.fail("the call is not closed with ')' (truncated?)")
            else:
                self.fail(f"unexpected {s[self.i]!r} after argument {len(args)}")
        lo, hi = {"Search": (1, 2), "Relate": (2, 2), "Filter": (2, 2)}[canon]
        if not lo <= len(args) <= hi:
            self.fail(f"{canon} takes {lo if lo == hi else f'{lo}-{hi}'} arguments, got {len(args)}")
        return OperatorCall(canon, tuple(args))  # type: ignore[arg-type]

    def arg(self, depth: int):
        s = self.s
        # a keyword name (``name="x"``) is ignored
        j = self.i
        while j < len(s) and (s[j].isalnum() or s[j] == "_"):
            j += 1
        k = j
        while k < len(s) and s[k] == " ":
            k += 1
        if j > self.i and k < len(s) and s[k] == "=":
            self.i = k + 1
            self.ws()
        if self.i >= len(s):
            self.fail("missing argument")
        ch = s[self.i]
        if ch in _OPEN_QUOTES:
            return self.string()
        if ch == "[":
            return self.bracket()
        m = _NAME_START.match(s, self.i)
        if m:
            return self.call(depth + 1)
        return self.bare(",)")

    def string(self) -> str:
        """A quoted string; it closes at a matching quote followed by ``,``, ``)``,
        ``]`` or the end (so unescaped inner quotes, as planners write, survive)."""
        s = self.s
        closers = _OPEN_QUOTES[s[self.i]]
        i = self.i + 1
        out = []
        while i < len(s):
            ch = s[i]
            if ch == "\\" and i + 1 < len(s):
                out.append(s[i + 1])
                i += 2
                continue
            if ch in closers:
                k = i + 1
                while k < len(s) and s[k] == " ":
                    k += 1
                if k >= len(s) or s[k] in ",)]+":
                    self.i = i + 1
                    return "".join(out)
                if k > i + 1 and (s[k] in _OPEN_QUOTES or s[k] == "["):  # "a" "b": two arguments, no comma
                    self.fail(f"missing ',' after the argument {''.join(out)[:60]!r}")
            out.append(ch)
            i += 1
        self.fail("a quoted argument is not closed (truncated?)")

    def bracket(self):
        """``[i]`` (a reference) or a list of strings / references / unquoted items."""
        s = self.s
        self.i += 1
        items: list = []
        while True:
            self.ws()
            if self.i >= len(s):
                self.fail("a list argument is not closed with ']'")
            ch = s[self.i]
            if ch == "]":
                self.i += 1
                break
            if ch in _OPEN_QUOTES:
                items.append(self.string())
            elif ch == "[":
                m = _REF.match(s, self.i)
                if not m:
                    self.fail("lists inside lists are not operator arguments")
                items.append(Ref(m.group(1)))
                self.i = m.end()
            else:
                items.append(self.bare(",]"))
            self.ws()
            if self.i < len(s) and s[self.i] == ",":
                self.i += 1
        if len(items) == 1 and isinstance(items[0], str) and re.fullmatch(r"\d{1,4}(?:\.\d{1,4}){0,3}", items[0]):
            return Ref(items[0])
        if len(items) == 1 and isinstance(items[0], Ref):
            return items[0]
        if not items:
            self.fail("empty list argument")
        return items

    def bare(self, stops: str) -> str:
        s, start, depth = self.s, self.i, 0
        while self.i < len(s):
            ch = s[self.i]
            if ch == "(":
                depth += 1
            elif ch == ")" and depth:
                depth -= 1
            elif ch in stops and depth == 0:
                break
            self.i += 1
        text = s[start:self.i].strip()
        if not text:
            self.fail("empty argument")
        return text


def parse_operator(text: str) -> OperatorCall:
    """Parse one operator call: ``Search("Shakira", "musician")``,
    ``Relate([4], "studio albums")``, ``Filter([1], "released between 2000 and 2010")``,
    ``Search([2], "film director")``, ``Filter(Relate([4], "actors"), "English-American")``.

    Tolerant of what planners write: lower-case names, curly or single
    quotes, unescaped quotes inside a quoted argument, unquoted arguments,
    ``[i]`` anywhere, a keyword name, text after the closing parenthesis.
    Reads at most :data:`MAX_OPERATOR_CHARS` characters. The only failure is
    :class:`TreeError` with the reason (unknown operator, wrong arity,
    unclosed call, nesting deeper than :data:`MAX_NESTING`).

    >>> parse_operator('Relate([4], "studio albums")')
    OperatorCall(name='Relate', args=(Ref(label='4'), 'studio albums'))
    """
    if not isinstance(text, str):
        raise TreeError(f"operator call must be text, got {type(text).__name__}")
    if len(text) > MAX_OPERATOR_CHARS:
        raise TreeError(f"operator call longer than {MAX_OPERATOR_CHARS} characters")
    m = _NAME_START.search(text)
    if not m:
        raise TreeError(f"operator call {text[:120]!r} is not of the form Search/Relate/Filter(...)")
    p = _OpParser(text[m.start():])
    try:
        return p.call(0)
    except TreeError:
        raise
    except Exception as exc:  # defensive: the parser is total by construction
        raise TreeError(f"operator call {text[:120]!r}: {type(exc).__name__}") from None
