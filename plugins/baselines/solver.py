"""The Micro-Act baselines (Appendix G, Figures 11-16) as Inspect solvers.

Each solver formats its paper prompt from the sample's record, calls the model
(GKP twice), restores the tag its prompt pre-filled, and extracts the final
answer segment with the matching function of :mod:`.parse`. The result goes
into typed per-sample state (:class:`BaselineStore`) and into the two plain
store keys the ``choice_accuracy`` metric reads: ``answer_text`` (the segment
to read the letter from) or ``answer_parse_failure`` (why there is none; the
sample is then counted as a parse failure, never scored from the raw reply).
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from conflict_eval.answers.failures import generate_state
from conflict_eval.answers import restore_prefill
from conflict_eval.records import ConflictQA
from conflict_eval.scorers.microact.stores import BaselineStore

from .parse import (
    Extraction,
    parse_comparative,
    parse_cot,
    parse_few_shot,
    parse_knowledge,
    parse_self_ask,
)
from .prompts import (
    COMPARATIVE_TEMPLATE,
    COT_TEMPLATE,
    FEW_SHOT_TEMPLATE,
    GKP_ANSWER_TEMPLATE,
    GKP_KNOWLEDGE_TEMPLATE,
    SELF_ASK_TEMPLATE,
)

ANSWER_TEXT_KEY = "answer_text"
PARSE_FAILURE_KEY = "answer_parse_failure"
MC_PLACEHOLDERS = ("{evidence}", "{question}", "{options}")


def _check(name: str, template: str, keys: tuple[str, ...]) -> None:
    missing = [k for k in keys if k not in template]
    if missing:
        raise ValueError(f"{name} lacks placeholder(s) {', '.join(missing)}")


def _record(state: TaskState, method: str) -> ConflictQA:
    record = state.metadata_as(ConflictQA)
    if not record.is_multiple_choice:
        raise ValueError(
            f"{method} needs multiple-choice items; record {record.id!r} of dataset "
            f"{record.dataset!r} has no options"
        )
    return record


async def _call(state: TaskState, generate: Generate, store: BaselineStore,
                phase: str, prompt: str) -> tuple[TaskState, str]:
    """One model call on a fresh conversation; returns the reply with prefill restored."""
    async with span(phase):
        state.messages = [ChatMessageUser(content=prompt)]
        state = await generate_state(generate, state, "the baseline")
        reply = restore_prefill(prompt, state.output.completion)
        state.output.completion = reply
        store.calls.append({"phase": phase, "prompt": prompt, "reply": reply})
    return state, reply


def _conclude(state: TaskState, store: BaselineStore, found: Extraction) -> None:
    store.answer_text, store.parse_failure = found.answer, found.reason
    store.parts.update(found.parts)
    if found.ok:
        state.store.set(ANSWER_TEXT_KEY, found.answer)
        if state.store.get(PARSE_FAILURE_KEY) is not None:
            state.store.delete(PARSE_FAILURE_KEY)
    else:
        state.store.set(PARSE_FAILURE_KEY, found.reason)
    transcript().info({"method": store.method, "answer_text": found.answer,
                       "parse_failure": found.reason, **found.parts}, source=store.method)


def _single_call(method: str, template: str, parse: Callable[[str], Extraction]) -> Solver:
    _check(f"{method} template", template, MC_PLACEHOLDERS)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = _record(state, method)
        store = state.store_as(BaselineStore)
        store.method = method
        prompt = template.format(evidence=record.evidence_text(), question=record.question,
                                 options=record.formatted_options())
        state, reply = await _call(state, generate, store, "answer", prompt)
        _conclude(state, store, parse(reply))
        return state

    return solve


@solver
def few_shot(template: str = FEW_SHOT_TEMPLATE) -> Solver:
    """Few-Shot QA (Fig. 11): the paper's three examples, then the item; one call.

    Args:
        template: placeholders ``{evidence}``, ``{question}``, ``{options}``.
    """
    return _single_call("few_shot", template, parse_few_shot)


@solver
def cot(template: str = COT_TEMPLATE) -> Solver:
    """Chain-of-Thought (Fig. 12): ``<t>thought</t>`` then ``<a>X</a>``; one call.

    Tables 3-4 list COT at 2.0 turns (GKP, two calls, also at 2.0), but Figure 12
    is a single prompt asking for the thought and the answer in one reply, and
    Appendix G.2 describes one generation ("outlining its reasoning process
    before concluding with a final, concise answer"); the paper prints no second
    CoT prompt. We keep the one call Figure 12 specifies rather than invent a
    second one, so our CoT's ``calls`` is 1 where the paper's count is 2.0
    (see plugins/microact/README.md, "Turn accounting").

    Args:
        template: placeholders ``{evidence}``, ``{question}``, ``{options}``.
    """
    return _single_call("cot", template, parse_cot)


@solver
def self_ask(template: str = SELF_ASK_TEMPLATE) -> Solver:
    """Self-Ask (Fig. 13): follow-up questions, then ``<a>X</a>``; one call.

    Args:
        template: placeholders ``{evidence}``, ``{question}``, ``{options}``.
    """
    return _single_call("self_ask", template, parse_self_ask)


@solver
def comparative(template: str = COMPARATIVE_TEMPLATE) -> Solver:
    """Comparative (Fig. 14): ANSWER1 from the context, ANSWER2 from own
    knowledge, final ``<a>X</a>``; one call.

    Args:
        template: placeholders ``{evidence}``, ``{question}``, ``{options}``.
    """
    return _single_call("comparative", template, parse_comparative)


@solver
def gkp(
    knowledge_template: str = GKP_KNOWLEDGE_TEMPLATE,
    answer_template: str = GKP_ANSWER_TEMPLATE,
) -> Solver:
    """Generated Knowledge Prompting (Figs. 15-16): two model calls.

    Phase 1 asks for knowledge about the question; phase 2 answers with the
    evidence (``{evidence_1}``) and that knowledge (``{evidence_2}``). If phase 1
    yields no knowledge, that is recorded (``knowledge_failure``) and phase 2
    runs with an empty knowledge section.

    Args:
        knowledge_template: placeholder ``{question}``.
        answer_template: placeholders ``{question}``, ``{options}``,
            ``{evidence_1}``, ``{evidence_2}``.
    """
    _check("gkp knowledge_template", knowledge_template, ("{question}",))
    _check("gkp answer_template", answer_template,
           ("{question}", "{options}", "{evidence_1}", "{evidence_2}"))

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = _record(state, "gkp")
        store = state.store_as(BaselineStore)
        store.method = "gkp"
        state, reply = await _call(state, generate, store, "knowledge",
                                   knowledge_template.format(question=record.question))
        knowledge = parse_knowledge(reply)
        store.knowledge, store.knowledge_failure = knowledge.answer, knowledge.reason
        prompt = answer_template.format(
            question=record.question, options=record.formatted_options(),
            evidence_1=record.evidence_text(), evidence_2=knowledge.answer or "")
        state, reply = await _call(state, generate, store, "answer", prompt)
        _conclude(state, store, parse_cot(reply))
        return state

    return solve
