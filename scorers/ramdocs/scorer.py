"""``strict_em``: RAMDocs strict exact match, with its breakdowns.

Per sample the score value is a dict:

* ``strict_em`` 1 if the answer contains every gold answer and none of the
  wrong answers (:func:`.metrics.strict_em`), else 0. A reply whose answer
  could not be read counts 0 here *and* in ``parse_failure``.
* ``parse_failure`` 1 if the method said its reply has no readable answer
  (store key ``answer_parse_failure``, e.g. MADAM-RAG's aggregator wrote no
  ``All Correct Answers: [...]`` list).
* ``gold_recall`` share of the gold answers found (NaN if none is checkable).
* ``wrong_included`` 1 if a wrong answer was found.
* ``strict_em_authors`` the same strict EM with the authors' normaliser as
  published (SQuAD without folding typographic quotes; see
  :mod:`conflict_eval.answers.text_metrics`). ``strict_em`` folds ``“ ” ’``
  to ASCII first, so “Wulfsige’s farm” matches the gold "Wulfsige's farm";
  both figures are reported (the summary's ``strict_em_authors``).

What is read: the store key ``answer_text`` if the method set it (MADAM-RAG
puts the aggregator's answer list there), else the reply's ``<a>`` tag, else
the whole reply (:func:`conflict_eval.scorers.text_match.scorer.extract_answer`).

The metric :func:`strict_em_summary` reports ``strict_em`` (mean) and
``strict_em_stderr``, ``parse_failure``, ``gold_recall`` (mean where
defined), ``wrong_included``, ``n``, and per group ``strict_em:<group>``,
``parse_failure:<group>``, ``n:<group>`` for ``ambiguous`` /
``single_answer`` and ``with_misinformation`` / ``without_misinformation``
(from the record's ``extra``; a sample without them is an error naming it;
an empty group is NaN). See :func:`.metrics.summary`.
"""

from __future__ import annotations

import math

from inspect_ai.scorer import SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from conflict_eval.scorers.text_match.scorer import extract_answer
from conflict_eval.answers.text_metrics import NORMALIZERS
from conflict_eval.answers.reasons import NO_RESPONSE, unread_reason
from conflict_eval.records import ArgumentError, TaskArgument

from .metrics import group_of, strict_em_parts, summary

#: The authors' normaliser for each folding one: the same rules without quote folding.
AUTHORS_NORMALIZER = {"squad": "squad_authors", "atomr": "atomr_authors"}

ANSWER_TEXT_KEY = "answer_text"
PARSE_FAILURE_KEY = "answer_parse_failure"


def _groups(s: SampleScore) -> tuple[str, str]:
    extra = (s.sample_metadata or {}).get("extra") or {}
    try:
        return group_of(extra)
    except KeyError as exc:
        raise ArgumentError(f"strict_em: sample {s.sample_id!r} has no extra.{exc.args[0]}; the "
                            "breakdowns need RAMDocs records (", TaskArgument("dataset", "ramdocs"), ")",
                            in_sample=True) from None


@metric
def strict_em_summary():
    """Strict EM, parse failures, gold recall and wrong answers, overall and per group."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return summary((s.score.value, _groups(s)) for s in scores)

    return compute


@scorer(metrics=[strict_em_summary()])
def ramdocs_strict_em(normalizer: str = "squad") -> Scorer:
    """Strict exact match: every gold answer and no wrong answer (RAMDocs)."""
    if normalizer not in NORMALIZERS:
        raise ValueError(f"strict_em: unknown normalizer {normalizer!r}; available: {', '.join(NORMALIZERS)}")

    async def score(state: TaskState, target: Target) -> Score:
        extra = (state.metadata or {}).get("extra") or {}
        if "wrong_answers" not in extra:
            raise ArgumentError(f"strict_em: sample {state.sample_id!r} has no extra.wrong_answers; "
                                "strict EM needs RAMDocs records (", TaskArgument("dataset", "ramdocs"), ")",
                                in_sample=True)
        golds, wrongs = list(target.target), list(extra["wrong_answers"])
        reply = state.output.completion
        failure = state.store.get(PARSE_FAILURE_KEY)
        answer_text = state.store.get(ANSWER_TEXT_KEY)
        if failure:
            return Score(
                value={"strict_em": 0, "parse_failure": 1, "gold_recall": math.nan, "wrong_included": 0,
                       "strict_em_authors": 0},
                answer=None,
                reason=unread_reason(reply),
                explanation=f"parse failure: {failure}",
                metadata={"reply": reply, "parse_failure_reason": str(failure)},
            )
        answer = extract_answer(answer_text if answer_text is not None else reply)
        em, recall, wrong = strict_em_parts(answer, golds, wrongs, normalizer)
        authors = AUTHORS_NORMALIZER.get(normalizer, normalizer)
        em_authors = strict_em_parts(answer, golds, wrongs, authors)[0]
        return Score(
            value={"strict_em": em, "parse_failure": 0, "gold_recall": recall, "wrong_included": int(wrong > 0),
                   "strict_em_authors": em_authors},
            answer=answer,
            reason=None if answer.strip() else NO_RESPONSE,
            explanation=f"strict_em={em:g} (authors' normaliser: {em_authors:g}): gold {golds}, wrong {wrongs}",
            metadata={"reply": reply, "normalizer": normalizer, "authors_normalizer": authors},
        )

    return score
