"""``token_f1`` / ``exact_match`` per-sample values for the lm-eval export (the Inspect scorers' rules)."""

from __future__ import annotations


def text_scores(reply: str, golds: list[str]) -> dict[str, float]:
    """``token_f1`` and ``exact_match`` (SQuAD normalisation) of the extracted answer."""
    from conflict_eval.answers.text_metrics import exact_match, token_f1

    from .scorer import extract_answer

    answer = extract_answer(reply)
    return {"token_f1": token_f1(answer, golds), "exact_match": exact_match(answer, golds)}
