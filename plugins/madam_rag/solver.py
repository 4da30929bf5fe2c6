"""MADAM-RAG as a multi-turn Inspect solver (Wang et al. 2025 §4; the authors'
``run_madam_rag.py``, function ``multi_agent_debate``).

One agent per document, an aggregator, up to ``rounds`` rounds:

1. round 1: every agent reads only its document (:data:`~.prompts.AGENT_TEMPLATE`);
   the aggregator reads all their responses (:data:`~.prompts.AGGREGATOR_TEMPLATE`);
2. round t > 1: every agent reads its document and the *other* agents'
   responses of round t-1 (:data:`~.prompts.AGENT_DEBATE_TEMPLATE`); then
   * **early stop** if every agent's normalised answer is contained in, or
     contains, its answer of round t-1 (:func:`.parse.answers_unchanged`): the
     final answer is round t-1's aggregation and round t has none;
   * otherwise the aggregator reads the new responses and its reply becomes
     the final answer;
3. after the last round the final aggregation's ``All Correct Answers: [...]``
   list is the method's answer (store key ``answer_text``); a reply with no
   readable list sets ``answer_parse_failure`` so the metric counts it.

So a sample with N documents that runs R rounds makes N*R agent calls and R
aggregator calls, less one if it stopped early. The agent calls of a round
are independent and run concurrently. Every call is greedy with ``max_tokens``
new tokens (the authors' 128), one user message, no system prompt.

Each round is a transcript span with an info event (responses, answers,
aggregation, early stop), and :class:`MadamRagStore` keeps the whole debate,
the stop reason, calls and tokens.
"""

from __future__ import annotations

import time
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser, GenerateConfig, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel, collect, span
from pydantic import Field

from conflict_eval.answers import loggable_output
from conflict_eval.answers.failures import ModelOutputError, generate_checked
from conflict_eval.records import ConflictQA

from . import prompts as P
from .parse import answers_unchanged, parse_agent_answer, parse_aggregation

ANSWER_TEXT_KEY = "answer_text"
PARSE_FAILURE_KEY = "answer_parse_failure"
ANSWER_SEPARATOR = " | "
"""Joins the aggregator's listed answers into ``answer_text`` (strict EM looks
for each gold answer in it as whole tokens)."""


class MadamRagStore(StoreModel):
    """Per-sample MADAM-RAG state (``state.store_as(MadamRagStore)``)."""

    rounds: list[dict[str, Any]] = Field(default_factory=list)
    """One entry per round: round, responses, answers, unmarked (agents whose
    reply had no ``Answer:``), aggregation (None if the round stopped early),
    stopped_early."""
    n_agents: int = 0
    rounds_run: int = 0
    stop_reason: str = ""
    """``early_stop`` (answers unchanged) or ``max_rounds``."""
    final_round: int = 0
    """The round whose aggregation is the final answer."""
    final_answers: list[str] | None = None
    """The final ``All Correct Answers`` list (None if it could not be read)."""
    aggregation_parse_failure: str | None = None
    agent_calls: int = 0
    aggregator_calls: int = 0
    unmarked_agent_replies: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_seconds: float = 0.0


def _joined(responses: list[str], skip: int | None = None) -> str:
    return "\n".join(f"Agent {j + 1}: {r}" for j, r in enumerate(responses) if j != skip)


@solver
def madam_rag(rounds: int = 3, max_tokens: int = 128) -> Solver:
    """MADAM-RAG: one agent per document, an aggregator, up to ``rounds`` rounds of debate.

    Args:
        rounds: maximum rounds (the authors' ``--num_rounds 3``).
        max_tokens: new tokens per call (the authors' ``max_new_tokens=128``);
            decoding is greedy.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= 10:
        raise ValueError(f"madam_rag: rounds must be an integer from 1 to 10, got {rounds!r}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"madam_rag: max_tokens must be a positive integer, got {max_tokens!r}")
    config = GenerateConfig(max_tokens=max_tokens, temperature=0.0)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        started = time.monotonic()
        record = state.metadata_as(ConflictQA)
        documents = [p.text for p in record.evidence]
        if not documents:
            raise ValueError(f"madam_rag: sample {record.id!r} (dataset {record.dataset!r}) has no "
                             "documents; MADAM-RAG gives one document to each agent")
        store = state.store_as(MadamRagStore)
        store.n_agents = len(documents)
        model = get_model()
        usage = {"calls": 0, "input": 0, "output": 0}

        async def call(prompt: str, what: str) -> ModelOutput:
            output = loggable_output(await generate_checked(model, [ChatMessageUser(content=prompt)], what,
                                                            config=config))
            usage["calls"] += 1
            if output.usage is not None:
                usage["input"] += output.usage.input_tokens
                usage["output"] += output.usage.output_tokens
            return output

        async def agents(history_from: list[str] | None) -> list[str]:
            prompts = []
            for i, doc in enumerate(documents):
                history = _joined(history_from, skip=i) if history_from else ""
                if history:
                    prompts.append(P.AGENT_DEBATE_TEMPLATE.format(question=record.question, document=doc,
                                                                  history=history))
                else:  # round 1, or a lone agent (the authors' `if history:`)
                    prompts.append(P.AGENT_TEMPLATE.format(question=record.question, document=doc))
            outputs = await collect(*(call(p, f"MADAM-RAG agent {i + 1}") for i, p in enumerate(prompts)))
            store.agent_calls += len(outputs)
            for i, o in enumerate(outputs):
                if not o.completion.strip():
                    # an empty agent reply is a failed call (retried under --retry-on-error),
                    # never a blank turn shown to the other agents
                    raise ModelOutputError(f"MADAM-RAG agent {i + 1}", "an empty reply", str(model))
            return [o.completion.strip() for o in outputs]

        async def aggregate(responses: list[str]) -> tuple[str, ModelOutput]:
            prompt = P.AGGREGATOR_TEMPLATE.format(question=record.question, responses=_joined(responses))
            store.aggregator_calls += 1
            return prompt, await call(prompt, "the MADAM-RAG aggregator")

        previous: list[str] | None = None
        previous_answers: list[str] = []
        final: tuple[str, ModelOutput] | None = None
        stop = "max_rounds"
        for r in range(1, rounds + 1):
            async with span(f"round {r}"):
                responses = await agents(previous)
                parsed = [parse_agent_answer(x) for x in responses]
                answers = [a.answer for a in parsed]
                unmarked = [i + 1 for i, a in enumerate(parsed) if not a.marked]
                store.unmarked_agent_replies += len(unmarked)
                entry: dict[str, Any] = {"round": r, "responses": responses, "answers": answers,
                                         "unmarked": unmarked, "aggregation": None, "stopped_early": False}
                if r > 1 and answers_unchanged(previous_answers, answers):
                    entry["stopped_early"] = True
                    stop = "early_stop"
                else:
                    final = await aggregate(responses)
                    entry["aggregation"] = final[1].completion
                    store.final_round = r
                store.rounds = [*store.rounds, entry]
                transcript().info(entry, source=f"madam_rag round {r}")
            previous, previous_answers = responses, answers
            if entry["stopped_early"]:
                break

        assert final is not None  # round 1 always aggregates
        prompt, output = final
        state.messages = [ChatMessageUser(content=prompt), output.message]
        state.output = output
        parsed_final = parse_aggregation(output.completion)
        if parsed_final.ok:
            store.final_answers = parsed_final.answers
            state.store.set(ANSWER_TEXT_KEY, ANSWER_SEPARATOR.join(parsed_final.answers))
        else:
            store.aggregation_parse_failure = parsed_final.error
            state.store.set(PARSE_FAILURE_KEY, f"aggregator: {parsed_final.error}")
        store.rounds_run = len(store.rounds)
        store.stop_reason = stop
        store.calls, store.input_tokens, store.output_tokens = usage["calls"], usage["input"], usage["output"]
        store.latency_seconds = time.monotonic() - started
        transcript().info({"stop_reason": stop, "rounds_run": store.rounds_run, "final_round": store.final_round,
                           "agents": store.n_agents, "calls": store.calls, "final_answers": store.final_answers,
                           "parse_failure": store.aggregation_parse_failure}, source="madam_rag summary")
        return state

    return solve
