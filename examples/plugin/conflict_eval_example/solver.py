"""``verdict_first``: one call over the record's passage; the reply is read by
:func:`conflict_eval_example.parse.read_verdict` in the metric."""

from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conflict_eval import ConflictQA
from conflict_eval.answers.failures import generate_state

from .prompts import VERDICT_PROMPT


@solver
def verdict_first(template: str = VERDICT_PROMPT) -> Solver:
    """Ask for a ``VERDICT:`` line over the record's evidence.

    Args:
        template: The prompt (placeholders ``{passage}``, ``{question}``, ``{options}``).
    """
    for name in ("{passage}", "{question}", "{options}"):
        if name not in template:
            raise ValueError(f"verdict_first: template must contain {name}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = state.metadata_as(ConflictQA)
        state.messages = [ChatMessageUser(content=template.format(
            passage=record.evidence_text(), question=record.question, options=record.formatted_options()))]
        return await generate_state(generate, state, "verdict_first")

    return solve
