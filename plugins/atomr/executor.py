"""Atomic Reasoning Execution (AtomR Algorithm 1, §3.1 and §3.3).

:class:`Executor` runs a parsed tree in post-order:

* **leaf operator node** (lines 3-11): dynamic source selection (LLM, 64
  tokens; skipped when only one source is enabled), retrieval of the top-k
  passages per selected source with the operator's query, then the operator
  prompt (Figures 8-10, 256 tokens, retried with 512 when truncated). An
  operator *failure* (unparseable reply, an empty or ``Unknown`` answer, a
  reference to a node with no answer, a Filter whose input is empty or with
  no entity left) falls back to Direct RAG on the node's question, rebuilt
  from its original text, with the knowledge already retrieved (line 10).
  Nothing else is caught: a model error (a malformed API body, empty
  ``choices``) propagates to Inspect, which retries the sample
  (``--retry-on-error``) or marks it errored; it is never answered by the
  fallback. A nested call
  ``Filter(Relate(...), ...)`` was lifted by the parser into a child node,
  which runs first (post-order).
* **sibling leaf** ([END] / [SIB] / [DR] / free text with references;
  lines 14-15): sibling answer reasoning (Figure 11) over the answered nodes
  it references (all earlier siblings when it references none).
* **degraded node** (``Node.problem``: unreadable leaf, missing child, bad
  reference): Direct RAG on its question; listed in :attr:`Executor.degraded`.
* **parent node** (lines 16-22): child answer reasoning (Figure 11); when
  the answer is ``Unknown`` (or unparseable), Direct RAG: source selection,
  retrieval with the node's question, Figure 9 prompt. Sibling leaves get
  the same fallback.

References ``[i]`` resolve to the node labelled ``i`` answered most
recently before the referring node; an answered reference is replaced by
its answer list joined with ", " (the authors instead run the operator once
per referenced answer; one call keeps the call counts of Table 5
comparable), an unanswered one by its question in parentheses.

Budgets: each call's own budget (Budgets) is capped by ``max_tokens_cap``,
the eval's ``--max-tokens`` (or the model's/task's ``max_tokens``), so
``--max-tokens`` never raises a budget, only lowers it; a retry whose capped
budget is not larger than the first call's is skipped.

Operator queries (§3.1): Search -> ``"name descriptor"``; Relate ->
``"head relation"`` (references replaced by the referenced answers joined
with ``", "``); Filter -> ``"entity condition"`` per entity. Filter first
drops every entity whose overlap coefficient ``|q ∩ p| / min(|q|, |p|)``
between the query ``q`` and its concatenated retrieved passages ``p`` is
below ``threshold`` (t=0.5). ``q`` and ``p`` are *sets* of tokens after
AtomR's answer normalisation (lower case, no punctuation or articles,
hyphens as spaces): the paper does not say how it tokenises. Passages
shorter than the query are compared by ``|q ∩ p| / |q|`` (:func:`filter_overlap`):
with the paper's ``min`` any passage made only of query words is a full
overlap of 1.0, and a Filter over title-only hits would filter nothing.

Every node's record (operator, sources, queries, passages, reply, answer,
fallback) is kept in :attr:`Executor.records`; LLM calls by step and
retriever calls by source in :attr:`llm_calls` / :attr:`retriever_calls`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from conflict_eval.answers.failures import generate_checked
from conflict_eval.retrieval.sources import search_async
from conflict_eval.answers.text_metrics import normalize_atomr

from . import prompts
from .parse import _REF, Answer, Node, Ref, Tree, parse_answer, parse_sources, ref_labels


class OperatorFailure(Exception):
    """An atomic operator could not produce an answer (the reason is the message)."""


class RetrievalError(RuntimeError):
    """A configured knowledge source failed (a search server down, a bad reply).

    Not an operator failure: it fails the sample, so Inspect retries it
    (``--retry-on-error``) or marks it errored, and the count is in the store."""


def overlap_coefficient(query: str, passage: str) -> float:
    """``|q ∩ p| / min(|q|, |p|)`` over normalised token sets; 0 if either is empty.

    >>> overlap_coefficient("Bill Gates born in 1955", "William Henry Gates III (born October 28, 1955)")
    0.6

    (q = {bill, gates, born, in, 1955}, p has 8 tokens; q ∩ p = {gates, born, 1955}: 3 / min(5, 8).)
    """
    q = set(normalize_atomr(query).split())
    p = set(normalize_atomr(passage).split())
    if not q or not p:
        return 0.0
    return len(q & p) / min(len(q), len(p))


def filter_overlap(query: str, passage: str) -> float:
    """The overlap Filter compares with t: ``|q ∩ p| / |q|``, the share of the
    query's tokens found in the entity's retrieved passages.

    This is :func:`overlap_coefficient` whenever the passages have at least as
    many distinct tokens as the query (``min(|q|, |p|) = |q|``, the usual
    case). It differs only for passages shorter than the query, where the
    paper's ``min`` makes any passage made of query words a full overlap of
    1.0: a title-only hit "Lionel Messi" would keep Messi for "born in 1955"
    and, with every entity like that, Filter would filter nothing.

    >>> overlap_coefficient("Lionel Messi born in 1955", "Lionel Messi")
    1.0
    >>> filter_overlap("Lionel Messi born in 1955", "Lionel Messi")
    0.4
    """
    q = set(normalize_atomr(query).split())
    p = set(normalize_atomr(passage).split())
    if not q or not p:
        return 0.0
    return len(q & p) / len(q)


@dataclass
class Budgets:
    tree: int = 512
    tree_retry: int = 768
    operator: int = 256
    operator_retry: int = 512
    selection: int = 64


def _hits_json(hits: dict[str, list]) -> dict[str, list[dict[str, Any]]]:
    return {s: [{"id": h.id, "title": h.title, "text": h.text, "score": round(float(h.score), 4)}
                for h in hs] for s, hs in hits.items()}


class Executor:
    """Runs LLM steps and retrieval for one sample, counting both."""

    def __init__(self, model, sources: dict[str, Any], k: int = 3, threshold: float = 0.5,
                 budgets: Budgets | None = None, max_tokens_cap: int | None = None) -> None:
        self.model = model
        self.sources = sources
        self.k = k
        self.threshold = threshold
        self.budgets = budgets or Budgets()
        self.llm_calls: Counter[str] = Counter()
        self.retriever_calls: Counter[str] = Counter()
        self.parse_failures: Counter[str] = Counter()
        self.records: list[dict[str, Any]] = []
        self.degraded: list[dict[str, Any]] = []
        """Nodes answered by Direct RAG because they could not run as planned."""
        self.retrieval_errors = 0
        self.max_tokens_cap = max_tokens_cap
        self.truncation_retries: Counter[str] = Counter()
        """Calls retried with the larger budget because the first reply was cut off, by step."""
        self.reused_replies: Counter[str] = Counter()
        """Calls not sent because the same prompt was already answered in this sample, by step."""
        self._replies: dict[str, str] = {}
        self.last_truncation: dict[str, Any] | None = None

    # ---------------------------------------------------------------- steps

    async def llm(self, step: str, prompt: str, max_tokens: int, retry_tokens: int | None = None) -> str:
        """One generation (plus one retry with ``retry_tokens`` when truncated)."""
        from inspect_ai.model import GenerateConfig

        first = self.cap(max_tokens)
        retry = self.cap(retry_tokens) if retry_tokens else None
        self.llm_calls[step] += 1
        self.last_truncation: dict[str, Any] | None = None
        out = await generate_checked(self.model, prompt, f"AtomR {step}", config=GenerateConfig(max_tokens=first))
        if out.stop_reason == "max_tokens" and retry and retry > first:
            self.llm_calls[step] += 1
            self.truncation_retries[step] += 1
            out = await generate_checked(self.model, prompt, f"AtomR {step}", config=GenerateConfig(max_tokens=retry))
            self.last_truncation = {"budget": first, "retry_budget": retry,
                                    "still_truncated": out.stop_reason == "max_tokens"}
        return out.completion

    def cap(self, budget: int) -> int:
        """``min(budget, max_tokens_cap)``: ``--max-tokens`` caps every call's own budget."""
        return budget if self.max_tokens_cap is None else max(1, min(budget, self.max_tokens_cap))

    async def select_sources(self, question: str) -> tuple[list[str], str | None]:
        names = list(self.sources)
        if len(names) == 1:
            return names, None
        shown = ", ".join(prompts.SOURCE_DISPLAY.get(n, n) for n in names)
        reply = await self.llm("source_selection",
                               prompts.SOURCE_SELECTION_TEMPLATE.format(sources=shown, question=question),
                               self.budgets.selection)
        chosen = parse_sources(reply, names)
        if chosen is None:  # recorded, then all sources are searched
            self.parse_failures["source_selection"] += 1
            return names, reply
        return chosen, reply

    async def retrieve(self, query: str, sources: list[str]) -> dict[str, list]:
        """Top-k hits per source; a source that fails is counted in
        :attr:`retrieval_errors` and raises :class:`RetrievalError`, which
        fails the sample (no answer is made without the configured knowledge)."""
        hits = {}
        for name in sources:
            self.retriever_calls[name] += 1
            try:
                hits[name] = await search_async(self.sources[name], query, self.k)
            except Exception as exc:
                raise self._retrieval_error(name, query, exc) from exc
        return hits

    def _retrieval_error(self, name: str, query: str, exc: BaseException) -> RetrievalError:
        self.retrieval_errors += 1
        describe = getattr(self.sources[name], "describe", None)
        try:
            where = describe() if describe else {}
        except Exception:  # describing must not hide the real error
            where = {}
        server = where.get("endpoint") or where.get("corpus") or type(self.sources[name]).__name__
        return RetrievalError(f"knowledge source {name!r} ({server}) failed on query {query[:200]!r}: "
                              f"{type(exc).__name__}: {exc}")

    def format_knowledge(self, hits: dict[str, list]) -> str:
        parts = []
        for name, hs in hits.items():
            if not hs:
                continue
            label = getattr(self.sources[name], "label", name)
            items = " ".join(f"[{i}] {h.title + ' | ' if h.title else ''}{h.text}" for i, h in enumerate(hs, 1))
            parts.append(f"{label}: {items}")
        return "\n".join(parts) if parts else "(no knowledge retrieved)"

    async def answer_with(self, step: str, template: str, question: str, rec: dict[str, Any] | None = None,
                          **fields) -> tuple[Answer, str]:
        """One answer call (Figures 8-11). A prompt byte-identical to one already
        sent in this sample is not sent again: its reply is reused (the calls run
        at temperature 0), counted in :attr:`reused_replies` and marked in ``rec``
        -- e.g. the Direct-RAG fallback after a Relate that answered Unknown,
        whose Figure 9 prompt is the Relate prompt itself. A truncation retry is
        marked in ``rec`` too (``truncation_retry``)."""
        prompt = template.format(question=question, **fields)
        if prompt in self._replies:
            self.reused_replies[step] += 1
            if rec is not None:
                rec["reused_reply"] = "the same prompt was already sent in this sample; its reply is reused"
            return parse_answer(self._replies[prompt]), self._replies[prompt]
        reply = await self.llm(step, prompt, self.budgets.operator, self.budgets.operator_retry)
        if rec is not None and self.last_truncation:
            rec["truncation_retry"] = self.last_truncation
        self._replies[prompt] = reply
        answer = parse_answer(reply)
        if answer.error:
            self.parse_failures[step] += 1
        return answer, reply

    async def direct_rag(self, question: str, hits: dict[str, list] | None = None) -> tuple[Answer, dict[str, Any]]:
        """Direct RAG (Figure 9 prompt); retrieves with ``question`` unless ``hits`` are given."""
        rec: dict[str, Any] = {}
        if hits is None:
            chosen, sel_reply = await self.select_sources(question)
            rec.update(sources=chosen, selection_reply=sel_reply, query=question)
            hits = await self.retrieve(question, chosen)
            rec["passages"] = _hits_json(hits)
        answer, reply = await self.answer_with("direct_rag", prompts.DIRECT_RAG_TEMPLATE, question, rec,
                                               knowledge=self.format_knowledge(hits))
        rec.update(reply=reply, answer=answer.answers, paraphrase=answer.paraphrase, parse_error=answer.error)
        return answer, rec

    # ------------------------------------------------------------ the tree

    async def run(self, tree: Tree) -> Answer:
        """Execute ``tree`` in post-order; returns the root's answer.

        A node with a :attr:`~.parse.Node.problem` (unreadable leaf, missing
        child, bad reference) is answered by Direct RAG on its question and
        listed in :attr:`degraded`; the rest of the tree runs as planned."""
        self._tree = tree
        self._order = {n.index: i for i, n in enumerate(tree.post_order())}
        answers: dict[int, Answer] = {}
        for node in tree.post_order():
            if node.problem:
                answer, rec = await self.degrade(node, answers)
            elif node.operator is not None:
                answer, rec = await self.leaf(node, answers)
            elif node.sibling:
                answer, rec = await self.aggregate(node, self._siblings(node), answers, "sibling_reasoning")
            else:
                answer, rec = await self.aggregate(node, node.children, answers, "child_reasoning")
            answers[node.index] = answer
            self.records.append({"index": node.index, "label": node.label, "question": node.question,
                                 **({"leaf": node.leaf_text} if node.leaf_text is not None else {}),
                                 **({"synthetic": True} if node.synthetic else {}),
                                 **rec, "final_answer": answer.answers})
        return answers[tree.root.index]

    def _ref_node(self, label: str, node: Node) -> Node | None:
        return self._tree.resolve(label, node, self._order)

    def _siblings(self, node: Node) -> list[Node]:
        """The answered nodes a sibling leaf references; all earlier siblings when it references none."""
        chosen = []
        for r in node.refs():
            n = self._ref_node(r, node)
            if n is not None and n not in chosen:
                chosen.append(n)
        if chosen:
            return chosen
        parent = self._tree.nodes[node.parent] if node.parent is not None else None
        return [] if parent is None else parent.children[: parent.children.index(node)]

    @staticmethod
    def _known(a: Answer | None) -> list[str]:
        if a is None:
            return []
        items = [x for x in a.answers if x.strip() and x.strip().lower() != "unknown"]
        if not items and a.paraphrase and a.paraphrase.strip().lower() != "unknown":
            items = [a.paraphrase]
        return items

    def substitute(self, text: str, node: Node, answers: dict[int, Answer],
                   override: dict[str, str] | None = None) -> str:
        """``[i]`` -> the answer of node ``i`` (its items joined with ", "); a
        referenced node with no answer is replaced by its question in
        parentheses; an unresolvable reference stays as written."""
        override = override or {}

        def repl(m: re.Match) -> str:
            label = m.group(1)
            if label in override:
                return override[label]
            ref = self._ref_node(label, node)
            if ref is None:
                return m.group(0)
            known = self._known(answers.get(ref.index))
            return ", ".join(known) if known else f"({ref.question})"
        return _REF.sub(repl, text)

    def _arg(self, arg, node: Node, answers: dict[int, Answer]) -> list[str]:
        """An operator argument as a list of strings ([] when a reference has no answer)."""
        if isinstance(arg, Ref):
            ref = self._ref_node(arg.label, node)
            return self._known(answers.get(ref.index)) if ref is not None else []
        if isinstance(arg, list):
            out: list[str] = []
            for x in arg:
                out += self._arg(x, node, answers)
            return out
        if ref_labels(arg) and not self.substitute(arg, node, answers).strip():
            return []
        return [self.substitute(arg, node, answers)]

    async def aggregate(self, node: Node, children: list[Node], answers: dict[int, Answer],
                        step: str) -> tuple[Answer, dict[str, Any]]:
        question = self.substitute(node.question, node, answers)
        lines = []
        for c in children:
            a = answers[c.index]
            listed = json.dumps(a.answers, ensure_ascii=False)
            text = f"{a.paraphrase}. {listed}" if a.paraphrase and a.paraphrase != a.text else listed
            lines.append(f"Q: {c.label + '. ' if c.label and not c.synthetic else ''}{c.question} A: {text}")
        rec: dict[str, Any] = {"kind": step, "resolved_question": question, "qa_pairs": lines}
        answer, reply = await self.answer_with(step, prompts.CHILD_TEMPLATE, question, rec,
                                               qa_pairs="\n".join(lines))
        rec.update(reply=reply, answer=answer.answers, parse_error=answer.error)
        if answer.error or answer.unknown:
            answer, rec["direct_rag"] = await self.direct_rag(question)
            rec["fallback"] = "direct_rag"
        return answer, rec

    async def degrade(self, node: Node, answers: dict[int, Answer]) -> tuple[Answer, dict[str, Any]]:
        """A node that cannot run as planned: Direct RAG on its question."""
        question = self.substitute(node.question, node, answers)
        self.degraded.append({"index": node.index, "label": node.label, "question": node.question,
                              "reason": node.problem})
        answer, rag = await self.direct_rag(question)
        return answer, {"kind": "degraded", "degraded": node.problem, "resolved_question": question,
                        "fallback": "direct_rag", "direct_rag": rag}

    async def leaf(self, node: Node, answers: dict[int, Answer]) -> tuple[Answer, dict[str, Any]]:
        op = node.operator
        assert op is not None
        question = self.substitute(node.question, node, answers)
        rec: dict[str, Any] = {"kind": "operator", "operator": op.text(), "resolved_question": question}
        hits: dict[str, list] = {}
        try:
            chosen, sel_reply = await self.select_sources(question)
            rec.update(sources=chosen, selection_reply=sel_reply)
            if op.name == "Filter":
                entities = self._arg(op.args[0], node, answers)
                if not entities:
                    raise OperatorFailure("the Filter input is empty (the referenced node has no answer)")
                condition = " ".join(self._arg(op.args[1], node, answers)).strip()
                if not normalize_atomr(condition).split():  # "the", "?": the query would be the entity alone
                    raise OperatorFailure("the Filter condition is empty")
                kept, hits, overlaps = await self.filter_entities(entities, condition, chosen)
                rec.update(entities=entities, overlap=overlaps, kept=kept, passages=_hits_json(hits))
                if not kept:
                    raise OperatorFailure(f"no entity has overlap >= {self.threshold}")
                if isinstance(op.args[0], Ref):  # the question names the kept entities only
                    question = self.substitute(node.question, node, answers,
                                               override={op.args[0].label: ", ".join(kept)})
                    rec["resolved_question"] = question
                template = prompts.FILTER_TEMPLATE
            else:
                parts = [", ".join(self._arg(a, node, answers)) for a in op.args]
                if not all(p.strip() for p in parts):
                    raise OperatorFailure("an argument refers to a node with no answer")
                query = " ".join(parts).strip()
                hits = await self.retrieve(query, chosen)
                rec.update(query=query, passages=_hits_json(hits))
                template = prompts.SEARCH_TEMPLATE if op.name == "Search" else prompts.RELATE_TEMPLATE
            answer, reply = await self.answer_with(op.name.lower(), template, question, rec,
                                                   knowledge=self.format_knowledge(hits))
            rec.update(reply=reply, answer=answer.answers, parse_error=answer.error)
            if answer.error:
                raise OperatorFailure(f"unparseable reply: {answer.error}")
            if answer.unknown:
                raise OperatorFailure("the operator answered Unknown / an empty list")
            return answer, rec
        except OperatorFailure as exc:  # model and retrieval errors propagate (the sample errors)
            rec["failure"] = f"{type(exc).__name__}: {exc}"
            rec["fallback"] = "direct_rag"
            # the Direct-RAG question is rebuilt from the node's original text
            answer, rec["direct_rag"] = await self.direct_rag(self.substitute(node.question, node, answers), hits)
            return answer, rec

    async def filter_entities(self, entities: list[str], condition: str, sources: list[str]):
        """Retrieve per entity and keep those whose :func:`filter_overlap` is >= threshold."""
        kept: list[str] = []
        merged: dict[str, list] = {s: [] for s in sources}
        overlaps: dict[str, float] = {}
        for entity in entities:
            query = f"{entity} {condition}"
            hits = await self.retrieve(query, sources)
            passage = " ".join(h.text for hs in hits.values() for h in hs)
            overlaps[entity] = round(filter_overlap(query, passage), 4)
            if overlaps[entity] >= self.threshold:
                kept.append(entity)
                for s, hs in hits.items():
                    merged[s] += [h for h in hs if h.id not in {x.id for x in merged[s]}]
        return kept, merged, overlaps
