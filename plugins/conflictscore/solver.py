"""The answer and report solvers of the ConflictScore paper's tasks (§5-6).

* :func:`write_report` -- one report over the sample's documents with the
  Table 9-11 prompt of its strategy (``conflict_eval/conflictscore_report``);
* :func:`rag_answer` -- Table 12: answer (A) or (B) from the retrieved
  documents (``conflict_eval/truthfulqa_conflict``, wrapped by
  :func:`.regenerate.conflict_regenerate` for Regenerated-RAG);
* :func:`control_rag_answer` -- Table 13, a separate call whose reply goes to
  ``ControlStore`` (``scorers/conflictscore/stores.py``).
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conflict_eval.answers.failures import generate_checked, generate_state
from conflict_eval.records import ConflictQA
from conflict_eval.scorers.conflictscore.stores import ControlStore

from .prompts import CONTROL_RAG_TEMPLATE, RAG_TEMPLATE, context_text, fill, report_prompt


@solver
def write_report(strategy: str | None = None) -> Solver:
    """One call: the strategy's prompt (the sample's ``strategy`` if not given)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        md = state.metadata
        prompt = report_prompt(strategy or md["strategy"], md["main_entity"], md["documents"])
        state.messages = [ChatMessageUser(content=prompt)]
        return await generate_state(generate, state, "the report writer")

    return solve


def _prompt(template: str, state: TaskState) -> str:
    record = state.metadata_as(ConflictQA)
    if len(record.options) != 2:
        raise ValueError(f"truthfulqa_conflict: sample {record.id} needs exactly 2 options")
    return fill(template, context_text([p.text for p in record.evidence]), record.question, *record.options)


@solver
def rag_answer() -> Solver:
    """Table 12: answer (A) or (B) from the retrieved documents."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages = [ChatMessageUser(content=_prompt(RAG_TEMPLATE, state))]
        return await generate_state(generate, state, "the RAG answer")

    return solve


@solver
def control_rag_answer() -> Solver:
    """Table 13, as a separate call whose reply goes to ``ControlStore`` (the
    final output stays the Regenerated-RAG answer)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        out = await generate_checked(get_model(), [ChatMessageUser(content=_prompt(CONTROL_RAG_TEMPLATE, state))],
                                     "the Control-RAG answer")
        state.store_as(ControlStore).reply = out.completion
        return state

    return solve
