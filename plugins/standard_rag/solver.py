"""Plain RAG baseline: top-k retrieval with the question, one Figure 3 yes/no call.

On a dataset that ships its documents (e.g. RAMDocs) there is nothing to
retrieve: every given document is used, and the dataset's own question is
asked (see :mod:`conflict_eval.kb.documents`).
"""

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conflict_eval.answers.failures import generate_state
from conflict_eval.kb.answer import finish_prefilled_answer
from conflict_eval.kb.documents import documents_prompt, given_documents, has_kb
from conflict_eval.kb.rag import (
    check_retriever,
    final_prompt,
    kb_record,
    record_retrieval,
    sample_retriever,
)
from conflict_eval.records import ConflictQA


@solver
def standard_rag(k: int = 5, retriever: str = "dense") -> Solver:
    """Retrieve the top ``k`` documents for the question and ask once (on a
    dataset with its own documents: all of them, the dataset's question).

    Args:
        k: documents retrieved (§4.3: 5); not used on given documents.
        retriever: ``dense`` (all-MiniLM-L6-v2) or ``bm25``.
    """
    check_retriever(retriever)
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not has_kb(state.metadata_as(ConflictQA)):
            record = state.metadata_as(ConflictQA)
            docs = given_documents(record, "standard_rag")
            transcript().info({"given_documents": len(docs)}, source="standard_rag")
            prompt = documents_prompt(record, docs)
            state.messages = [ChatMessageUser(content=prompt)]
            state = await generate_state(generate, state, "standard RAG")
            finish_prefilled_answer(state, prompt)
            return state
        record = kb_record(state)
        hits = sample_retriever(record, retriever).search(record.question, k=k)
        record_retrieval(state, [record.question], [h.id for h in hits])
        transcript().info({"retrieved": [h.id for h in hits]}, source="standard_rag")
        state.messages = [ChatMessageUser(content=final_prompt(record, hits))]
        return await generate_state(generate, state, "standard RAG")

    return solve
