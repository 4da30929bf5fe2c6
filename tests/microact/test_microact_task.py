"""conflict_eval/microact and conflict_eval/run -T method=microact on real KRE records and
ConflictBank-format data; the Figure 5 analysis; one slow run with the offline model."""

import json
import math

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.plugins.microact.analysis import (
    bucket_by_length,
    bucket_by_perplexity,
    decompose_rows,
    perplexity_from_logprobs,
    summary_rows,
)
from conflict_eval.testing import scripted_model

FIXTURES = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures"


def gold_then_terminate(gold_by_question, decompose_questions=()):
    """Main turns: one decompose for the listed questions, then terminate; final: the gold letter."""
    decomposed = set()

    def reply(prompt):
        if prompt.startswith(("Generate some knowledge", "Input an evidence", "Break down")):
            return "1. a step\n2. another step"
        if "The session is over" in prompt:
            for q, letter in gold_by_question.items():
                if q in reply.task_prompt:
                    return f"{letter}</a>"
            raise AssertionError("unknown question")
        if "### Task: Knowledge Conflict Location" in prompt:
            reply.task_prompt = prompt
        for q in decompose_questions:
            if q in reply.task_prompt and q not in decomposed:
                decomposed.add(q)
                return '<f>decompose(reasoning_step="a step")</f>'
        return "<f>terminate()</f>"

    reply.task_prompt = ""
    return reply


def test_microact_task_on_real_kre_records(shared_data, log_dir):
    path = shared_data / "kre_ecqa" / "sample.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()[:3]]
    gold = {r["question"]: r["answer"] for r in rows}
    model = scripted_model(gold_then_terminate(gold, decompose_questions=[rows[0]["question"]]))
    [log] = inspect_eval("conflict_eval/microact", task_args={"path": str(path), "warm_start": False},
                         model=model, limit=3, log_dir=log_dir, display="none", max_samples=1)
    assert log.status == "success", log.error
    assert log.eval.task_args["dataset"] == "kre_ecqa"  # the task's default dataset
    first = model.script.calls[0][0].text
    assert rows[0]["question"] in first
    assert f'given_evidence = """{rows[0]["negative_context"]}"""' in first  # conflict setting
    assert "A. " + rows[0]["choices"][0] in first and "E. " + rows[0]["choices"][4] in first
    for sample in log.samples:
        assert sample.scores["choice_accuracy"].value["accuracy"] == 1
    [summary] = [s for s in log.results.scores if s.name == "microact_trajectory"]
    metrics = summary.metrics
    # 3 samples: the first decomposes once then terminates (turns 2), the others terminate (turns 1)
    assert metrics["turns"].value == pytest.approx((2 + 1 + 1) / 3)
    assert metrics["decompose"].value == pytest.approx(1 / 3)
    # calls: sample 1 = main, decompose, main, final = 4; others main, final = 2 -> 8 / 3
    assert metrics["calls"].value == pytest.approx(8 / 3)

    # Figure 5 analysis on this log, lengths in whitespace words
    rows_ = {r["id"]: r for r in decompose_rows(log)}
    [first_id] = [str(s.id) for s in log.samples if s.input == rows[0]["question"]]
    assert rows_.pop(first_id) == {"id": first_id, "conflict_type": log.samples[0].metadata["conflict_type"],
                                   "context_tokens": len(rows[0]["negative_context"].split()),
                                   "perplexity": None, "decompose": 1}
    assert [r["decompose"] for r in rows_.values()] == [0, 0]
    rows_ = decompose_rows(log)
    buckets = bucket_by_length(rows_)
    assert buckets[0] == {"bucket": "0-100", "n": 3, "decomposed": 1, "decompose_rate": pytest.approx(1 / 3)}
    assert all(b["n"] == 0 and b["decompose_rate"] is None for b in buckets[1:])
    [all_row] = [r for r in summary_rows([log]) if r["conflict_type"] == "all"]
    assert (all_row["n"], all_row["accuracy"], all_row["turns"]) == (3, 1, pytest.approx(4 / 3))


def test_run_task_with_microact_on_conflictbank_format(log_dir):
    # tests/fixtures/conflictbank: hand-written records in the upstream CB_qa schema
    path = FIXTURES / "conflictbank" / "qa_dataset_handwritten.jsonl"
    model = scripted_model(lambda p: "B</a>" if "The session is over" in p else "<f>terminate()</f>")
    [log] = inspect_eval("conflict_eval/run", task_args={
        "method": "microact", "dataset": "conflictbank", "path": str(path),
        "conflict_type": "temporal", "max_turns": 2, "warm_start": False,
        "scorer": ["choice_accuracy", "microact_trajectory"]},
        model=model, limit=2, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    assert len(log.samples) == 2
    for s in log.samples:
        assert s.metadata["conflict_type"] == "temporal"
        assert s.scores["microact_trajectory"].value["turns"] == 1
        assert s.output.completion == "<a>B</a>"
    assert "**two turns**" in model.script.calls[0][0].text


def test_bucket_by_length_edges_and_perplexity_quartiles():
    rows = [{"context_tokens": t, "decompose": d, "perplexity": p}
            for t, d, p in [(0, 0, 5.0), (99, 1, 7.0), (100, 1, 9.0), (250, 0, 11.0), (400, 1, 3.0), (900, 1, 13.0)]]
    by_len = {b["bucket"]: (b["n"], b["decomposed"]) for b in bucket_by_length(rows)}
    # [0,100): 0 and 99; [100,200): 100; [200,300): 250; [300,400): none; 400+: 400 and 900
    assert by_len == {"0-100": (2, 1), "100-200": (1, 1), "200-300": (1, 0), "300-400": (0, 0), "400+": (2, 2)}
    # perplexities sorted 3,5,7,9,11,13 -> 3 bins of 2: (3,5) (7,9) (11,13); decomposes 1+0, 1+1, 0+1
    by_ppl = [(b["bucket"], b["decomposed"], b["decompose_rate"]) for b in bucket_by_perplexity(rows, n_bins=3)]
    assert by_ppl == [("3.0-5.0", 1, 0.5), ("7.0-9.0", 2, 1.0), ("11.0-13.0", 1, 0.5)]


def test_perplexity_arithmetic():
    # tokens predicted with p = 0.5 and 0.25: exp(-(ln 0.5 + ln 0.25) / 2) = exp(ln 8 / 2) = sqrt(8)
    assert perplexity_from_logprobs([math.log(0.5), math.log(0.25)]) == pytest.approx(math.sqrt(8))
    assert perplexity_from_logprobs([0.0, 0.0]) == 1.0  # certain predictions
    with pytest.raises(ValueError):
        perplexity_from_logprobs([])


@pytest.mark.slow
def test_offline_model_end_to_end_and_perplexity(shared_data, log_dir):
    from conflict_eval.plugins.microact.analysis import LocalLM

    path = shared_data / "kre_ecqa" / "sample.jsonl"
    [log] = inspect_eval("conflict_eval/microact", task_args={"dataset": "kre_ecqa", "path": str(path),
                                                              "max_turns": 4},
                         model="conflict_eval/smollm2", limit=1, max_tokens=8, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    sample = log.samples[0]
    store = {k.split(":", 1)[1]: v for k, v in sample.store.items() if k.startswith("MicroActStore:")}
    # budget 4: three warm-start turns, one model turn (unless it terminated), then the final call
    assert store["turns_used"] == 4
    assert store["calls"] == 3 + 1 + (0 if store["turns"][3]["action"] in (None, "terminate") else 1) \
        + store["forced_decompose_count"] + 1
    assert store["input_tokens"] > 0 and store["output_tokens"] > 0
    assert "choice_accuracy" in sample.scores and "microact_trajectory" in sample.scores
    lm = LocalLM("smollm2")
    [row] = decompose_rows(log, lm)
    assert row["context_tokens"] > 0 and row["perplexity"] > 1
    plain = lm.perplexity("The cat sat on the mat. The cat sat on the mat. The cat sat on the mat.")
    noise = lm.perplexity("qz xv jjw plok ztt vrq mmn uuo zzk qpl wvx")
    assert plain < noise


def test_cheapest_trajectory_is_one_model_turn_with_the_warm_start(shared_data, log_dir):
    """Default settings (warm start on): a model that terminates at once used one
    turn by Tables 3-4's count, after Figure 17's three executed worked turns."""
    path = shared_data / "kre_ecqa" / "sample.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()[:2]]
    gold = {r["question"]: r["answer"] for r in rows}
    current = []

    def reply(prompt):
        current.extend(q for q in gold if q in prompt)  # the worked turns' helper prompts name it
        if prompt.startswith(("Generate some knowledge", "Input an evidence")):
            return "1. a step\n2. another step"
        if "The session is over" in prompt:
            return f"{gold[current[-1]]}</a>"
        assert "## Turn 4:" in prompt, prompt[:300]
        return "**Thought:** the paths agree.\n**Action:** <f>terminate()</f>"

    model = scripted_model(reply)
    [log] = inspect_eval("conflict_eval/microact", task_args={"path": str(path)},
                         model=model, limit=2, log_dir=log_dir, display="none", max_samples=1)
    assert log.status == "success", log.error
    for s in log.samples:
        v = s.scores["microact_trajectory"].value
        # worked turns: reason, knowledge_gen, reason (3 helper calls); turn 4: terminate; final call
        assert (v["turns"], v["worked_turns"], v["total_turns"], v["calls"]) == (1, 3, 4, 5)
    [summary] = [s for s in log.results.scores if s.name == "microact_trajectory"]
    assert summary.metrics["turns"].value == 1 and summary.metrics["worked_turns"].value == 3
    [all_row] = [r for r in summary_rows([log]) if r["conflict_type"] == "all"]
    assert (all_row["turns"], all_row["worked_turns"]) == (1, 3)
    # the model's first turn is Figure 17's turn 4, with 5 of the 8 turns remaining
    first_main = next(c for c in model.script.calls if "## Turn 4:" in c[-1].text)
    assert "# 5 turns remaining" in first_main[-1].text
