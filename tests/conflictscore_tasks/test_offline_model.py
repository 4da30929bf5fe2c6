"""One short end-to-end run per task with the real offline model (SmolLM2-135M:
its answers are poor; these runs prove the tasks work end to end on real
data with a real model, not quality). Budgets are kept tiny: one sample,
few documents, short outputs. The all-documents grader call takes its budget
from ``--max-tokens`` (``grader_max_tokens=None``): a number there is a floor
under ``160 x documents`` (480 tokens for 3 documents), which SmolLM2 fills
with a loop that fails to parse at 24 tokens as at 480."""

import pytest
from inspect_ai import eval

pytestmark = pytest.mark.slow
MODEL = "conflict_eval/smollm2"


def _one(log):
    assert log.status == "success", log.error
    assert len(log.samples) == 1
    return log.samples[0]


def _output_tokens(sample) -> list[int]:
    return [e.output.usage.output_tokens for e in sample.events if e.event == "model"]


def test_conflictbench_with_smollm2(shared_data, log_dir):
    from conflict_eval.tasks.conflictbench.task import conflictbench

    task = conflictbench(path=str(shared_data / "kre_ecqa" / "sample.jsonl"), labelling="all_docs",
                         grader_max_tokens=None)
    s = _one(eval(task, model=MODEL, limit=1, max_tokens=24, log_dir=log_dir, display="none")[0])
    detection = s.metadata["detection"]
    assert detection["grader_calls"] == 1 and len(detection["label_matrix"][0]) == len(s.metadata["evidence"])
    assert len(_output_tokens(s)) == 1 and _output_tokens(s)[0] <= 24  # the --max-tokens budget
    assert s.output.completion in ("Conflict", "No Conflict", "undetermined")
    # every cell is either a label or a recorded failure with the raw reply
    for cell in detection["cells"]:
        assert cell["label"] in ("SUPPORTS", "CONTRADICTS", "IRRELEVANT") or (cell["error"] and cell["reply"])


def test_report_with_smollm2_writer_and_nli_grader(shared_data, log_dir, tmp_path):
    from conflict_eval.tasks.conflictscore_report.task import conflictscore_report
    from conflict_eval.scorers.conflictscore.nli import build_random_nli_model

    nli = build_random_nli_model(tmp_path / "nli")  # random weights: plumbing only
    task = conflictscore_report(path=str(shared_data / "macnoise_fewshot" / "sample.jsonl"), strategies="rag",
                                claims="sentences", backend="nli", nli_model=nli)
    s = _one(eval(task, model=MODEL, limit=1, max_tokens=40, log_dir=log_dir, display="none")[0])
    score = s.scores["conflictscore"]
    assert s.output.completion.strip()
    assert score.value["grader_calls"] == 0 and score.value["claims"] == len(score.metadata["claims"]) > 0
    assert all(len(row) == 5 for row in score.metadata["label_matrix"])


def test_truthfulqa_with_smollm2(shared_data, log_dir):
    from conflict_eval.tasks.truthfulqa_conflict.task import truthfulqa_conflict

    task = truthfulqa_conflict(path=str(shared_data / "truthfulqa_binary" / "sample.jsonl"), k=2,
                               labelling="all_docs", grader_max_tokens=None)
    s = _one(eval(task, model=MODEL, limit=1, max_tokens=8, log_dir=log_dir, display="none")[0])
    assert _output_tokens(s) and max(_output_tokens(s)) <= 8  # every call, the grader's too
    v = s.scores["truthfulqa_settings"].value
    assert set(v) >= {"rag", "control_rag", "regenerated_rag", "flagged"}
    store = s.store
    # scored (1 all-documents label call) unless the RAG letter was unparseable
    conflict = store.get("RegenerationStore:conflict") or {}
    assert conflict.get("grader_calls", 0) in (0, 1)
    assert (conflict.get("grader_calls") == 1) == (store.get("RegenerationStore:not_scored_reason") is None)
    if conflict:
        assert len(conflict["label_matrix"][0]) == 2
