"""``choice_accuracy``'s per-sample values for the lm-eval export (the Inspect scorer's rules)."""

from __future__ import annotations

from conflict_eval.records import LETTERS, ConflictQA


def choice_scores(reply: str, rec: ConflictQA, failure: str | None = None) -> dict[str, int]:
    """``choice_accuracy``'s per-sample values: accuracy, parse_failure, refusal, misled.

    ``reply`` is the text the letter is parsed from (the method's answer
    segment where it has one); ``failure`` a method-level parse failure.
    """
    from conflict_eval.answers import parse_choice

    from .values import choice_values

    letters = LETTERS[: len(rec.options) or 4]
    parsed = parse_choice(reply, letters, options=list(rec.options) or None)
    if failure is None and parsed.ok:
        accuracy, misled, _ = choice_values(parsed.letter, rec.gold_option, rec.conflict_option,
                                            list(rec.options) or None)
        return {"accuracy": accuracy, "parse_failure": 0, "refusal": 0, "misled": misled}
    if parsed.refused:  # a refusal is scored wrong, and counted apart from parse failures
        return {"accuracy": 0, "parse_failure": 0, "refusal": 1, "misled": 0}
    return {"accuracy": 0, "parse_failure": 1, "refusal": 0, "misled": 0}
