"""End-to-End (Micro-Act Fig. 10) in the lm-eval export: the prompt and the scoring the
Inspect task uses (hook ``conflict_eval_lmeval_exports``)."""

from __future__ import annotations

import json

from conflict_eval.lmeval.utils import record


def end_to_end_prompt(doc: dict) -> str:
    from conflict_eval.kb.answer import format_prompt

    return format_prompt(record(doc))


def process_end_to_end(doc: dict, results: list[str]) -> dict[str, float]:
    from conflict_eval.answers import first_tagged_answer, restore_prefill
    from conflict_eval.scorers.choice_accuracy.lmeval import choice_scores
    from conflict_eval.scorers.text_match.lmeval import text_scores

    # as kb.answer.finish_prefilled_answer
    rec = record(doc)
    reply = restore_prefill(end_to_end_prompt(doc), results[0])
    segment, _ = first_tagged_answer(reply)
    answer = segment if segment is not None else reply
    if rec.is_multiple_choice:
        return choice_scores(answer, rec)
    return text_scores(answer, json.loads(doc["target"]))


EXPORTS = {"end_to_end_prompt": end_to_end_prompt, "process_end_to_end": process_end_to_end}
