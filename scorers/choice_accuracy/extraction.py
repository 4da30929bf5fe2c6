"""``-T answer_extraction=grader`` for ``choice_accuracy`` (issue 32, Deliver 5).

Wraps the scorer: a sample whose reply no reader could read (``parse_failure``
1, and not a refusal) is sent to the grader role with the extraction prompt
of :mod:`conflict_eval.answers.extraction`. A letter found so is scored
(``accuracy``, ``misled``) and recorded as ``extracted`` 1; ``parse_failure``
stays 1, so an extracted answer is never counted as parsed. Every other
sample gets ``extracted`` 0 (the leaderboard shows the ``extracted`` rate per
cell). The grader's reply is kept in the score's metadata
(``extraction_reply``, ``extracted_letter``).
"""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target
from inspect_ai.solver import TaskState

from conflict_eval.answers.extraction import check_mode, extract_choice
from conflict_eval.records import LETTERS

from .values import choice_values


def with_extraction(score_fn: Scorer, mode: str) -> Scorer:
    """``score_fn`` itself for ``mode="none"``; else ``score_fn`` with answer extraction."""
    if check_mode(mode) == "none":
        return score_fn

    async def score(state: TaskState, target: Target) -> Score:
        result = await score_fn(state, target)
        value = dict(result.value) if isinstance(result.value, dict) else {}
        if value.get("parse_failure") != 1 or value.get("refusal"):
            return Score(value={**value, "extracted": 0}, answer=result.answer, explanation=result.explanation,
                         metadata=result.metadata, reason=result.reason)
        options = [c.value for c in state.choices] if len(state.choices) else None
        letters = LETTERS[:len(state.choices) if len(state.choices) else 4]
        got = await extract_choice(state.output.completion, options, letters)
        metadata = {**(result.metadata or {}), "extraction_reply": got.grader_reply}
        if got.letter is None:
            return Score(value={**value, "extracted": 0}, answer=result.answer, reason=result.reason,
                         explanation=f"{result.explanation}; no letter extracted ({got.reason})", metadata=metadata)
        conflict_option = (state.metadata or {}).get("conflict_option")
        accuracy, misled, _ = choice_values(got.letter, target.text, conflict_option, options)
        return Score(
            value={**value, "accuracy": accuracy, "misled": misled, "extracted": 1},
            answer=got.letter,
            reason=result.reason,  # the reply itself stays unreadable (parse_failure 1)
            explanation=f"{result.explanation}; the grader extracted {got.letter!r}; gold {target.text!r}",
            metadata={**metadata, "extracted_letter": got.letter},
        )

    return score
