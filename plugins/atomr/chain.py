"""What AtomR records from a reply: its reader chain, as one pure function.

The reply-reading benchmark (``benchmarks/reply_reading.py``) and its
metamorphic rewrites send labelled replies through each method's whole
chain; AtomR's is :func:`recorded`. It applies the same parsers, in the same
order, as the solver and the executor (:mod:`.solver`, :mod:`.executor`),
and returns what they would act on, without running a model.
"""

from __future__ import annotations

from typing import Literal

from .parse import parse_answer, try_parse_tree

Recorded = tuple[Literal["value", "refusal", "failure"], list[str] | None, str | None]
"""``(status, value, reason)``: a value and no reason, or no value and why."""


def recorded(reply: str, step: Literal["plan", "answer"]) -> Recorded:
    """What AtomR records from ``reply`` to a ``step`` prompt.

    * ``plan`` (the planner, Figure 5): every node of the tree in the order
      the executor runs it (post-order), as ``"<label>. <question> -> <leaf>"``
      for a leaf (its operator call, or its sibling-reasoning text) and
      ``"<label>. <question> <- <child labels>"`` for an inner node; a node that
      cannot run as planned shows ``-> direct RAG (<why>)``, as the executor
      degrades it. A reply that is not a tree is a ``failure`` (the solver then
      answers the root by Direct RAG and counts a planning parse failure).
    * ``answer`` (a node's answer, Figures 8-11): the Answer List AtomR keeps
      (:func:`~.parse.parse_answer`); "Unknown" (or an empty list) is AtomR's
      own ``refusal``; an unreadable reply is a ``failure`` (counted per step).

    >>> recorded('So the answer is: (1) Paraphrase Answer: Bob won; (2) Answer List: ["Bob"]', "answer")
    ('value', ['Bob'], None)
    >>> recorded('{"Who won?": ["1. Who is X?"], "1. Who is X?": "Search(\\\\"X\\\\")"}', "plan")
    ('value', ['1. Who is X? -> Search("X")', '0. Who won? <- 1'], None)
    >>> recorded("I cannot help with that.", "plan")[0]
    'failure'
    """
    if step == "answer":
        answer = parse_answer(reply)
        if answer.error:
            return "failure", None, answer.error
        return ("refusal", None, "Unknown") if answer.unknown else ("value", list(answer.answers), None)
    if step != "plan":
        raise ValueError(f"unknown AtomR step {step!r}; expected 'plan' or 'answer'")
    tree, error = try_parse_tree(reply)
    if tree is None:
        return "failure", None, error
    nodes = []
    for node in tree.post_order():
        head = f"{node.label}. {node.question}" if node.label else node.question
        if node.problem:
            nodes.append(f"{head} -> direct RAG ({node.problem})")
        elif node.operator is not None:
            nodes.append(f"{head} -> {node.operator.text()}")
        elif node.is_leaf:
            nodes.append(f"{head} -> {node.leaf_text}")
        else:
            nodes.append(f"{head} <- {', '.join(c.label or c.question for c in node.children)}")
    return "value", nodes, None
