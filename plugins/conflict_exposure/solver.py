"""Conflict Exposure (Algorithms 1-3): expand, extract triplets, expose conflicts, answer.

Steps per sample, each recorded in :class:`ConflictExposureStore` and the transcript:

1. **information expansion** (``expansion``): ``ours`` = Algorithm 1 (top
   ``k`` + ``n/2`` via word-embedding question rewriting + ``n/2`` via
   Appendix A question splitting, one model call); ``none`` = top ``k`` only
   (Table 3 "w/o Expansion"); ``reans`` / ``reknow`` = Table 4 strategies
   (re-retrieve ``n`` documents with the model's answer / with the retrieved
   documents' texts).
2. **knowledge extraction** (Algorithm 2, one call per document, Appendix B):
   triplets parsed by :func:`~.parse.parse_triplets` (3-element items kept,
   longer ones recovered, the rest counted as rejected). The calls are
   independent, so they are issued together (``asyncio.gather``; Inspect's
   ``max_connections`` still bounds how many run at once); results are taken
   in document order, identical to a sequential run.
3. **conflict exposure** (Algorithm 3, one call over all triplets, Appendix C):
   an empty list or "no conflicts" prose is recorded as ``no_conflicts``, not
   a parse failure; a detected conflict triplet is placed on every document whose own triplets
   contain it (compared after :func:`~.parse.triplet_key` normalisation);
   the other documents get the "may still contain potential conflicts" note.
   Algorithm 3 re-runs Algorithm 2 on each document; with greedy decoding
   that gives the triplets of step 2 again, so they are reused (no extra calls).
4. **answer**: the Figure 3 yes/no question over the (annotated) documents.

``exposure=False`` skips steps 2-3 (Table 2 "w/o Conflict").
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conflict_eval.answers.failures import generate_state
from conflict_eval.kb.shared import shared_generate
from conflict_eval.kb.rag import (
    check_retriever,
    final_prompt,
    format_documents,
    kb_record,
    record_retrieval,
    sample_retriever,
)
from conflict_eval.scorers.conflict_exposure.store import ConflictExposureStore

from .expansion import Expanded, information_expansion, re_retrieval
from .parse import format_triplets, parse_question_list, parse_triplets, says_no_conflicts, triplet_key
from .prompts import (
    CONFLICT_ANNOTATION,
    DETECT_TEMPLATE,
    EXTRACT_TEMPLATE,
    NO_CONFLICT_ANNOTATION,
    REANS_TEMPLATE,
    SPLIT_TEMPLATE,
)

EXPANSIONS = ("ours", "none", "reans", "reknow")


@dataclass(frozen=True)
class _Doc:
    id: str
    title: str | None
    text: str


def annotate(docs: list, triplets: dict[str, list[tuple[str, str, str]]],
             conflicts: list[tuple[str, str, str]]) -> tuple[list[_Doc], dict[str, str]]:
    """Algorithm 3 lines 4-15: prefix each document with its conflict annotation."""
    keys = [(triplet_key(c), c) for c in conflicts]
    out, notes = [], {}
    for d in docs:
        own = {triplet_key(t) for t in triplets.get(d.id, [])}
        found = list(dict.fromkeys(c for key, c in keys if key in own))
        if found:
            note = CONFLICT_ANNOTATION.format(conflicts="; ".join(f"({a}, {r}, {b})" for a, r, b in found))
        else:
            note = NO_CONFLICT_ANNOTATION
        notes[d.id] = note
        out.append(_Doc(d.id, d.title, f"{note} {d.text}"))
    return out, notes


@solver
def conflict_exposure(
    k: int = 5,
    n: int = 10,
    retriever: str = "dense",
    expansion: str = "ours",
    exposure: bool = True,
) -> Solver:
    """Conflict Exposure over the sample's polluted knowledge base.

    Args:
        k: documents retrieved with the original question (§4.3: 5).
        n: extra documents from expansion (§4.4: 10; ``n/2`` each from
            rewriting and splitting).
        retriever: ``dense`` (all-MiniLM-L6-v2, the paper's) or ``bm25``.
        expansion: ``ours`` (Algorithm 1), ``none``, ``reans`` or ``reknow``.
        exposure: run knowledge extraction and conflict exposure (False: the
            "w/o Conflict" variant).
    """
    check_retriever(retriever)
    if expansion not in EXPANSIONS:
        raise ValueError(f"unknown expansion {expansion!r}; expected one of {', '.join(EXPANSIONS)}")
    if k <= 0 or n < 0:
        raise ValueError(f"need k > 0 and n >= 0, got k={k}, n={n}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = kb_record(state)
        store = state.store_as(ConflictExposureStore)
        store.expansion = expansion
        model = get_model()
        r = sample_retriever(record, retriever)

        async def ask(prompt: str) -> str:
            counter: dict[str, int] = {}
            out = await shared_generate(state, model, prompt, counter=counter, what="Conflict Exposure")
            store.model_calls += counter.get("made", 0)
            store.shared_calls += counter.get("reused", 0)
            return out.completion

        # 1. information expansion
        queries = [record.question]
        if expansion == "ours":
            from .rewrite import default_rewriter

            store.rewritten_queries = [default_rewriter().rewrite(record.question)]
            store.split_reply = await ask(SPLIT_TEMPLATE.format(question=record.question))
            split = parse_question_list(store.split_reply)
            store.split_questions, store.split_parse_failure = split.questions, split.reason
            d = information_expansion(r, record.question, k, n, store.rewritten_queries,
                                      store.split_questions)
            queries += store.rewritten_queries + store.split_questions
        elif expansion == "reans":
            from conflict_eval.answers.span import read_span

            top = r.search(record.question, k=k)
            span = read_span(await ask(REANS_TEMPLATE.format(
                question=record.question, documents=format_documents(top))))
            store.reans_answer, store.reans_parse_failure = span.value, span.reason
            answer_queries = [span.value] if span.value else []
            d = re_retrieval(r, record.question, k, n, answer_queries, "reans")
            queries += answer_queries
        elif expansion == "reknow":
            top = r.search(record.question, k=k)
            know_queries = [h.text for h in top]
            d = re_retrieval(r, record.question, k, n, know_queries, "reknow")
            queries += know_queries
        else:
            d = Expanded()
            d.add(r.search(record.question, k=k), "original")
        store.doc_sources = dict(d.source)
        record_retrieval(state, queries, d.ids)
        transcript().info({"queries": queries, "documents": d.source}, source="information expansion")

        docs = list(d.docs)
        if exposure:
            # 2. knowledge extraction (Algorithm 2)
            triplets: dict[str, list[tuple[str, str, str]]] = {}
            replies = await asyncio.gather(*(ask(EXTRACT_TEMPLATE.format(document=doc.text))
                                             for doc in d.docs))
            for doc, reply in zip(d.docs, replies):
                parsed = parse_triplets(reply)
                triplets[doc.id] = parsed.triplets
                if parsed.rejected:
                    store.rejected_items[doc.id] = parsed.rejected
                if parsed.recovered:
                    store.recovered_items[doc.id] = [list(t) for t in parsed.recovered]
                if parsed.ignored:
                    store.ignored_items[doc.id] = parsed.ignored
                if parsed.reason:
                    store.extraction_failures[doc.id] = parsed.reason
            store.triplets = {i: [list(t) for t in ts] for i, ts in triplets.items()}
            all_triplets = [t for ts in triplets.values() for t in ts]
            # 3. conflict exposure (Algorithm 3)
            conflicts: list[tuple[str, str, str]] = []
            if all_triplets:
                store.conflict_reply = await ask(DETECT_TEMPLATE.format(
                    relations_list=format_triplets(all_triplets)))
                parsed = parse_triplets(store.conflict_reply, relations=[t[1] for t in all_triplets])
                store.no_conflicts = says_no_conflicts(store.conflict_reply, parsed)
                # "no conflicts" in prose: a parenthesis in the sentence is no conflict
                conflicts = [] if store.no_conflicts else parsed.triplets
                store.conflict_parse_failure = None if store.no_conflicts else parsed.reason
            else:
                store.conflict_parse_failure = "no triplets extracted; detection skipped"
            store.conflicts = [list(c) for c in conflicts]
            docs, store.annotations = annotate(d.docs, triplets, conflicts)
            transcript().info({"triplets": store.triplets, "conflicts": store.conflicts,
                               "annotations": store.annotations}, source="conflict exposure")

        # 4. answer
        state.messages = [ChatMessageUser(content=final_prompt(record, docs))]
        store.model_calls += 1
        return await generate_state(generate, state, "Conflict Exposure")

    return solve
