"""``memorization_ratio``: ConflictQA's answer classes and memorization ratio.

Per sample the chosen letter is read with :func:`conflict_eval.answers.parse_choice`
(the option texts as fallback) and classed by the record's ``extra``:
``memory_option`` -> ``memory``, ``counter_option`` -> ``counter``,
``uncertain_option`` -> ``uncertain``; a reply that names no option and
refuses (``ChoiceParse.refused``) -> ``refusal``; no readable choice ->
``parse_failure`` (with its reason; never given an answer class). A method may leave its answer part in
the store key ``answer_text`` or a failure reason in ``answer_parse_failure``
(as for ``choice_accuracy``).

The score value holds one 0/1 entry per class; the metric :func:`conflictqa_summary`
gives the memorization ratio, each class's rate and n, over all samples and
per setting (``memorization_ratio:counter_memory`` ...); see :mod:`.metrics`.
"""

from __future__ import annotations

from inspect_ai.scorer import SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from conflict_eval.answers import parse_choice
from conflict_eval.answers.reasons import REFUSAL, unread_reason
from conflict_eval.records import LETTERS, ArgumentError, TaskArgument

from .metrics import CLASSES, summary_by_setting

ANSWER_TEXT_KEY = "answer_text"
PARSE_FAILURE_KEY = "answer_parse_failure"


def _class_of(value: dict) -> str:
    [c] = [c for c in CLASSES if value.get(c)]
    return c


@metric
def conflictqa_summary():
    """Memorization ratio and class rates, overall and per setting (NaN where undefined)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return summary_by_setting(((s.sample_metadata or {}).get("setting") or "-", _class_of(s.score.value))
                                  for s in scores)

    return compute


@scorer(metrics=[conflictqa_summary()])
def memorization_ratio() -> Scorer:
    """Class each reply as memory / counter / uncertain answer (ConflictQA)."""

    async def score(state: TaskState, target: Target) -> Score:
        extra = (state.metadata or {}).get("extra") or {}
        try:
            by_letter = {extra["memory_option"]: "memory", extra["counter_option"]: "counter",
                         extra["uncertain_option"]: "uncertain"}
        except KeyError as exc:
            raise ArgumentError(f"memorization_ratio: sample {state.sample_id!r} has no extra.{exc.args[0]}; "
                                "this metric needs ConflictQA records (", TaskArgument("dataset", "conflictqa"), ")",
                                in_sample=True) from None
        reply = state.output.completion
        options = [c.value for c in state.choices] if len(state.choices) else None
        letters = LETTERS[: len(options) if options else 3]
        answer_text = state.store.get(ANSWER_TEXT_KEY)
        failure = state.store.get(PARSE_FAILURE_KEY)
        if failure:
            parsed = parse_choice(reply, letters, options=options)  # a refusal all the same?
            letter, reason = None, (parsed.reason if parsed.refused else str(failure))
        else:
            parsed = parse_choice(answer_text if answer_text is not None else reply, letters, options=options)
            letter, reason = (parsed.letter, None) if parsed.ok else (None, parsed.reason)
        cls = ("refusal" if parsed.refused else "parse_failure") if letter is None else by_letter.get(letter)
        if cls is None:
            cls, reason = "parse_failure", f"letter {letter!r} is not the memory, counter or uncertain option"
        value = {c: int(c == cls) for c in CLASSES}
        why = REFUSAL if cls == "refusal" else unread_reason(
            reply if failure or answer_text is None else answer_text) if cls == "parse_failure" else None
        return Score(value=value, answer=letter, reason=why,
                     explanation=f"{cls}" + (f": {reason}" if reason else f" (chose {letter})"),
                     metadata={"reply": reply, "class": cls, "parse_failure_reason": reason})

    return score
