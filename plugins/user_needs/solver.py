"""``user_need_prompt``: one call in the Appendix C format for a user need."""

from __future__ import annotations

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conflict_eval.answers.failures import generate_state
from conflict_eval.records import ArgumentError, ConflictQA, TaskArgument

from .grid import parse_list
from .prompts import INFO_TEMPLATE, SYSTEM_PROMPTS, USER_NEEDS, USER_TEMPLATE


def build_messages(record: ConflictQA, user_need: str) -> tuple[str, str]:
    """``(system, user)`` prompts: I_f + I_u as the system prompt, the contexts
    in ``<info>`` tags and the question in ``<question>`` tags as the user
    prompt (Appendix C, Eq. 1). A record without evidence gets no ``<info>`` line."""
    contexts = "\n\n".join(INFO_TEMPLATE.format(text=p.text) for p in record.evidence)
    return SYSTEM_PROMPTS[user_need], USER_TEMPLATE.format(contexts=contexts, question=record.question)


@solver
def user_need_prompt(user_need: str | None = None) -> Solver:
    """Answer under one user need (Context-Exclusive, Context-First, Memory-First).

    Args:
        user_need: ``context_exclusive``, ``context_first`` or ``memory_first``
            (or a comma list, as the grid task routes the same option to the
            dataset). Grid samples carry their own ``extra["user_need"]``, which
            must be among the given ones (else their expected answer would be
            wrong); other samples need exactly one user need here.
    """
    allowed = None if user_need is None else parse_list("user_need", user_need, USER_NEEDS)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = state.metadata_as(ConflictQA)
        own = record.extra.get("user_need")
        if own is not None and allowed is not None and own not in allowed:
            raise ValueError(f"sample {record.id!r} was built for user_need={own!r}, "
                             f"but the method was given user_need={user_need!r}")
        if own is None and (allowed is None or len(allowed) != 1):
            raise ArgumentError(f"sample {record.id!r} has no user_need; pass one ", TaskArgument("user_need", "..."),
                                f" ({', '.join(USER_NEEDS)})", in_sample=True)
        need = own or allowed[0]
        system, user = build_messages(record, need)
        transcript().info({"user_need": need, "setting": record.setting,
                           "n_contexts": len(record.evidence),
                           "relevant_position": record.extra.get("relevant_position")})
        state.messages = [ChatMessageSystem(content=system), ChatMessageUser(content=user)]
        return await generate_state(generate, state, "user-needs")

    return solve
