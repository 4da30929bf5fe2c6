"""``conflictqa_mc``: the ConflictQA multiple-choice question, one call (Xie et al. §3.3).

Works on any multiple-choice record with evidence: one passage gives the
single-source prompt ("... and your knowledge"), several give the numbered
multi-source prompt (see :mod:`.prompts`). Options are written ``A: text``.
The reply is left as the output; ``memorization_ratio`` (or
``choice_accuracy``) reads the chosen letter.
"""

from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conflict_eval.answers.failures import generate_state
from conflict_eval.records import LETTERS, ConflictQA

from .prompts import CONFLICTQA_TEMPLATE, SINGLE_SOURCE_KNOWLEDGE, SYSTEM_PROMPT


def format_prompt(record: ConflictQA, template: str = CONFLICTQA_TEMPLATE) -> str:
    if not record.is_multiple_choice:
        raise ValueError(f"conflictqa_mc: sample {record.id!r} (dataset {record.dataset!r}) has no options; "
                         "this method asks a multiple-choice question")
    if not record.evidence:
        raise ValueError(f"conflictqa_mc: sample {record.id!r} (dataset {record.dataset!r}) has no evidence")
    if len(record.evidence) == 1:
        knowledge, evidence = SINGLE_SOURCE_KNOWLEDGE, record.evidence[0].text
    else:
        knowledge = ""
        evidence = "".join(f"\n{i}. {p.text}" for i, p in enumerate(record.evidence, 1))
    options = "\n".join(f"{LETTERS[i]}: {o}" for i, o in enumerate(record.options))
    return template.format(knowledge=knowledge, evidence=evidence, question=record.question, options=options)


@solver
def conflictqa_mc(template: str = CONFLICTQA_TEMPLATE, system_prompt: bool = True) -> Solver:
    """Ask the ConflictQA multiple-choice question once.

    Args:
        template: placeholders ``{knowledge}``, ``{evidence}``, ``{question}``, ``{options}``.
        system_prompt: send the authors' "You are a helpful assistant." system message.
    """
    missing = [k for k in ("{knowledge}", "{evidence}", "{question}", "{options}") if k not in template]
    if missing:
        raise ValueError(f"conflictqa_mc template lacks placeholder(s) {', '.join(missing)}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = state.metadata_as(ConflictQA)
        prompt = format_prompt(record, template)
        state.messages = ([ChatMessageSystem(content=SYSTEM_PROMPT)] if system_prompt else []) + [
            ChatMessageUser(content=prompt)]
        return await generate_state(generate, state, "ConflictQA")

    return solve
