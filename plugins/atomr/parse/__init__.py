"""Pure parsers for AtomR: the Atomic Reasoning Tree, operator calls, answers.

Split by what each reads: :mod:`.plan` (a leaf's operator call, references,
sibling marks), :mod:`.tree` (the planner's reply as a tree) and
:mod:`.answers` (the executor's answers and named sources). Every name is
importable from here.

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
from .answers import MAX_ANSWER_CHARS, MAX_SOURCE_CHARS, Answer, parse_answer, parse_sources, prompt_answer_lines
from .plan import (  # noqa: F401  (_REF: the executor reads references with it)
    _REF, MAX_NESTING, MAX_NODES, MAX_OPERATOR_CHARS, MAX_TREE_CHARS, NOT_A_TREE_MARKS, OPERATORS, SIBLING_MARKS, Arg,
    OperatorCall, Ref, TreeError, parse_operator, ref_labels,
)
from .tree import Node, Tree, extract_json_object, parse_tree, split_label, try_parse_tree

__all__ = [
    "MAX_ANSWER_CHARS", "MAX_NESTING", "MAX_NODES", "MAX_OPERATOR_CHARS", "MAX_SOURCE_CHARS", "MAX_TREE_CHARS",
    "NOT_A_TREE_MARKS", "OPERATORS", "SIBLING_MARKS", "Answer", "Arg", "Node", "OperatorCall", "Ref", "Tree",
    "TreeError", "extract_json_object", "parse_answer", "parse_operator", "parse_sources", "parse_tree",
    "prompt_answer_lines", "ref_labels", "split_label", "try_parse_tree",
]
