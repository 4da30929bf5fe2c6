"""AstuteRAG: elicit internal passages, consolidate with the retrieved ones, answer."""

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel
from pydantic import Field

from conflict_eval.answers.failures import generate_state
from conflict_eval.kb.rag import QUESTION_TEMPLATE
from conflict_eval.kb.shared import shared_generate
from conflict_eval.kb.rag import (
    check_retriever,
    kb_record,
    record_retrieval,
    sample_retriever,
)

from conflict_eval.kb.answer import finish_prefilled_answer
from conflict_eval.kb.documents import answer_prompt, given_documents, has_kb
from conflict_eval.records import ConflictQA

from .prompts import CONSOLIDATE_TEMPLATE, FIRST_ROUND, INTERNAL_TEMPLATE


class AstuteRAGStore(StoreModel):
    internal: str = ""
    consolidated: list[str] = Field(default_factory=list)
    """The context after each consolidation round."""
    shared_calls: int = 0
    """Calls whose output this sample reused from its ``negatives=true`` sibling (not made)."""


def initial_context(internal: str, hits) -> str:
    """Numbered passages, each labelled with its source (memory or retrieval)."""
    lines = [f"[1] (memory) {internal.strip()}"]
    for i, h in enumerate(hits, start=2):
        doc = f"{h.title}: {h.text}" if h.title else h.text
        lines.append(f"[{i}] (retrieval) {doc}")
    return "\n".join(lines)


@solver
def astuterag(k: int = 5, retriever: str = "dense", n_internal: int = 1, iterations: int = 1) -> Solver:
    """AstuteRAG over the sample's polluted knowledge base (2 + ``iterations`` calls).

    Args:
        k: documents retrieved.
        retriever: ``dense`` or ``bm25``.
        n_internal: internal passages asked for in the elicitation call.
        iterations: consolidation rounds (at least 1).
    """
    check_retriever(retriever)
    if k <= 0 or n_internal <= 0 or iterations <= 0:
        raise ValueError(f"k, n_internal and iterations must be positive; got {k}, {n_internal}, {iterations}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        given = not has_kb(state.metadata_as(ConflictQA))
        if given:  # the dataset ships its documents (e.g. RAMDocs): use them all
            record = state.metadata_as(ConflictQA)
            hits = given_documents(record, "astuterag")
        else:
            record = kb_record(state)
        store = state.store_as(AstuteRAGStore)
        model = get_model()
        counter: dict[str, int] = {}
        if not given:
            hits = sample_retriever(record, retriever).search(record.question, k=k)
            record_retrieval(state, [record.question], [h.id for h in hits])
        store.internal = (await shared_generate(
            state, model, INTERNAL_TEMPLATE.format(n=n_internal, question=record.question),
            counter=counter, what="AstuteRAG internal knowledge")).completion
        context = initial_context(store.internal, hits)
        last = FIRST_ROUND
        for _ in range(iterations):
            last = (await shared_generate(state, model, CONSOLIDATE_TEMPLATE.format(
                context=context, last_context=last, question=record.question),
                counter=counter, what="AstuteRAG consolidation")).completion.strip()
            store.consolidated.append(last)
        store.shared_calls = counter.get("reused", 0)
        transcript().info({"internal": store.internal, "consolidated": store.consolidated},
                          source="astuterag")
        if given:  # the dataset's own question over the consolidated context
            prompt = answer_prompt(record, last or "(empty)")
            state.messages = [ChatMessageUser(content=prompt)]
            state = await generate_state(generate, state, "AstuteRAG")
            finish_prefilled_answer(state, prompt)
            return state
        prompt = QUESTION_TEMPLATE.format(question=record.question, documents=last or "(empty)",
                                          answer=record.extra["candidate"])
        state.messages = [ChatMessageUser(content=prompt)]
        return await generate_state(generate, state, "AstuteRAG")

    return solve
