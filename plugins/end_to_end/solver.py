"""End-to-End QA baseline: one call, no intermediate reasoning (Micro-Act Fig. 10)."""

from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conflict_eval.answers.failures import generate_state
from conflict_eval.kb.answer import (
    END_TO_END_FREE_FORM_TEMPLATE,
    END_TO_END_TEMPLATE,
    finish_prefilled_answer,
    format_prompt,
)
from conflict_eval.records import ConflictQA


@solver
def end_to_end(
    template: str = END_TO_END_TEMPLATE,
    free_form_template: str = END_TO_END_FREE_FORM_TEMPLATE,
) -> Solver:
    """Ask for the answer directly, with the sample's evidence (one model call).

    Args:
        template: multiple-choice prompt; placeholders ``{evidence}``,
            ``{question}``, ``{options}``.
        free_form_template: prompt for items without options; placeholders
            ``{evidence}``, ``{question}``.
    """
    for name, t, keys in (
        ("template", template, ("{evidence}", "{question}", "{options}")),
        ("free_form_template", free_form_template, ("{evidence}", "{question}")),
    ):
        missing = [k for k in keys if k not in t]
        if missing:
            raise ValueError(f"end_to_end {name} lacks placeholder(s) {', '.join(missing)}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = state.metadata_as(ConflictQA)
        prompt = format_prompt(record, template, free_form_template)
        state.messages = [ChatMessageUser(content=prompt)]
        state = await generate_state(generate, state, "end-to-end")
        finish_prefilled_answer(state, prompt)
        return state

    return solve
