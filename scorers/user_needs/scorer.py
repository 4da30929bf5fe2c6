"""``user_need_accuracy``: is the ``<output>`` answer the expected answer of the cell?

Per sample the value is a dict:

* ``correct`` 1 if the answer in the last ``<output>`` tag matches one of the
  cell's expected answers after :func:`canonical` normalisation (Figure 2
  decides what is expected); a reply without an ``<output>`` tag is wrong *and*
  counted in ``parse_failure``, never scored from free text;
* ``refusal`` 1 if the answer is "I don't know" (the paper's strict reading,
  the headline);
* ``near_refusal`` 1 if the answer refuses in other words ("I don't know the
  answer.", "I'm not sure"; :func:`~.normalize.is_near_refusal`), counted
  apart and never as a refusal;
* ``parse_failure`` 1 if no answer could be read.

Multiple-choice items (KRE: the sample's ``extra.options``) also accept the
option the answer names (:func:`~.normalize.option_match`, conservative: a
negation, a different number or a head word absent from the option is never
a match): e-CARE's expected answers are whole option sentences, while the
instruction asks for an entity. An answer on such an item that matches no
expected answer, is no refusal and names no option (or several) is
``unmatched`` 1: still not correct, but counted apart from a wrong option
(metric ``unmatched``), since the scorer cannot tell what it meant.

The task-level metrics add Table 2's refusal / hallucination split
(``refusal_split/...``, :func:`~.levels.refusal_split`, cells with at most
four contexts as in Table 2; undefined shares are NaN).

The task-level metrics add the §4.3 levels pooled over the context counts
(``overall``, ``case/<user need>``, ``setting/<user need>/<setting>``); per-count
curves come from ``conflict-eval user-needs curves LOG``.
"""

from __future__ import annotations

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, accuracy, mean, metric, scorer, stderr
from inspect_ai.solver import TaskState

from conflict_eval.scorers.user_needs.parse import parse_output
from conflict_eval.answers.reasons import REFUSAL, unread_reason

from .levels import refusal_split, summary
from .normalize import canonical, is_near_refusal, is_i_dont_know, matches, option_match


def score_rows(scores: list[SampleScore]) -> list[dict]:
    rows = []
    for s in scores:
        md = s.score.metadata or {}
        if any(md.get(k) is None for k in ("question_id", "user_need", "setting", "n_contexts")):
            continue  # not a grid sample (e.g. a generic dataset): no levels
        value = s.score.value if isinstance(s.score.value, dict) else {}
        rows.append({"question_id": md["question_id"], "user_need": md["user_need"],
                     "setting": md["setting"], "n_contexts": md["n_contexts"],
                     "correct": bool(value.get("correct")), "refusal": bool(value.get("refusal")),
                     "near_refusal": bool(value.get("near_refusal")),
                     "parse_failure": bool(value.get("parse_failure"))})
    return rows


@metric
def user_need_levels() -> Metric:
    """Overall, case-level and setting-specific accuracy (§4.3), pooled over ``n``."""

    def compute(scores: list[SampleScore]):
        rows = score_rows(scores)
        out = dict(summary(rows))
        out.update({f"refusal_split/{k}": v for k, v in refusal_split(rows).items()})
        return {k: (v if v is not None else float("nan")) for k, v in out.items()}

    return compute


def judge_answer(answer: str, expected: list[str], options=None):
    """Per-sample values of a parsed answer, and its option match (or None).

    Shared by :func:`user_need_accuracy` and the lm-eval export, so both score
    alike. An answer that matches no expected text directly is matched to the
    option it names (e-CARE's expected answers are whole sentences); the
    match is None when there are no options, the answer matched directly or
    it is a refusal.
    """
    right = matches(answer, expected)
    match = None
    if not right and options and not is_i_dont_know(answer) and not is_near_refusal(answer):
        match = option_match(answer, list(options))
        right = match.option is not None and matches(match.option, expected)
    return ({"correct": int(right), "refusal": int(is_i_dont_know(answer)),
             "near_refusal": int(is_near_refusal(answer)), "parse_failure": 0,
             "unmatched": int(match is not None and match.option is None)}, match)


@scorer(metrics=[{"correct": [accuracy(), stderr()], "refusal": [mean()], "near_refusal": [mean()],
                  "parse_failure": [mean()], "unmatched": [mean()]},
                 user_need_levels()])
def user_need_accuracy() -> Scorer:
    """Exact match of the ``<output>`` answer with the cell's expected answer."""

    async def score(state: TaskState, target: Target) -> Score:
        md = state.metadata or {}
        extra = md.get("extra") or {}
        cell = {"question_id": extra.get("question_id", state.sample_id), "user_need": extra.get("user_need"),
                "setting": md.get("setting"), "n_contexts": extra.get("n_contexts"),
                "expected": list(target.target)}
        reply = state.output.completion
        parsed = parse_output(reply)
        if not parsed.ok:
            return Score(value={"correct": 0, "refusal": 0, "near_refusal": 0, "parse_failure": 1, "unmatched": 0},
                         answer=None, reason=unread_reason(reply),
                         explanation=f"parse failure: {parsed.reason}",
                         metadata={**cell, "reply": reply, "parse_failure_reason": parsed.reason})
        expected = list(target.target)
        value, match = judge_answer(parsed.answer, expected, extra.get("options"))
        option = match.option if match is not None else None
        return Score(
            value=value,
            answer=parsed.answer,
            reason=REFUSAL if value.get("refusal") else None,
            explanation=f"{canonical(parsed.answer)!r} vs expected {[canonical(t) for t in expected]}"
                        + (f" (names option {option!r})" if option else "")
                        + (f" (unmatched: {match.reason})" if value["unmatched"] else ""),
            metadata={**cell, "reply": reply, **({"matched_option": option} if option else {}),
                      **({"untagged_refusal": True} if parsed.untagged_refusal else {}),
                      **({"unmatched_reason": match.reason} if value["unmatched"] else {})},
        )

    return score
