"""ConflictQA: loader on the shared GPT-4 StrategyQA sample, the authors' prompt,
and the memorization ratio by hand on scripted replies through conflict_eval/run."""

import json
import math
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.records.download import DownloadError
from conflict_eval.plugins.conflictqa.dataset import SETTINGS, conflictqa
from conflict_eval.scorers.conflictqa.metrics import summary
from conflict_eval.plugins.conflictqa.solver import format_prompt
from conflict_eval.records import ConflictQA, DatasetError
from conflict_eval.testing import scripted_model

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "conflictqa"


def _rows(path, n=None):
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    return [json.loads(line) for line in lines[:n]]


def test_every_real_record_loads_in_every_setting(shared_data):
    path = shared_data / "conflictqa_strategyqa" / "sample.jsonl"
    rows = _rows(path)
    ds = conflictqa(path=str(path))
    identical = [r for r in rows if r["memory_answer"].strip() == r["counter_answer"].strip()]
    assert len(identical) == 3 and len(ds.provenance["skipped_identical_answers"]) == 3
    assert len(ds) == 4 * (len(rows) - 3) == 3604
    kept = [r for r in rows if r not in identical]
    samples = list(ds)
    for i, row in enumerate(kept):
        group = samples[4 * i: 4 * i + 4]
        assert [s.metadata["setting"] for s in group] == list(SETTINGS)
        for s in group:
            record = ConflictQA.model_validate(s.metadata)
            assert record.options == [row["memory_answer"], row["counter_answer"], "Uncertain."]
            assert s.target == "A" and record.extra["counter_option"] == "B"
            texts = [p.text for p in record.evidence]
            assert texts == {"counter_memory": [row["counter_memory"]],
                             "memory_only": [row["parametric_memory"]],
                             "both_memory_first": [row["parametric_memory"], row["counter_memory"]],
                             "both_counter_first": [row["counter_memory"], row["parametric_memory"]]}[record.setting]
            assert record.extra["ground_truth"] == row["ground_truth"]


def test_prompt_is_the_authors(shared_data):
    row = _rows(shared_data / "conflictqa_strategyqa" / "sample.jsonl", 1)[0]
    single, both = (ConflictQA.model_validate(s.metadata) for s in
                    [conflictqa(path=str(shared_data / "conflictqa_strategyqa" / "sample.jsonl"), setting=st)[0]
                     for st in ("counter_memory", "both_counter_first")])
    assert format_prompt(single) == (
        "According to the given information and your knowledge, choose the best choice from the following "
        f"options.\n\nInformation: {row['counter_memory']}\n\nQuestion: {row['question']}\n\nOptions:\n"
        f"A: {row['memory_answer']}\nB: {row['counter_answer']}\nC: Uncertain.\n\nAnswer: ")
    assert format_prompt(both).startswith(
        "According to the given information, choose the best choice from the following options.\n\n"
        f"Information: \n1. {row['counter_memory']}\n2. {row['parametric_memory']}\n\nQuestion: ")


def test_option_order_counter_first_swaps_the_letters():
    [s] = conflictqa(path=str(FIXTURES / "mini.jsonl"), setting="counter_memory", option_order="counter_first",
                     limit=1)
    record = ConflictQA.model_validate(s.metadata)
    assert record.options[0] == record.conflict_answer and record.gold_option == "B"
    assert record.extra["memory_option"] == "B" and record.extra["counter_option"] == "A"


def test_bad_options_and_records():
    with pytest.raises(ValueError, match="setting"):
        conflictqa(path=str(FIXTURES / "mini.jsonl"), setting="counter")
    with pytest.raises(ValueError, match="option_order"):
        conflictqa(path=str(FIXTURES / "mini.jsonl"), option_order="random")
    with pytest.raises(ValueError, match="unknown memory_model"):
        conflictqa(memory_model="gpt5")
    row = _rows(FIXTURES / "mini.jsonl", 1)[0]
    del row["counter_memory"]
    from conflict_eval.plugins.conflictqa.dataset import converter
    from conflict_eval.records import convert_rows
    with pytest.raises(DatasetError, match="counter_memory"):
        convert_rows("conflictqa", [("line 1", row)], converter(SETTINGS, "memory_first", []))


def test_download_wants_the_pinned_per_model_file():
    with pytest.raises(DownloadError) as err:
        conflictqa(memory_model="llama2-7b")
    assert "595e02b6fedfdb03316b763e5036da93ffb12fbf/conflictQA/conflictQA-strategyQA-llama2-7b.json" in str(err.value)


def test_summary_undefined_ratio_is_nan():
    out = summary(["uncertain", "parse_failure"])
    assert math.isnan(out["memorization_ratio"]) and out["uncertain_rate"] == 0.5
    assert all(math.isnan(v) for k, v in summary([]).items() if k != "n")


# (row, setting) -> scripted reply, and the class it must get
REPLIES = {
    (0, "counter_memory"): ("B", "counter"),
    (1, "counter_memory"): ("B: {counter}", "counter"),
    (2, "counter_memory"): ("C: Uncertain.", "uncertain"),
    (0, "both_memory_first"): ("A", "memory"),
    (1, "both_memory_first"): ("**A**", "memory"),
    (2, "both_memory_first"): ("The answer is B.", "counter"),
    (0, "both_counter_first"): ("A: {memory}", "memory"),
    (1, "both_counter_first"): ("A or B.", "parse_failure"),
    (2, "both_counter_first"): ("Answer: A", "memory"),
    (0, "memory_only"): ("A", "memory"),
    (1, "memory_only"): ("{memory}", "memory"),  # option text only
    (2, "memory_only"): ("A. {memory}", "memory"),
}


def test_memorization_ratio_by_hand(shared_data, tmp_path, log_dir):
    src = shared_data / "conflictqa_strategyqa" / "sample.jsonl"
    rows = _rows(src, 3)
    subset = tmp_path / "conflictqa-strategyQA-gpt4.json"
    subset.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def setting_of(prompt, row):
        if f"Information: {row['counter_memory']}\n\n" in prompt:
            return "counter_memory"
        if f"Information: {row['parametric_memory']}\n\n" in prompt:
            return "memory_only"
        if f"Information: \n1. {row['parametric_memory']}\n2." in prompt:
            return "both_memory_first"
        assert f"Information: \n1. {row['counter_memory']}\n2." in prompt
        return "both_counter_first"

    def reply(prompt):
        [i] = [i for i, r in enumerate(rows) if f"Question: {r['question']}\n" in prompt]
        text, _ = REPLIES[(i, setting_of(prompt, rows[i]))]
        return text.format(memory=rows[i]["memory_answer"], counter=rows[i]["counter_answer"])

    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "conflictqa_mc", "dataset": "conflictqa", "path": str(subset)},
                         model=scripted_model(reply), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    # no -T scorer=: ConflictQA declares memorization_ratio
    assert log.eval.metadata["scorers"] == ["memorization_ratio"]
    assert log.eval.metadata["scorer_source"] == "declared"
    assert len(log.samples) == 12
    question_index = {r["question"]: i for i, r in enumerate(rows)}
    for s in log.samples:
        expected = REPLIES[(question_index[s.metadata["question"]], s.metadata["setting"])][1]
        assert s.scores["memorization_ratio"].metadata["class"] == expected
    m = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    # by hand: memory 0+2+2+3 = 7, counter 2+1+0+0 = 3, uncertain 1, parse failure 1, n 12
    assert m["memorization_ratio"] == pytest.approx(7 / 10)
    assert (m["memory_rate"], m["counter_rate"], m["uncertain_rate"], m["parse_failure_rate"]) == \
        pytest.approx((7 / 12, 3 / 12, 1 / 12, 1 / 12))
    assert m["memorization_ratio:counter_memory"] == 0.0  # 0 memory, 2 counter
    assert m["uncertain_rate:counter_memory"] == pytest.approx(1 / 3)
    assert m["memorization_ratio:both_memory_first"] == pytest.approx(2 / 3)
    assert m["memorization_ratio:both_counter_first"] == 1.0  # 2 memory, 0 counter
    assert m["parse_failure_rate:both_counter_first"] == pytest.approx(1 / 3)
    assert m["memorization_ratio:memory_only"] == 1.0 and m["n:memory_only"] == 3


def test_standard_rag_takes_both_evidences_as_given_documents(log_dir):
    """A multiple-choice dataset with its own documents: standard_rag numbers them and
    asks the End-to-End question with the options; the letter is classed."""
    model = scripted_model(lambda prompt: "B</a>")
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "standard_rag", "dataset": "conflictqa", "setting": "both_counter_first",
                                    "path": str(FIXTURES / "mini.jsonl"), "scorer": "memorization_ratio"},
                         model=model, limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    [prompt] = [m.text for call in model.script.calls for m in call]
    row = _rows(FIXTURES / "mini.jsonl", 1)[0]
    assert f"\n[1] {row['counter_memory']}\n[2] {row['parametric_memory']}" in prompt
    assert f"A. {row['memory_answer']}\nB. {row['counter_answer']}\nC. Uncertain." in prompt
    [sample] = log.samples
    assert sample.scores["memorization_ratio"].metadata["class"] == "counter"
