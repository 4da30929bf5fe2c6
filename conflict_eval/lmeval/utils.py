"""Helper functions for the lm-eval task YAMLs in this directory.

lm-eval loads this file by path (``!function utils.<name>``). Every prompt and
every parsing/metric step is the function the Inspect side uses, so both
harnesses give the same score for the same model output:

* prompts: ``plugins/end_to_end`` (Micro-Act Fig. 10, and our free-form
  adaptation), ``plugins/baselines`` (Few-Shot Fig. 11, CoT Fig. 12),
  ``plugins/user_needs`` (Appendix B/C system and user prompts);
* pre-filled tags put back in front of a reply that continues them, as the
  solvers do (``restore_prefill`` for End-to-End, Few-Shot and CoT);
* answer extraction: ``parse_few_shot`` / ``parse_cot`` (baselines),
  ``conflict_eval.answers.parse_choice`` (multiple choice, as the
  ``choice_accuracy`` scorer), ``extract_answer`` + ``conflict_eval.answers.text_metrics``
  (free form, as ``token_f1`` / ``exact_match``), ``parse_output`` +
  ``matches`` / ``is_refusal`` (user needs, as ``user_need_accuracy``).

A reply no answer can be read from is a parse failure: ``parse_failure`` is 1
and the item counts as wrong; it is never mapped to a letter.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from conflict_eval.records import LETTERS, ConflictQA

# --------------------------------------------------------------------------
# documents


def load_docs(dataset: str, **kwargs: Any) -> dict:
    """``custom_dataset`` for every task: the registered conflict-eval dataset
    ``dataset`` as a ``test`` split of flat docs (id, record JSON, target JSON).

    Other keys (from ``dataset_kwargs`` or lm-eval's ``--metadata``, e.g.
    ``path``, ``limit``, ``conflict_type``, ``setting``) go to the dataset
    factory when it takes them; keys it does not take (lm-eval adds its own,
    such as ``version`` and the model arguments) are ignored.
    """
    import datasets

    from conflict_eval.components.manager import get_dataset

    component = get_dataset(dataset)
    params = inspect.signature(component.factory).parameters
    options = {k: v for k, v in kwargs.items() if k in params}
    samples = component.factory(**options)
    docs = [{"id": str(s.id), "record": json.dumps(s.metadata), "target": json.dumps(s.target)}
            for s in samples]
    for doc in docs:  # lm-eval reads a per-doc description (system prompt) from a doc field
        doc["system"] = user_need_system(doc) if "user_need" in record(doc).extra else ""
    return {"test": datasets.Dataset.from_list(docs)}


def record(doc: dict) -> ConflictQA:
    return ConflictQA.model_validate(json.loads(doc["record"]))


def doc_to_target(doc: dict) -> str:
    target = json.loads(doc["target"])
    return target if isinstance(target, str) else target[0]


# --------------------------------------------------------------------------
# prompts


def end_to_end_prompt(doc: dict) -> str:
    from conflict_eval.kb.answer import format_prompt

    return format_prompt(record(doc))


def _baseline_prompt(doc: dict, template: str, method: str) -> str:
    rec = record(doc)
    if not rec.is_multiple_choice:
        raise ValueError(f"{method} needs multiple-choice items; record {rec.id!r} of dataset "
                         f"{rec.dataset!r} has no options")
    return template.format(evidence=rec.evidence_text(), question=rec.question, options=rec.formatted_options())


def few_shot_prompt(doc: dict) -> str:
    from conflict_eval.plugins.baselines.prompts import FEW_SHOT_TEMPLATE

    return _baseline_prompt(doc, FEW_SHOT_TEMPLATE, "few_shot")


def cot_prompt(doc: dict) -> str:
    from conflict_eval.plugins.baselines.prompts import COT_TEMPLATE

    return _baseline_prompt(doc, COT_TEMPLATE, "cot")


def _user_need(doc: dict) -> str:
    need = record(doc).extra.get("user_need")
    if need is None:
        raise ValueError(f"record {doc['id']!r} has no extra.user_need; load a user_needs_* dataset "
                         "with user_need=<one need>")
    return need


def user_need_system(doc: dict) -> str:
    """The system prompt, stored in the doc's ``system`` field, which the task's
    ``description`` names: a system message under ``--apply_chat_template``,
    else put in front of the prompt."""
    from conflict_eval.plugins.user_needs.solver import build_messages

    return build_messages(record(doc), _user_need(doc))[0]


def user_need_prompt(doc: dict) -> str:
    from conflict_eval.plugins.user_needs.solver import build_messages

    return build_messages(record(doc), _user_need(doc))[1]


# --------------------------------------------------------------------------
# scoring (one function per prompt family)


def choice_scores(reply: str, rec: ConflictQA, failure: str | None = None) -> dict[str, int]:
    """``choice_accuracy``'s per-sample values: accuracy, parse_failure, refusal, misled.

    ``reply`` is the text the letter is parsed from (the method's answer
    segment where it has one); ``failure`` a method-level parse failure.
    """
    from conflict_eval.answers import parse_choice
    from conflict_eval.scorers.choice_accuracy.values import choice_values

    letters = LETTERS[: len(rec.options) or 4]
    parsed = parse_choice(reply, letters, options=list(rec.options) or None)
    if failure is None and parsed.ok:
        accuracy, misled, _ = choice_values(parsed.letter, rec.gold_option, rec.conflict_option,
                                            list(rec.options) or None)
        return {"accuracy": accuracy, "parse_failure": 0, "refusal": 0, "misled": misled}
    if parsed.refused:  # a refusal is scored wrong, and counted apart from parse failures
        return {"accuracy": 0, "parse_failure": 0, "refusal": 1, "misled": 0}
    return {"accuracy": 0, "parse_failure": 1, "refusal": 0, "misled": 0}


def text_scores(reply: str, golds: list[str]) -> dict[str, float]:
    """``token_f1`` and ``exact_match`` (SQuAD normalisation) of the extracted answer."""
    from conflict_eval.scorers.text_match.scorer import extract_answer
    from conflict_eval.answers.text_metrics import exact_match, token_f1

    answer = extract_answer(reply)
    return {"token_f1": token_f1(answer, golds), "exact_match": exact_match(answer, golds)}


def process_end_to_end(doc: dict, results: list[str]) -> dict[str, float]:
    from conflict_eval.answers import first_tagged_answer, restore_prefill

    # as kb.answer.finish_prefilled_answer
    rec = record(doc)
    reply = restore_prefill(end_to_end_prompt(doc), results[0])
    segment, _ = first_tagged_answer(reply)
    answer = segment if segment is not None else reply
    if rec.is_multiple_choice:
        return choice_scores(answer, rec)
    return text_scores(answer, json.loads(doc["target"]))


def _process_baseline(doc: dict, results: list[str], prompt: str, parse) -> dict[str, int]:
    from conflict_eval.answers import restore_prefill

    reply = restore_prefill(prompt, results[0])
    found = parse(reply)
    # without an answer segment the whole reply is read, for a refusal only
    return choice_scores(found.answer if found.ok else reply, record(doc), None if found.ok else found.reason)


def process_few_shot(doc: dict, results: list[str]) -> dict[str, int]:
    from conflict_eval.plugins.baselines.parse import parse_few_shot

    return _process_baseline(doc, results, few_shot_prompt(doc), parse_few_shot)


def process_cot(doc: dict, results: list[str]) -> dict[str, int]:
    from conflict_eval.plugins.baselines.parse import parse_cot

    return _process_baseline(doc, results, cot_prompt(doc), parse_cot)


def exported_prompts() -> tuple[bool, tuple[str, ...]]:
    """What the export can offer: whether the Few-Shot / CoT prompts (``plugins/baselines``)
    are installed, and the user needs of ``plugins/user_needs`` (empty when it is not).
    This module owns every import of a plugin or scorer the export makes."""
    try:
        from conflict_eval.plugins.baselines import prompts as _baselines  # noqa: F401

        have_baselines = True
    except ImportError:  # Few-Shot / CoT prompts not installed
        have_baselines = False
    try:
        from conflict_eval.plugins.user_needs.prompts import USER_NEEDS
    except ImportError:
        USER_NEEDS = ()
    return have_baselines, tuple(USER_NEEDS)


def process_user_need(doc: dict, results: list[str]) -> dict[str, int]:
    """``user_need_accuracy``'s per-sample values: correct, refusal, near_refusal, parse_failure, unmatched."""
    from conflict_eval.scorers.user_needs.parse import parse_output
    from conflict_eval.scorers.user_needs.scorer import judge_answer

    parsed = parse_output(results[0])
    if not parsed.ok:
        return {"correct": 0, "refusal": 0, "near_refusal": 0, "parse_failure": 1, "unmatched": 0}
    expected = json.loads(doc["target"])
    expected = [expected] if isinstance(expected, str) else expected
    return judge_answer(parsed.answer, expected, record(doc).extra.get("options"))[0]
