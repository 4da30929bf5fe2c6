"""The tree format: a planner's reply -> :class:`Tree` (flat or nested JSON, a
Python literal, a reply cut at the token limit). The format is described in
:mod:`conflict_eval.plugins.atomr.parse`; leaves are read by :mod:`.plan`."""

from __future__ import annotations

import ast
import json
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .plan import (
    _NAME_START, _SIBLING_MARK, MAX_NODES, MAX_OPERATOR_CHARS, MAX_TREE_CHARS, NOT_A_TREE_MARKS, SIBLING_MARKS,
    OperatorCall, Ref, TreeError, _show_arg, parse_operator, ref_labels,
)

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
