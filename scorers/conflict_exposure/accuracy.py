"""ACC and KRC of Conflict Exposure §4.6.

* ``yes_no_accuracy``: the reply is read by partial match for yes/no
  (:func:`conflict_eval.answers.yes_no.parse_yes_no`); accuracy counts a parse failure as wrong
  and ``parse_failure`` counts it separately.
* ``knowledge_recall`` (KRC): 1 when the method's final retrieved document
  set (recorded in :class:`RetrievalStore`) contains every gold supporting
  paragraph of the question, else 0; its mean is the share of questions with
  complete knowledge.
"""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, accuracy, mean, scorer, stderr
from inspect_ai.solver import TaskState

from conflict_eval.answers.yes_no import parse_yes_no
from conflict_eval.kb.rag import RetrievalStore
from conflict_eval.answers.reasons import unread_reason


@scorer(metrics={"accuracy": [accuracy(), stderr()], "parse_failure": [mean()]})
def yes_no_accuracy() -> Scorer:
    """ACC: yes/no by partial match against the gold Yes/No; parse failures counted."""

    async def score(state: TaskState, target: Target) -> Score:
        reply = state.output.completion
        parsed = parse_yes_no(reply)
        gold = target.text.strip().lower()
        if gold not in ("yes", "no"):
            raise ValueError(f"sample {state.sample_id}: yes_no_accuracy needs a Yes/No target, got {target.text!r}")
        if not parsed.ok:
            return Score(value={"accuracy": 0, "parse_failure": 1}, answer=None, reason=unread_reason(reply),
                         explanation=f"parse failure: {parsed.reason}",
                         metadata={"reply": reply, "parse_failure_reason": parsed.reason})
        return Score(value={"accuracy": int(parsed.value == gold), "parse_failure": 0},
                     answer=parsed.value, explanation=f"parsed {parsed.value!r}; gold {gold!r}",
                     metadata={"reply": reply})

    return score


@scorer(metrics=[mean(), stderr()])
def knowledge_recall() -> Scorer:
    """KRC: 1 if the retrieved set holds all supporting paragraphs of the question."""

    async def score(state: TaskState, target: Target) -> Score:
        supporting = (state.metadata.get("extra") or {}).get("supporting_ids")
        if supporting is None:
            raise ValueError(f"sample {state.sample_id}: knowledge_recall needs extra.supporting_ids "
                             "(use the polluted_kb dataset)")
        store = state.store_as(RetrievalStore)
        if not store.retrieved_ids:
            raise ValueError(f"sample {state.sample_id}: the method recorded no retrieved documents "
                             "(RetrievalStore); knowledge_recall applies to retrieval methods")
        missing = [s for s in supporting if s not in store.retrieved_ids]
        return Score(value=0 if missing else 1,
                     explanation=f"{len(supporting) - len(missing)}/{len(supporting)} supporting "
                                 f"paragraphs among {len(store.retrieved_ids)} retrieved",
                     metadata={"missing": missing, "retrieved_ids": list(store.retrieved_ids)})

    return score
