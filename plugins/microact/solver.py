"""Micro-Act as a multi-turn Inspect solver (Huo et al., Algorithm 1, §4, Figure 17).

One bounded loop of Thought / Action / Observation turns over the
hierarchical action space (knowledge_gen, reason, decompose, assert,
terminate), then one final answer call:

1. the Figure 17 task prompt opens the main conversation;
2. optional warm start: the three turns Figure 17 shows (reason on the given
   evidence, knowledge_gen on the question, reason on that knowledge) are
   executed with real helper calls and written into the history, and turn 4
   starts with the paper's turn-4 thought;
3. each turn: the "N turns remaining" instruction, one model reply, its one
   action parsed (:func:`parse.parse_turn`) and run as a *separate* helper
   call whose result comes back as the observation. A badly written action
   becomes an observation saying what was wrong and the loop goes on;
4. forced split (Algorithm 1 lines 8-10): when ``assert`` finds a conflict
   and the longer statement is complex (more than ``complex_words`` words),
   that statement is decomposed at once, in the same turn;
5. the loop stops at ``terminate()`` (SOLVED(H)) or when the budget is spent;
   either way the final answer call M(ANSWER | H) follows.

Every turn is written to the transcript (a span per turn with an info event)
and to :class:`MicroActStore`, the typed per-sample state, with counts of each
action, decompose count, helper parse failures, model calls, tokens and
latency.
"""

from __future__ import annotations

import time
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from conflict_eval.answers import loggable_output
from conflict_eval.answers.failures import checked
from conflict_eval.kb.answer import finish_prefilled_answer
from conflict_eval.records import ConflictQA
from conflict_eval.scorers.microact.stores import MicroActStore

from conflict_eval.scorers.microact import prompts as P
from conflict_eval.scorers.microact.parse import ACTIONS, EVIDENCE_VARIABLE, parse_assert, parse_steps, parse_turn, word_count

ABLATIONS: dict[str, tuple[str, ...]] = {
    "none": ("knowledge_gen", "reason", "decompose", "assert", "terminate"),
    # Table 2 "w/o Navigational Actions": no knowledge_gen / reason (Figure 2, blue).
    "no_navigational": ("decompose", "assert", "terminate"),
    # Table 2 "w/o Functional Actions": no assert (Figure 2, red).
    "no_functional": ("knowledge_gen", "reason", "decompose", "terminate"),
    # Table 2 "w/o DECOMPOSE Action": no decompose, hence no forced split either.
    "no_decompose": ("knowledge_gen", "reason", "assert", "terminate"),
}

_NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                 "fourteen fifteen sixteen seventeen eighteen nineteen twenty").split()
_EXAMPLES = {
    "knowledge_gen": 'knowledge_gen(target="...")',
    "reason": "reason(evidence=given_evidence)",
    "decompose": 'decompose(reasoning_step="...")',
    "assert": 'assert(state_left="...", state_right="...")',
    "terminate": "terminate()",
}


def _turns_word(n: int) -> str:
    return _NUMBER_WORDS[n] if n < len(_NUMBER_WORDS) else str(n)


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


class _Session:
    """The running state of one sample: history, counters, helper calls."""

    def __init__(self, record: ConflictQA, allowed: tuple[str, ...], max_turns: int,
                 complex_words: int, forced_split: bool, store: MicroActStore):
        self.record, self.allowed, self.max_turns = record, allowed, max_turns
        self.complex_words, self.forced_split, self.store = complex_words, forced_split, store
        self.model = get_model()
        self.evidence = record.evidence_text()
        self.options = record.formatted_options()
        self.knowledge: list[str] = []
        self.turns: list[dict[str, Any]] = []
        self.counts = {a: 0 for a in ACTIONS}
        self.calls = self.input_tokens = self.output_tokens = 0
        self.invalid = self.helper_failures = self.forced = 0
        self.action_names = "[" + ", ".join(f"'{a}'" for a in allowed) + "]"

    # -- model calls -------------------------------------------------------
    async def call(self, messages: list[ChatMessage]):
        output = loggable_output(checked(await self.model.generate(messages), "Micro-Act", self.model))
        self.calls += 1
        if output.usage is not None:
            self.input_tokens += output.usage.input_tokens
            self.output_tokens += output.usage.output_tokens
        return output

    async def helper(self, prompt: str) -> str:
        """One helper call, separate from the main conversation."""
        return (await self.call([ChatMessageUser(content=prompt)])).completion.strip()

    # -- prompts -----------------------------------------------------------
    def task_prompt(self) -> str:
        choices = "\n".join(f"{i}. {P.ACTION_DESCRIPTIONS[a]}" for i, a in enumerate(self.allowed, 1))
        return P.MICROACT_TASK_TEMPLATE.format(
            turns_word=_turns_word(self.max_turns), action_choices=choices,
            actions_word=_turns_word(sum(1 for a in self.allowed if a != "terminate")),
            question=self.record.question, options=self.options, evidence=self.evidence,
        )

    def instruction(self, turn: int) -> str:
        return P.TURN_INSTRUCTION_TEMPLATE.format(
            remaining=self.max_turns - turn + 1, action_names=self.action_names, turn=turn)

    # -- actions -----------------------------------------------------------
    def resolve(self, value: str) -> str:
        return self.evidence if value == EVIDENCE_VARIABLE else value

    async def run_action(self, action: str, args: dict[str, str], entry: dict[str, Any]) -> str:
        """Execute one action with its helper call(s); return the observation."""
        self.counts[action] += 1
        if action == "knowledge_gen":
            text = await self.helper(P.KNOWLEDGE_GEN_TEMPLATE.format(target=args["target"]))
            if not text:
                self.helper_failures += 1
            self.knowledge.append(text)
            return P.OBSERVATION_KNOWLEDGE.format(result=text or "(the model generated nothing)")
        if action == "reason":
            evidence = self.resolve(args["evidence"])
            text = await self.helper(P.REASON_TEMPLATE.format(
                question=self.record.question, options=self.options, evidence=evidence))
            if not text:
                self.helper_failures += 1
            text = text or "(the model generated nothing)"
            if evidence.strip() == self.evidence.strip():
                return P.OBSERVATION_REASON_GIVEN.format(result=text)
            if evidence.strip() in (k.strip() for k in self.knowledge):
                return P.OBSERVATION_REASON_KNOWLEDGE.format(result=text)
            return P.OBSERVATION_REASON_OTHER.format(result=text)
        if action == "decompose":
            return P.OBSERVATION_DECOMPOSE.format(
                result=await self.decompose(self.resolve(args["reasoning_step"])))
        if action == "assert":
            left, right = self.resolve(args["state_left"]), self.resolve(args["state_right"])
            reply = await self.helper(P.ASSERT_TEMPLATE.format(state_left=left, state_right=right))
            verdict = parse_assert(reply)
            entry["conflict"] = verdict.conflict
            if verdict.error is not None:
                self.helper_failures += 1
            if verdict.conflict is None:
                return f"The conflict check could not be read ({verdict.error}). Raw reply: {reply!r}"
            confidence = "not given" if verdict.confidence is None else f"{verdict.confidence:g}"
            observation = P.OBSERVATION_ASSERT.format(verdict=verdict.conflict, confidence=confidence)
            longer = max(left, right, key=word_count)
            if (verdict.conflict == 1 and self.forced_split and "decompose" in self.allowed
                    and word_count(longer) > self.complex_words):
                # Algorithm 1 lines 8-10: conflict on complex context -> DECOMPOSE.
                self.counts["decompose"] += 1
                self.forced += 1
                entry["forced_decompose"] = True
                result = await self.decompose(longer)
                observation += "\n" + P.OBSERVATION_FORCED_SPLIT.format(result=result)
            return observation
        raise AssertionError(f"no executor for action {action!r}")  # terminate never gets here

    async def decompose(self, step: str) -> str:
        reply = await self.helper(P.DECOMPOSE_TEMPLATE.format(
            question=self.record.question, reasoning_step=step))
        steps = parse_steps(reply)
        if not steps:
            self.helper_failures += 1
            return f"(no numbered sub-steps could be read; raw reply: {reply!r})"
        return "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))

    # -- bookkeeping -------------------------------------------------------
    def record_turn(self, entry: dict[str, Any]) -> None:
        self.turns.append(entry)
        transcript().info(entry, source=f"microact turn {entry['turn']}")
        self.save()

    def save(self, stop_reason: str = "", latency: float | None = None) -> None:
        s = self.store
        s.turns = list(self.turns)
        s.turns_used = len(self.turns)
        s.worked_turns = sum(1 for t in self.turns if t.get("warm_start"))
        s.model_turns = s.turns_used - s.worked_turns
        s.action_counts = {a: n for a, n in self.counts.items() if a in self.allowed}
        s.decompose_count = self.counts["decompose"]
        s.forced_decompose_count = self.forced
        s.invalid_actions = self.invalid
        s.helper_parse_failures = self.helper_failures
        s.calls, s.input_tokens, s.output_tokens = self.calls, self.input_tokens, self.output_tokens
        if stop_reason:
            s.stop_reason = stop_reason
        if latency is not None:
            s.latency_seconds = latency


@solver
def microact(
    max_turns: int = 8,
    ablation: str = "none",
    warm_start: bool = True,
    forced_split: bool = True,
    complex_words: int = 40,
) -> Solver:
    """Micro-Act (Huo et al., Algorithm 1 and Figure 17).

    Args:
        max_turns: turn budget N (the paper's "eight turns"). As in Figure 17's
            countdown (8, 7, 6 remaining for the worked turns, 5 at turn 4), the
            worked turns use up budget, so the model chooses at most N - 3
            actions; they are not counted in the reported ``turns``.
        ablation: ``none``, or a Table 2 ablation: ``no_navigational`` (no
            knowledge_gen/reason), ``no_functional`` (no assert),
            ``no_decompose`` (no decompose, no forced split).
        warm_start: execute Figure 17's worked turns 1-3 before the model acts
            (skipped under ``no_navigational``, whose actions they use).
        forced_split: decompose at once when assert finds a conflict on a
            complex statement (Algorithm 1 lines 8-10).
        complex_words: a statement with more words than this is "complex".
    """
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or not 1 <= max_turns <= 50:
        raise ValueError(f"microact: max_turns must be an integer from 1 to 50, got {max_turns!r}")
    if ablation not in ABLATIONS:
        raise ValueError(f"microact: unknown ablation {ablation!r}; expected one of {', '.join(ABLATIONS)}")
    if isinstance(complex_words, bool) or not isinstance(complex_words, int) or complex_words < 0:
        raise ValueError(f"microact: complex_words must be a non-negative integer, got {complex_words!r}")
    allowed = ABLATIONS[ablation]
    warm = warm_start and ablation != "no_navigational"

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        started = time.monotonic()
        record = state.metadata_as(ConflictQA)
        store = state.store_as(MicroActStore)
        store.ablation, store.max_turns = ablation, max_turns
        s = _Session(record, allowed, max_turns, complex_words, forced_split, store)
        messages: list[ChatMessage] = []
        pending = s.task_prompt() + "\n"  # text of the next user message, before the instruction
        turn, stop = 1, "budget"

        if warm:  # Figure 17 turns 1-3, executed
            for thought, template in P.WARM_START_TURNS[:max_turns]:
                args = {"question": _quote(record.question),
                        "evidence_gen": _quote(s.knowledge[-1] if s.knowledge else "")}
                call = template.format(**args)
                async with span(f"turn {turn}"):
                    messages.append(ChatMessageUser(content=pending + s.instruction(turn)))
                    messages.append(ChatMessageAssistant(content=P.TURN_TEMPLATE.format(thought=thought, action=call)))
                    action = call.split("(")[0]
                    action_args = ({"evidence": EVIDENCE_VARIABLE} if turn == 1 else
                                   {"target": record.question} if turn == 2 else
                                   {"evidence": s.knowledge[-1] if s.knowledge else ""})
                    entry = {"turn": turn, "thought": thought, "call": call, "action": action,
                             "args": action_args, "warm_start": True}
                    entry["observation"] = await s.run_action(action, action_args, entry)
                    s.record_turn(entry)
                pending = f"**observation**: {entry['observation']}\n"
                turn += 1

        while turn <= max_turns:
            async with span(f"turn {turn}"):
                prefilled = P.TURN4_THOUGHT if (warm and turn == len(P.WARM_START_TURNS) + 1) else None
                text = pending + s.instruction(turn)
                if prefilled:
                    text += f"\n**Thought:** {prefilled}"
                messages.append(ChatMessageUser(content=text))
                output = await s.call(messages)
                messages.append(output.message)
                parsed = parse_turn(output.completion, allowed)
                # what the model wrote; the thought we wrote for it is kept apart
                entry = {"turn": turn, "thought": parsed.thought,
                         "call": parsed.call, "action": parsed.action, "args": parsed.args,
                         "warm_start": False}
                if prefilled:
                    entry["prefilled_thought"] = prefilled
                if not parsed.ok:
                    s.invalid += 1
                    entry["error"] = parsed.error
                    example = _EXAMPLES[allowed[0]] if allowed[0] != "terminate" else "terminate()"
                    entry["observation"] = P.OBSERVATION_INVALID.format(
                        error=parsed.error, action_names=s.action_names, example=example)
                elif parsed.action == "terminate":
                    s.counts["terminate"] += 1
                    entry["observation"] = None
                    s.record_turn(entry)
                    stop = "terminate"
                    pending = ""
                    break
                else:
                    entry["observation"] = await s.run_action(parsed.action, parsed.args, entry)
                s.record_turn(entry)
            pending = f"**observation**: {entry['observation']}\n"
            turn += 1

        # Algorithm 1 line 14: the final answer, after terminate or with the budget spent.
        final = P.FINAL_ANSWER_TEMPLATE if record.is_multiple_choice else P.FINAL_ANSWER_FREE_FORM_TEMPLATE
        messages.append(ChatMessageUser(content=pending + final))
        output = await s.call(messages)
        messages.append(output.message)
        state.messages = messages
        state.output = output
        finish_prefilled_answer(state, final)
        s.save(stop_reason=stop, latency=time.monotonic() - started)
        transcript().info({"stop_reason": stop, "turns_used": len(s.turns), "model_turns": store.model_turns,
                           "worked_turns": store.worked_turns, "calls": s.calls,
                           "action_counts": store.action_counts}, source="microact summary")
        return state

    return solve
