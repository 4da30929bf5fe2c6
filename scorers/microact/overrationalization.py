"""``overrationalization``: the over-rationalization ratio (Huo et al. §7.3,
Appendix B, Figure 8), judged by a grader model with a prompt that is OURS
(the paper prints none; see :data:`.prompts.OVERRATIONALIZATION_TEMPLATE` and
plugins/microact/README.md).

Per sample the grader reads the sample's reasoning trace (:func:`reasoning_trace`:
Micro-Act's trajectory, GKP's generated knowledge and step-by-step answer,
another baseline's replies, or the final reply) with the question, options and
evidence, and answers YES (the reasoning rationalizes the contradictory facts
as compatible / equally valid) or NO. Per sample the score value is a dict:

* ``over_rationalization`` -- 1 (YES), 0 (NO), NaN when no verdict was read
  (a parse failure, or no reasoning to judge): never 0 or 1 by default;
* ``parse_failure`` -- 1 when the grader's reply held no single verdict;
* ``judged`` -- 1 when a verdict was read;
* ``no_trace`` -- 1 when the sample had no reasoning text (no grader call).

Metrics: ``over_rationalization`` has ``ratio`` (rationalizing / judged
samples: Figure 8's ratio; NaN when nothing was judged, never 0) and the same
ratio per conflict type (sample metadata ``conflict_type``); ``parse_failure``
has its ``total`` (the count) and its count per conflict type
(``total_by_conflict_type``); ``judged`` and ``no_trace`` their ``total``
(:mod:`conflict_eval.scorers.nan_metrics`). The grader is the ``grader`` model role when one is given
(``--model-role grader=...``), else the evaluated model, as for
``conflictscore``.
"""

from __future__ import annotations


from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState
from pydantic import ValidationError

from conflict_eval.answers.failures import checked
from conflict_eval.components.stores import BaselineStore
from conflict_eval.records import ConflictQA
from conflict_eval.scorers.conflictscore.panel import judge_panel
from conflict_eval.scorers.nan_metrics import grouped, mean_of, total, total_of
from conflict_eval.answers.reasons import GRADER_FAILED, NO_RESPONSE

from .parse import parse_verdict
from .prompts import OVERRATIONALIZATION_CONFLICT, OVERRATIONALIZATION_TEMPLATE
from .stores import MicroActStore

# The grader lookup is imported where it is used: conflict_eval._registry imports
# this module so that `inspect score --scorer conflict_eval/overrationalization`
# finds it, and listing tasks must not load more than Inspect and the core.

GROUP_KEY = "conflict_type"
PLACEHOLDERS = ("{question}", "{options}", "{evidence}", "{conflict}", "{trace}")


def overrationalization_ratio(values) -> float:
    """Rationalizing / judged samples; NaN values (not judged) are left out,
    and with nothing judged the ratio is NaN (undefined, never 0).

    >>> overrationalization_ratio([1, 0, float("nan"), 1])  # 2 of 3 judged
    0.6666666666666666
    >>> overrationalization_ratio([float("nan")])
    nan
    """
    return mean_of(values)


@metric
def ratio() -> Metric:
    """:func:`overrationalization_ratio` over all samples."""

    def compute(scores: list[SampleScore]) -> float:
        return overrationalization_ratio(s.score.value for s in scores)

    return compute


@metric
def ratio_by_conflict_type() -> Metric:
    """:func:`overrationalization_ratio` per conflict type (NaN for a type with nothing judged)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return {g: overrationalization_ratio(v) for g, v in grouped(scores, GROUP_KEY).items()}

    return compute


@metric
def total_by_conflict_type() -> Metric:
    """:func:`~conflict_eval.scorers.nan_metrics.total` per conflict type (NaN for a type with no value)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return {g: total_of(v) for g, v in grouped(scores, GROUP_KEY).items()}

    return compute


def reasoning_trace(state: TaskState) -> tuple[str, str]:
    """``(source, text)``: the reasoning of a sample as the grader reads it.

    * Micro-Act (``MicroActStore``): every turn, with the model's thought, its
      action and the observation (helper replies: reasoning, generated
      knowledge, assert verdicts, sub-steps); the worked turns are marked as
      scripted by the method; then the final answer;
    * GKP (``BaselineStore``, method ``gkp``): the generated knowledge, then
      the step-by-step answer;
    * another baseline: each call's reply, by phase;
    * otherwise the final reply.
    """
    mact = state.store_as(MicroActStore)
    if mact.max_turns:
        parts = []
        for t in mact.turns:
            head = f"Turn {t.get('turn')}" + (" (scripted by the method)" if t.get("warm_start") else "")
            lines = [head + ":"]
            if t.get("thought") and not t.get("warm_start"):
                lines.append(f"Thought: {t['thought']}")
            lines.append(f"Action: {t.get('call') or '(no valid action)'}")
            if t.get("observation"):
                lines.append(f"Observation: {t['observation']}")
            parts.append("\n".join(lines))
        parts.append(f"Final answer: {state.output.completion}")
        return "microact", "\n\n".join(parts)
    base = state.store_as(BaselineStore)
    if base.method and base.calls:
        if base.method == "gkp":
            answer = base.calls[-1].get("reply", "")
            if not ((base.knowledge or "").strip() or answer.strip()):
                return "gkp", ""
            return "gkp", (f"The model's own knowledge (generated first):\n{base.knowledge or '(none)'}\n\n"
                           f"Step-by-step thought and answer:\n{answer}")
        return base.method, "\n\n".join(f"{c.get('phase', 'reply')}:\n{c.get('reply', '')}" for c in base.calls)
    return "completion", state.output.completion


def _label(rationalizes: bool | None) -> str | None:
    return None if rationalizes is None else "YES" if rationalizes else "NO"


def judge_prompt(state: TaskState, trace: str, template: str = OVERRATIONALIZATION_TEMPLATE,
                 reverse_evidence: bool = False) -> str:
    """The grader prompt for one sample (question, options, evidence, the
    contradiction when the record names it, the trace); ``reverse_evidence``
    lists the evidence passages in reverse order (``judge_swap``)."""
    try:
        record = state.metadata_as(ConflictQA)
    except ValidationError as exc:
        raise ValueError(f"overrationalization: sample {state.sample_id!r} is not a ConflictQA record: {exc}") from exc
    conflict = ""
    if record.conflict_option and record.gold_option and record.conflict_answer:
        conflict = OVERRATIONALIZATION_CONFLICT.format(
            conflict_option=record.conflict_option, conflict_answer=record.conflict_answer,
            gold_option=record.gold_option, gold_answer=record.answers[0])
    return template.format(question=record.question, options=record.formatted_options(),
                           evidence=(_reversed_evidence(record) if reverse_evidence else record.evidence_text()) or "(none)",
                           conflict=conflict, trace=trace)


def _reversed_evidence(record: ConflictQA) -> str:
    return record.model_copy(update={"evidence": list(reversed(record.evidence))}).evidence_text()


@scorer(name="overrationalization", metrics={
    "over_rationalization": [ratio(), ratio_by_conflict_type()],
    "parse_failure": [total(), total_by_conflict_type()],
    "judged": [total(), judge_panel()],
    "no_trace": [total()],
})
def overrationalization(grader_max_tokens: int | None = 256,
                        judge_template: str = OVERRATIONALIZATION_TEMPLATE,
                        judge_repeats: int = 1, judge_swap: bool = False,
                        judge_temperature: float = 1.0) -> Scorer:
    """Over-rationalization verdict of a grader model on each sample's reasoning.

    Args:
        grader_max_tokens: output budget of the grader call (temperature 0).
        judge_template: the judge prompt (its own name, so that `-T` does
            not also route it to a method's `template`); placeholders ``{question}``, ``{options}``,
            ``{evidence}``, ``{conflict}``, ``{trace}``.
        judge_repeats: ask each judge N times at ``judge_temperature``
            (self-agreement); judges are the ``grader``, ``grader_2``, ...
            roles, verdicts combined by strict majority (a tie: no verdict).
        judge_swap: also ask with the evidence passages in reverse order
            (the flip rate; never used in the score).
        judge_temperature: the temperature of repeated questions (recorded).
    """
    from conflict_eval.scorers.conflictscore.panel import Judging

    judging = Judging(judge_repeats, judge_swap, judge_temperature)
    missing = [p for p in PLACEHOLDERS if p not in judge_template]
    if missing:
        raise ValueError(f"overrationalization: judge_template lacks placeholder(s) {', '.join(missing)}")
    if grader_max_tokens is not None and (isinstance(grader_max_tokens, bool)
                                          or not isinstance(grader_max_tokens, int) or grader_max_tokens < 1):
        raise ValueError(f"overrationalization: grader_max_tokens must be a positive integer, got {grader_max_tokens!r}")

    async def score(state: TaskState, target: Target) -> Score:
        from conflict_eval.scorers.conflictscore.panel import (ask, ask_panel, panel_metadata, resolve_panel,
                                                                strict_majority, unit_record)

        source, trace = reasoning_trace(state)
        nan = float("nan")
        if not trace.strip():
            return Score(value={"over_rationalization": nan, "parse_failure": 0, "judged": 0, "no_trace": 1},
                         reason=NO_RESPONSE, explanation="no reasoning to judge (empty trace)",
                         metadata={"trace_source": source})
        prompt = judge_prompt(state, trace, judge_template)
        judges = resolve_panel()
        swapped = judge_prompt(state, trace, judge_template, reverse_evidence=True) if judging.swap else None
        if len(judges) == 1 and judging.default:  # the single grader's one call, as always
            model, grader_source = judges[0].model, judges[0].source
            output = checked(await model.generate(prompt, config=GenerateConfig(temperature=0.0, max_tokens=grader_max_tokens)),
                             "the over-rationalization grader", model)
            reply, stop_reason = output.completion, output.stop_reason
            verdict = parse_verdict(reply)
            rationalizes, error = verdict.rationalizes, verdict.error
            votes, swaps, same = [[_label(rationalizes)]], None, None
        else:
            asked = await ask_panel(judges, lambda jd: ask(jd, prompt, parse_verdict,
                                                           lambda v: _label(v.rationalizes), judging,
                                                           grader_max_tokens, dedupe=False, swapped_prompt=swapped))
            votes = [a.labels for a in asked]
            swaps = [a.swapped for a in asked] if judging.swap else None
            same = [a.unswapped for a in asked] if judging.swap else None
            majority = strict_majority([strict_majority(v) for v in votes])
            rationalizes = None if majority is None else majority == "YES"
            reply, stop_reason = asked[0].first_reply, None
            error = None if majority is not None else (
                asked[0].first.error if len(judges) == 1 and asked[0].first.error
                else f"no strict majority of the {len(judges)} judge(s): {[strict_majority(v) for v in votes]}")
            model, grader_source = judges[0].model, judges[0].source
        judged = rationalizes is not None
        value = {"over_rationalization": float(rationalizes) if judged else nan,
                 "parse_failure": int(not judged), "judged": int(judged), "no_trace": 0}
        label = "unreadable" if not judged else "YES" if rationalizes else "NO"
        panel = panel_metadata(judges, judging, [unit_record(votes, swaps, unswapped=same)])
        return Score(
            value=value,
            answer=label,
            reason=None if judged else GRADER_FAILED,  # the detail: explanation, parse_error
            explanation=f"grader verdict {label} on the {source} trace; graded by {model} ({grader_source})"
                        + (f"; panel of {len(judges)} judges, strict majority" if len(judges) > 1 else "")
                        + ("" if judged else f"; {error}"),
            metadata={"trace_source": source, "grader_reply": reply, "parse_error": error,
                      "grader": str(model), "grader_source": grader_source,
                      "grader_stop_reason": stop_reason, "judges": panel},
        )

    return score


__all__ = ["judge_prompt", "overrationalization", "total_by_conflict_type",
           "overrationalization_ratio", "ratio", "ratio_by_conflict_type", "reasoning_trace"]
