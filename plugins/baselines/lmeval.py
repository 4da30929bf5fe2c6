"""Few-Shot (Fig. 11) and CoT (Fig. 12) in the lm-eval export: the prompts and answer
parsers the Inspect solvers use (hook ``conflict_eval_lmeval_exports``)."""

from __future__ import annotations

from conflict_eval.lmeval.utils import record

from .prompts import COT_TEMPLATE, FEW_SHOT_TEMPLATE


def _baseline_prompt(doc: dict, template: str, method: str) -> str:
    rec = record(doc)
    if not rec.is_multiple_choice:
        raise ValueError(f"{method} needs multiple-choice items; record {rec.id!r} of dataset "
                         f"{rec.dataset!r} has no options")
    return template.format(evidence=rec.evidence_text(), question=rec.question, options=rec.formatted_options())


def few_shot_prompt(doc: dict) -> str:
    return _baseline_prompt(doc, FEW_SHOT_TEMPLATE, "few_shot")


def cot_prompt(doc: dict) -> str:
    return _baseline_prompt(doc, COT_TEMPLATE, "cot")


def _process_baseline(doc: dict, results: list[str], prompt: str, parse) -> dict[str, int]:
    from conflict_eval.answers import restore_prefill
    from conflict_eval.scorers.choice_accuracy.lmeval import choice_scores

    reply = restore_prefill(prompt, results[0])
    found = parse(reply)
    # without an answer segment the whole reply is read, for a refusal only
    return choice_scores(found.answer if found.ok else reply, record(doc), None if found.ok else found.reason)


def process_few_shot(doc: dict, results: list[str]) -> dict[str, int]:
    from .parse import parse_few_shot

    return _process_baseline(doc, results, few_shot_prompt(doc), parse_few_shot)


def process_cot(doc: dict, results: list[str]) -> dict[str, int]:
    from .parse import parse_cot

    return _process_baseline(doc, results, cot_prompt(doc), parse_cot)


EXPORTS = {"few_shot_prompt": few_shot_prompt, "cot_prompt": cot_prompt,
           "process_few_shot": process_few_shot, "process_cot": process_cot}
