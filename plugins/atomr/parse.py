"""Pure parsers for AtomR: the Atomic Reasoning Tree, operator calls, answers.

Every parser here is *total* and *linear*: it reads at most a documented
number of characters, never raises anything but its documented failure
(:class:`TreeError` for trees and operator calls; ``Answer.error`` /
``None`` for the others), uses no regular expression with nested
quantifiers over unbounded text, and never recurses on the input's
nesting depth (nested operator calls are limited to :data:`MAX_NESTING`).

Tree formats (both are what planners write; AtomR §3.2 and Figure 5)
-------------------------------------------------------------------
**Flat** (the authors' planner output and few-shot examples, THU-KEG/AtomR
``src/prompts/tree_generation_prompts.py`` and the released
``results/released/*_trees.jsonl``): one JSON object whose *first* key is
the root question and where every node is a top-level key::

    {"Q": ["1. q1", "2. q2"], "1. q1": "Search(\\"x\\")", "2. q2": "Relate([1], \\"r\\")"}

A non-leaf maps to the list of its children's question strings; each child
string is looked up among the keys (exact text, then case/space-insensitive
text, then the same text without its number, then the same number "3."
when unique or the best word overlap among keys with that number), because the
authors' own examples have children whose list text and key text differ.
A child that matches no key is *missing*: that node degrades (below).

**Nested** (this project's earlier format): a node maps to a list of
one-key objects ``{"1. q1": ...}`` (or one object with several keys).
Both can mix. A Python literal (single quotes, as in one of the authors'
examples) is read when the text is not JSON. A reply truncated at the
token limit is closed (open string and brackets) and read as far as it
goes (``Tree.repaired`` says so); the cut nodes degrade.

Leaves
------
* an operator call ``Search(name[, descriptor])``, ``Relate(head, relation)``,
  ``Filter(entities, condition)`` (:func:`parse_operator`): arguments may be
  quoted strings, references ``[i]``, lists, unquoted text, or nested calls
  ``Filter(Relate([1], "x"), "y")``; a nested call becomes a child node of
  the leaf that is executed first (inner-first) and referenced by the outer
  call;
* a sibling-reasoning mark ``[END]`` (authors' prompts and released trees),
  ``[SIB]`` (the paper) or ``[DR]``, anywhere in the leaf text;
* free text that references answered nodes ("Given answers of [6] and [8],
  compare ..."), read as sibling reasoning over the referenced nodes.

Numbering: a question's number ("3.", "3.1.", "3)") is its *label*;
``[3]`` / ``[3.1]`` in any question or operator argument refers to the
answer of the node with that label answered most recently *before* the
referring node in post-order. Unnumbered children are allowed (they cannot
be referenced).

Per-node degradation (``Node.problem``): a leaf that is neither an
operator call nor a sibling leaf, an operator call that cannot be read, a
missing child, an empty child list, or an operator reference to no answered
node. The executor answers such a node with Direct RAG on the node's
question and records it; the rest of the tree runs.

Rejected (:class:`TreeError`, the message says why) is only what is not a
tree: no JSON object, an object that does not map a question to a
decomposition, the text "TREE_PARSING_ERROR", more than :data:`MAX_NODES`
nodes, input over :data:`MAX_TREE_CHARS`, or a tree none of whose leaves
has an operator call or a sibling mark.

Answers (Figures 8-11) end with ``So the answer is: (1) Paraphrase Answer:
...; (2) Answer List: [...]``; see :func:`parse_answer`.
"""

from __future__ import annotations

import ast
import json
import re
from collections import deque
from dataclasses import dataclass, field
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
MAX_ANSWER_CHARS = 20_000
""":func:`parse_answer` reads the last this-many characters of a reply."""
MAX_SOURCE_CHARS = 4_000
""":func:`parse_sources` reads the first this-many characters."""
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


@dataclass
class Node:
    index: int
    """Unique id in breadth-first order (root 0); equals the label in a well-numbered tree."""
    question: str
    label: str = ""
    """The number the planner wrote ("3", "3.1"); "0" for the root; "" when unnumbered."""
    children: list[Node] = field(default_factory=list)
    operator: OperatorCall | None = None
    sibling: bool = False
    """A sibling-reasoning leaf ([END]/[SIB]/[DR] or free text with references)."""
    leaf_text: str | None = None
    """The leaf's text as written (operator call, mark or free text)."""
    problem: str | None = None
    """Why this node cannot run as planned: it degrades to Direct RAG on its question."""
    parent: int | None = None
    synthetic: bool = False
    """Created from a nested operator call inside its parent's leaf."""

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def refs(self) -> list[str]:
        found = ref_labels(self.question)
        if self.operator is not None:
            found += self.operator.refs()
        elif self.leaf_text:
            found += ref_labels(self.leaf_text)
        seen: list[str] = []
        for r in found:
            if r not in seen:
                seen.append(r)
        return seen


@dataclass
class Tree:
    root: Node
    nodes: dict[int, Node]
    format: str = "flat"
    """``flat`` (authors' format), ``nested`` (this project's) or ``single`` (one node)."""
    repaired: str | None = None
    """Set when a truncated reply was closed to be read."""
    warnings: list[str] = field(default_factory=list)

    def post_order(self) -> list[Node]:
        out: list[Node] = []
        stack: list[tuple[Node, bool]] = [(self.root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                out.append(node)
                continue
            stack.append((node, True))
            for c in reversed(node.children):
                stack.append((c, False))
        return out

    def resolve(self, label: str, before: Node, order: dict[int, int] | None = None) -> Node | None:
        """The node labelled ``label`` answered most recently before ``before`` (post-order)."""
        order = order or {n.index: i for i, n in enumerate(self.post_order())}
        mine = order[before.index]
        best = None
        for n in self.nodes.values():
            if n.label == label and n is not before and order[n.index] < mine:
                if best is None or order[n.index] > order[best.index]:
                    best = n
        return best

    def degraded(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.problem]


# --------------------------------------------------------------------------
# operator calls


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


# --------------------------------------------------------------------------
# trees


_LABEL = re.compile(r"\s{0,8}(?:[Qq]\s?)?(?:(\d{1,4}(?:\.\d{1,4}){1,3})\s{0,4}[.:)]?|(\d{1,4})\s{0,4}[.:)])\s{0,8}(?=\S)")


def split_label(key: str) -> tuple[str, str]:
    """``"3.1. Who is X?"`` -> ``("3.1", "Who is X?")``; no number -> ``("", key)``."""
    m = _LABEL.match(key)
    if not m:
        return "", key.strip()
    return m.group(1) or m.group(2), key[m.end():].strip()


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def extract_json_object(reply: str) -> str:
    """The first balanced ``{...}`` block of a reply (code fences and chatter
    around it are ignored); a block cut off at the end of the reply is
    closed (open string, then brackets). Linear, reads at most
    :data:`MAX_TREE_CHARS`. Raises :class:`TreeError` when there is none."""
    return _extract(reply)[0]


def _extract(reply: str) -> tuple[str, str | None]:
    if len(reply) > MAX_TREE_CHARS:
        raise TreeError(f"reply longer than {MAX_TREE_CHARS} characters")
    start = reply.find("{")
    if start < 0:
        raise TreeError("no JSON object in the planner reply")
    stack: list[str] = []
    in_str: str | None = None
    esc = False
    for i in range(start, len(reply)):
        ch = reply[i]
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == in_str:
                in_str = None
        elif ch == '"':
            in_str = '"'
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if stack and stack[-1] == ch:
                stack.pop()
            if not stack:
                return reply[start: i + 1], None
    if len(stack) > 64:
        raise TreeError("unbalanced brackets nested deeper than 64: not a tree")
    text = reply[start:].rstrip()
    closing = ('"' if in_str else "") + "".join(reversed(stack))
    return text + closing, f"the reply was cut off; closed with {closing!r} (truncated at the token limit?)"


def _repair_quotes(text: str) -> str:
    """Rewrite JSON-like text whose strings contain unescaped quotes (the
    authors' few-shot examples reach the planner as ``"Search("X")"``) or
    use single quotes, into JSON. A quote closes its string only outside
    parentheses opened in the string and when followed by ``}``/``]``/end,
    or by ``,``/``:`` and then the start of a value or key. Linear."""
    out: list[str] = []
    i, n = 0, len(text)
    delim: str | None = None
    paren = 0

    def next_sig(k: int) -> tuple[str, int]:
        while k < n and text[k] in " \t\r\n":
            k += 1
        return (text[k], k) if k < n else ("", k)

    while i < n:
        ch = text[i]
        if delim is None:
            if ch in "\"'":
                delim, paren = ch, 0
                out.append('"')
            else:
                out.append(ch)
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            out.append(text[i:i + 2] if text[i + 1] != "'" else "'")
            i += 2
            continue
        if ch == "(":
            paren += 1
        elif ch == ")" and paren:
            paren -= 1
        if ch == delim:
            nxt, k = next_sig(i + 1)
            closes = False
            if paren == 0:
                if nxt in ("", "}", "]"):
                    closes = True
                elif nxt in ",:":
                    after, _ = next_sig(k + 1)
                    closes = after in ("\"", "'", "[", "{", "]", "}", "") or after.isdigit()
            if closes:
                delim = None
                out.append('"')
            else:
                out.append('\\"' if ch == '"' else ch)
            i += 1
            continue
        if ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _load(text: str):
    errors = []
    for how in ("json", "python", "repaired"):
        try:
            if how == "json":
                return json.loads(text)
            if how == "python":
                return ast.literal_eval(text)
            return json.loads(_repair_quotes(text.translate(str.maketrans({"“": '"', "”": '"'}))))
        except Exception as exc:  # JSONDecodeError, SyntaxError, RecursionError, MemoryError, ...
            errors.append(f"{type(exc).__name__}: {str(exc)[:80]}")
    raise TreeError(f"invalid JSON: {errors[0]}")


def _trim_truncated(text: str) -> str | None:
    """For a closed truncated reply that still does not load: cut back to one
    of the last few complete ``"...",`` boundaries and close again (at most 3
    tries, so the work stays linear in the reply)."""
    cut = text.rfind('",')
    for _ in range(3):
        if cut <= 0:
            return None
        try:
            candidate, _ = _extract(text[:cut + 1])
            json.loads(candidate)
            return candidate
        except Exception:
            cut = text.rfind('",', 0, cut)
    return None


_MISSING = object()


def parse_tree(reply: Any) -> Tree:
    """Parse and validate a planner reply (text) or an already-decoded tree
    (the ``reasoning_tree`` object of a released file). Raises only
    :class:`TreeError`, naming why the input is not a tree."""
    try:
        return _parse_tree(reply)
    except TreeError:
        raise
    except Exception as exc:  # defensive: no input may crash a run
        raise TreeError(f"not a tree ({type(exc).__name__})") from None


def try_parse_tree(reply: Any) -> tuple[Tree | None, str | None]:
    """``(tree, None)`` or ``(None, reason)``; never raises."""
    try:
        return parse_tree(reply), None
    except TreeError as exc:
        return None, str(exc)


def _parse_tree(reply: Any) -> Tree:
    repaired = None
    if isinstance(reply, str):
        stripped = reply.strip()
        if stripped in NOT_A_TREE_MARKS:
            raise TreeError(f"not a tree: the planner output is {stripped} (the authors' mark of a failed parse)")
        text, repaired = _extract(reply)
        try:
            data = _load(text)
        except TreeError:
            if not repaired:
                raise
            trimmed = _trim_truncated(text)
            if trimmed is None:
                raise
            data = json.loads(trimmed)
    elif isinstance(reply, (dict, list)):
        data = reply
    else:
        raise TreeError(f"not a tree: got {type(reply).__name__}")
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        data = data[0]
    if not isinstance(data, dict) or not data:
        raise TreeError("the tree must be a JSON object mapping the question to its decomposition, got "
                        + (f"{type(data).__name__}" if not isinstance(data, dict) else "an empty object"))
    try:
        tree = _build(data)
    except TreeError as exc:
        raise TreeError(f"{exc}; {repaired}" if repaired else str(exc)) from None
    tree.repaired = repaired
    return tree


def _leaf_like(text: str) -> bool:
    """Is a child-list entry an operator call or a sibling-reasoning leaf rather than a question?"""
    t = text.strip().strip("`").strip()
    return bool(_NAME_START.match(t)) or any(m in t[:MAX_OPERATOR_CHARS].upper() for m in SIBLING_MARKS)


@dataclass
class _LeafInList:
    """A child-list entry that is no question key but an operator call: the
    planner wrote the leaf itself where its question belonged (released trees:
    CRAG #173, MuSiQue #146/218/330/384). It becomes a synthetic child."""

    text: str


def _build(data: dict) -> Tree:
    items = [(str(k), v) for k, v in data.items()]
    keys = [k for k, _ in items]
    values = dict(items)
    by_norm: dict[str, list[str]] = {}
    by_label: dict[str, list[str]] = {}
    by_text: dict[str, list[str]] = {}
    for k in keys[1:]:
        lab, txt = split_label(k)
        by_norm.setdefault(_norm(k), []).append(k)
        if lab:
            by_label.setdefault(lab, []).append(k)
        by_text.setdefault(_norm(txt), []).append(k)
    used = {keys[0]}

    def lookup(child: str):
        cands = [child] if child in values and child not in used else []
        if not cands:
            cands = [k for k in by_norm.get(_norm(child), []) if k not in used]
        lab, txt = split_label(child)
        if not cands:
            cands = [k for k in by_text.get(_norm(txt), []) if k not in used]
        if not cands and lab:
            same = [k for k in by_label.get(lab, []) if k not in used]
            if len(same) > 1:
                words = set(_norm(txt).split())
                same.sort(key=lambda k: -len(words & set(_norm(split_label(k)[1]).split())))
            cands = same[:1]
        if not cands:
            return _MISSING
        used.add(cands[0])
        return values[cands[0]]

    root_label, root_q = split_label(keys[0])
    root = Node(0, root_q or keys[0].strip(), label="0")
    nodes = {0: root}
    queue: deque[tuple[Node, Any]] = deque([(root, values[keys[0]])])
    nested = False
    recovered: list[str] = []
    while queue:
        node, value = queue.popleft()
        if value is _MISSING:
            node.problem = "child question not found among the tree's keys"
            continue
        if isinstance(value, str):
            _set_leaf(node, value)
            continue
        if isinstance(value, dict):
            pairs = [(str(k), v) for k, v in value.items()]
            nested = True
        elif isinstance(value, list):
            pairs = []
            for child in value:
                if isinstance(child, str):
                    found = lookup(child)
                    if found is _MISSING and _leaf_like(child):
                        found = _LeafInList(child)  # the leaf itself written in the child list
                    pairs.append((child, found))
                elif isinstance(child, dict) and child:
                    nested = True
                    pairs += [(str(k), v) for k, v in child.items()]
                else:
                    pairs.append((json.dumps(child, ensure_ascii=False)[:200] if child is not None else "", None))
            if len(value) == 1 and pairs and isinstance(pairs[0][1], _LeafInList):
                # ["Search(...)"] / ["... [END]"]: the node's own leaf, in a list by slip
                _set_leaf(node, pairs[0][1].text)
                recovered.append(f"node {node.label or node.index}: its leaf was written as a one-item "
                                 f"child list ({pairs[0][1].text[:60]!r}); read as the node's leaf")
                continue
        else:
            node.problem = f"maps to {type(value).__name__}: neither children nor an operator call"
            continue
        if not pairs:
            node.problem = "empty child list"
            continue
        slips = 0
        for key, child_value in pairs:
            if len(nodes) >= MAX_NODES:
                raise TreeError(f"more than {MAX_NODES} nodes: not a plausible reasoning tree")
            if isinstance(child_value, _LeafInList):
                label, question = split_label(key)
                mark = _SIBLING_MARK.search(question)
                if label and mark and not _NAME_START.match(question):
                    # "5. Who had the biggest from [4]? [END]": a numbered question with its
                    # sibling mark written after it (MuSiQue #384): node 5, leaf [END]
                    child = Node(len(nodes), _SIBLING_MARK.sub("", question).strip(), label=label,
                                 parent=node.index)
                    _set_leaf(child, mark.group(0).upper())
                    recovered.append(f"node {node.label or node.index}: a leaf written directly in its child "
                                     f"list ({key[:60]!r}) was read as question {label} with a "
                                     f"{mark.group(0).upper()} leaf")
                    node.children.append(child)
                    nodes[child.index] = child
                    continue
                slips += 1
                child = Node(len(nodes), key, label=f"{node.label or node.index}~{slips}", parent=node.index,
                             synthetic=True)
                _set_leaf(child, child_value.text)
                if child.operator is not None:
                    child.question = _natural(child.operator)
                recovered.append(f"node {node.label or node.index}: a leaf written directly in its child list "
                                 f"({child_value.text[:60]!r}) was made a child with that call")
                node.children.append(child)
                nodes[child.index] = child
                continue
            label, question = split_label(key)
            child = Node(len(nodes), question or key, label=label, parent=node.index)
            if not question:
                child.problem = "child is not a question"
            node.children.append(child)
            nodes[child.index] = child
            queue.append((child, child_value))
    unused = [k for k in keys if k not in used]
    fmt = "single" if len(nodes) == 1 else ("nested" if nested else "flat")
    tree = Tree(root, nodes, format=fmt)
    if unused and fmt != "nested":
        tree.warnings.append(f"{len(unused)} key(s) not reachable from the root: "
                             + "; ".join(k[:60] for k in unused[:3]))
    tree.warnings += recovered
    _lift_nested_calls(tree)
    _check_refs(tree)
    leaves = [n for n in tree.nodes.values() if n.is_leaf]
    if not any((n.operator is not None or n.sibling) and not n.problem for n in leaves):
        raise TreeError(f"none of the {len(leaves)} leaves has an operator call or a sibling mark"
                        + (f" (root: {root.problem or root.leaf_text!r})" if len(nodes) == 1 else ""))
    return tree


def _set_leaf(node: Node, value: str) -> None:
    v = value.strip().strip("`").strip()
    node.leaf_text = v[:MAX_OPERATOR_CHARS]
    if not v:
        node.problem = "empty leaf: no operator call"
        return
    up = v[:MAX_OPERATOR_CHARS].upper()
    if any(m in up for m in SIBLING_MARKS):
        node.sibling = True
        return
    if _NAME_START.search(v[:MAX_OPERATOR_CHARS]):
        try:
            node.operator = parse_operator(v[:MAX_OPERATOR_CHARS])
        except TreeError as exc:
            node.problem = f"unreadable operator call: {exc}"
        return
    if ref_labels(v[:MAX_OPERATOR_CHARS]):
        node.sibling = True  # free text over referenced answers ("Given answers of [6] and [8], ...")
        return
    node.problem = f"leaf is neither an operator call nor a sibling mark: {v[:80]!r}"


def _natural(call: OperatorCall) -> str:
    """A question for a lifted nested call (the operator prompts need one)."""
    a = [_show_arg(x).strip('"') for x in call.args]
    if call.name == "Search":
        return f"What is {a[0]}" + (f" ({a[1]})?" if len(a) > 1 else "?")
    if call.name == "Relate":
        return f"What is the {a[1]} of {a[0]}?"
    return f"Which of {a[0]} satisfy the condition \"{a[1]}\"?"


def _lift_nested_calls(tree: Tree) -> None:
    """``Filter(Relate([4], "actors"), "x")``: the inner call becomes a child
    node (executed first) and the outer argument a reference to it."""
    for node in list(tree.nodes.values()):
        if node.operator is None:
            continue
        counter = [0]

        def lift(call: OperatorCall, owner: Node) -> OperatorCall:
            args = []
            for a in call.args:
                if isinstance(a, OperatorCall):
                    inner = lift(a, owner)
                    counter[0] += 1
                    child = Node(len(tree.nodes), _natural(inner), label=f"{owner.label or owner.index}~{counter[0]}",
                                 operator=inner, leaf_text=inner.text(), parent=owner.index, synthetic=True)
                    owner.children.append(child)
                    tree.nodes[child.index] = child
                    args.append(Ref(child.label))
                else:
                    args.append(a)
            return OperatorCall(call.name, tuple(args))

        node.operator = lift(node.operator, node)


def _check_refs(tree: Tree) -> None:
    order = {n.index: i for i, n in enumerate(tree.post_order())}
    for node in tree.nodes.values():
        if node.problem:
            continue
        if node.operator is not None:
            bad = [r for r in node.operator.refs() if tree.resolve(r, node, order) is None]
            if bad:
                node.problem = (f"operator refers to [{bad[0]}], which is not a node answered before it "
                                "(missing, itself, an ancestor or later)")
        elif node.sibling:
            ok = [r for r in node.refs() if tree.resolve(r, node, order) is not None]
            parent = tree.nodes[node.parent] if node.parent is not None else None
            earlier = parent.children[: parent.children.index(node)] if parent else []
            if not ok and not earlier:
                node.problem = "sibling leaf with no answered node to reason over"


# --------------------------------------------------------------------------
# answers


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


def _parse_list(text: str) -> tuple[list[str], bool]:
    """Items of ``[...]`` at the start of ``text``: quoted strings (any quote
    style, commas inside quotes kept) or unquoted comma-separated items.
    Returns ``(items, closed)``; on a list cut off before ``]`` only the
    complete items are returned. Linear, no eval."""
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
                while k < n and text[k] == " ":
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
                return [x for x in items if x], True
        else:
            cur.append(ch)
        i += 1
    return [x for x in items if x], False


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
_LIST, _PARA = "answer list", "paraphrase answer"


def _read_line(text: str, low: str, li: int, lo: int, hi: int) -> Answer:
    """The answer line whose "Answer List" starts at ``li``: its paraphrase is
    the last own "Paraphrase Answer" in ``[lo, li)``, its list is read from
    ``text[li:hi]``. ``error`` set when the line declares nothing."""
    pi = _find_last_own(text, low, _PARA, li, lo)
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
        items, closed = _parse_list(after[j:])
        if not closed and not items:
            items = None
    if items is not None:
        if items and not (not para and all(i.lower() == "unknown" for i in items)):
            return Answer(items, para)
        if not items and para and para.lower() != "unknown":
            return Answer([para], para)
        return Answer(items, para)
    if para:
        return Answer([para], para)
    return Answer([], "", error=_NO_ANSWER)


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
        from . import prompts

        for template in (prompts.SEARCH_TEMPLATE, prompts.RELATE_TEMPLATE, prompts.FILTER_TEMPLATE,
                         prompts.CHILD_TEMPLATE):
            shown = template.replace("{{", "{").replace("}}", "}")
            at = shown.find("So the answer is:")
            while at >= 0:
                line = shown[at:shown.find("]", at) + 1]
                low = line.lower()
                a = _read_line(line, low, low.rfind(_LIST), 0, len(line))
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
    answer list (normalised, in any order) is fine. An earlier own line with
    a *different* answer list makes the reply ambiguous: a parse failure
    (``error`` starts with "ambiguous"), never a guess. The answer list is
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
    """
    if not isinstance(reply, str):
        return Answer([], "", error=f"reply is {type(reply).__name__}, not text")
    from conflict_eval.answers import reported

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
    declared = [a for a in lines if a.error is None]
    if not declared:
        return lines[-1]
    final = declared[-1]
    echoes = prompt_answer_lines()
    for a in declared[:-1]:
        if _answer_key(a) != _answer_key(final) and _line_key(a) not in echoes:
            return Answer([], "", error=f"ambiguous: two different answers of its own, "
                                        f"{a.answers or ['Unknown']} and then {final.answers or ['Unknown']}")
    return final


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
