"""KRE in the user-needs grid: rows whose gold and misleading option texts are
the same are skipped and counted (issue 28 item 5); e-CARE options are shown
without a doubled full stop (item 11)."""

import json
import logging

from conflict_eval.plugins.user_needs.dataset import kre_items, user_needs_kre_ecare


def _rows(shared_data, name, n):
    return [json.loads(l) for l in (shared_data / name / "sample.jsonl").open()][:n]


def test_duplicated_gold_and_misleading_text_is_skipped_and_counted(shared_data, caplog):
    rows = _rows(shared_data, "kre_ecqa", 3)
    # the held-out ECQA shape: "indestructible" is both the gold and the manipulated answer
    dup = dict(rows[0])
    letters = "ABCDE"
    gold, cand = letters.index(dup["answer"]), letters.index(dup["candidate"])
    dup["choices"] = list(dup["choices"])
    dup["choices"][gold] = "indestructible"
    dup["choices"][cand] = "Indestructible."
    dup["negative_answer"] = "Indestructible."
    with caplog.at_level(logging.WARNING):
        items = kre_items("kre_ecqa", [(f"line {i + 1}", r) for i, r in enumerate([dup, *rows[1:]])])
    assert [it.id for it in items] == ["kre_ecqa-2", "kre_ecqa-3"]
    assert ("user_needs_kre_ecqa (None): 1 of 3 question(s) skipped "
            "(1 whose misleading option text equals the gold option text)") in caplog.text


def test_ecare_options_have_one_full_stop(shared_data):
    path = shared_data / "kre_ecare" / "sample.jsonl"
    ds = user_needs_kre_ecare(path=str(path), limit=5, n_contexts="1", user_need="context_first",
                              setting="matching")
    for sample in ds:
        assert ".." not in sample.metadata["question"]
    first = next(iter(ds))
    assert first.metadata["question"].endswith(
        "Options: The woman gave birth to a child; The baby feels the awareness through physical sensations.")
