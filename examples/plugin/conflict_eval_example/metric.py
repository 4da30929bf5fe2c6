"""``evidence_following``: did the model choose the option the given passage supports?

Per sample, the reply is read by :func:`conflict_eval_example.parse.read_verdict`.
The option the passage supports is the record's ``conflict_option`` when its
passage conflicts with the gold answer (``Passage.label == "conflicting"``),
else its ``gold_option``. The score value holds ``followed`` (1/0, NaN when the
reply could not be read), ``parse_failure`` and ``refusal`` (0/1); an unread
reply also carries Inspect's ``Score.reason`` (``invalid_response_format`` or
``refusal``) and its reason in ``metadata["parse_failure_reason"]``.

The metric gives ``evidence_following`` (the mean of ``followed`` over the
readable replies: NaN when none was readable, never 0), ``parse_failure_rate``
and ``refusal_rate`` (over all samples).

>>> summarise([{"followed": 1, "parse_failure": 0, "refusal": 0},
...            {"followed": float("nan"), "parse_failure": 1, "refusal": 0}])
{'evidence_following': 1.0, 'parse_failure_rate': 0.5, 'refusal_rate': 0.0}
"""

from __future__ import annotations

import math

from inspect_ai.scorer import SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from conflict_eval import ConflictQA
from conflict_eval.records import LETTERS

from .parse import read_verdict


def supported_option(record: ConflictQA) -> str | None:
    """The option letter the record's passage supports."""
    if any(p.label == "conflicting" for p in record.evidence):
        return record.conflict_option
    return record.gold_option


def summarise(values: list[dict]) -> dict[str, float]:
    """The metric over score values (see the module docstring); NaN for no samples."""
    n = len(values)
    readable = [v["followed"] for v in values if not math.isnan(v["followed"])]
    return {"evidence_following": sum(readable) / len(readable) if readable else float("nan"),
            "parse_failure_rate": sum(v["parse_failure"] for v in values) / n if n else float("nan"),
            "refusal_rate": sum(v["refusal"] for v in values) / n if n else float("nan")}


@metric
def evidence_following_summary():
    """``evidence_following``, ``parse_failure_rate`` and ``refusal_rate`` (see :func:`summarise`)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return summarise([s.score.value for s in scores])

    return compute


@scorer(metrics=[evidence_following_summary()])
def evidence_following() -> Scorer:
    """Whether each reply chose the option the given passage supports."""

    async def score(state: TaskState, target: Target) -> Score:
        record = state.metadata_as(ConflictQA)
        if not record.options:
            raise ValueError(f"evidence_following: sample {state.sample_id!r} is not multiple choice")
        want = supported_option(record)
        reply = state.output.completion
        parsed = read_verdict(reply, LETTERS[: len(record.options)])
        if not parsed.ok:
            value = {"followed": float("nan"), "parse_failure": int(not parsed.refused), "refusal": int(parsed.refused)}
            return Score(value=value, answer=None, reason="refusal" if parsed.refused else "invalid_response_format",
                         explanation=parsed.reason,
                         metadata={"reply": reply, "parse_failure_reason": None if parsed.refused else parsed.reason})
        value = {"followed": int(parsed.letter == want), "parse_failure": 0, "refusal": 0}
        return Score(value=value, answer=parsed.letter,
                     explanation=f"chose {parsed.letter}; the passage supports {want}",
                     metadata={"reply": reply, "supported_option": want})

    return score
