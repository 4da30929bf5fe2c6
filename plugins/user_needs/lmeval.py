"""User needs (Appendix B/C) in the lm-eval export: the system and user prompts and the
scoring of ``user_need_accuracy`` (hook ``conflict_eval_lmeval_exports``)."""

from __future__ import annotations

import json

from conflict_eval.lmeval.utils import record


def user_need_names() -> tuple[str, ...]:
    """The user needs the export writes one task per (and per user-need dataset)."""
    from .prompts import USER_NEEDS

    return tuple(USER_NEEDS)


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
    from .solver import build_messages

    return build_messages(record(doc), _user_need(doc))[0]


def user_need_prompt(doc: dict) -> str:
    from .solver import build_messages

    return build_messages(record(doc), _user_need(doc))[1]


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


EXPORTS = {"user_need_names": user_need_names, "user_need_system": user_need_system,
           "user_need_prompt": user_need_prompt, "process_user_need": process_user_need}
