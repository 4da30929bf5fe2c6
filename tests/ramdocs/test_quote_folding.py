"""Issue 32, RAMDocs row: typographic quotes and apostrophes fold to ASCII
before normalisation, so `<a>“Wulfsige’s farm” … or “Wulfric’s tūn”</a>` with
both gold answers is strict EM 1; the authors' normaliser (SQuAD, ASCII
punctuation only) gives 0, and both figures are reported. A hand-made record
in the upstream RAMDocs format; scripted End-to-End reply; values by hand."""

import json

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.scorers.ramdocs.metrics import strict_em_parts
from conflict_eval.testing import scripted_model

GOLD = ["Wulfsige's farm", "Wulfric's tūn"]
WRONG = ["Wulfstan's hill"]
ANSWER = "“Wulfsige’s farm” (one reading of the name) or “Wulfric’s tūn”"


def test_folded_and_authors_figures_by_hand():
    # folded: "wulfsiges farm" and "wulfrics tūn" are both whole-token runs of the answer
    assert strict_em_parts(ANSWER, GOLD, WRONG) == (1.0, 1.0, 0)
    # authors' SQuAD: the answer keeps “ ’ (tokens "“wulfsige’s", "tūn”"), no gold is found
    assert strict_em_parts(ANSWER, GOLD, WRONG, "squad_authors") == (0.0, 0.0, 0)


def test_strict_em_reports_both_figures(tmp_path, log_dir):
    row = {"question": "What does the place name Wolverton mean?",
           "documents": [{"text": "Wolverton means Wulfsige's farm.", "type": "correct", "answer": GOLD[0]},
                         {"text": "Another Wolverton means Wulfric's tūn.", "type": "correct", "answer": GOLD[1]},
                         {"text": "Wolverton means Wulfstan's hill.", "type": "misinfo", "answer": WRONG[0]}],
           "disambig_entity": ["Wolverton, Buckinghamshire", "Wolverton, Warwickshire"],
           "gold_answers": GOLD, "wrong_answers": WRONG}
    path = tmp_path / "ramdocs_handmade.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "ramdocs",
                                                         "scorer": "strict_em", "path": str(path)},
                         model=scripted_model([ANSWER + "</a>"]), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    [sample] = log.samples
    value = sample.scores["ramdocs_strict_em"].value
    assert (value["strict_em"], value["gold_recall"], value["strict_em_authors"]) == (1, 1.0, 0)
    [scores] = log.results.scores
    metrics = {name: m.value for name, m in scores.metrics.items()}
    assert metrics["strict_em"] == 1.0 and metrics["strict_em_authors"] == 0.0


def test_madam_rag_aggregator_with_curly_quotes(tmp_path, log_dir):
    """MADAM-RAG on the same record: every agent answers alike (early stop after
    round 2), the aggregator lists the two answers with curly quotes as a
    model writes them; strict EM 1 folded, 0 with the authors' normaliser."""
    row = {"question": "What does the place name Wolverton mean?",
           "documents": [{"text": "Wolverton means Wulfsige's farm.", "type": "correct", "answer": GOLD[0]},
                         {"text": "Another Wolverton means Wulfric's tūn.", "type": "correct", "answer": GOLD[1]}],
           "disambig_entity": ["Wolverton, Buckinghamshire", "Wolverton, Warwickshire"],
           "gold_answers": GOLD, "wrong_answers": WRONG}
    path = tmp_path / "ramdocs_handmade.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")

    def reply(prompt):
        if prompt.startswith("You are an aggregator"):
            return "All Correct Answers: [“Wulfsige’s farm”, “Wulfric’s tūn”]. Explanation: both readings."
        return "Answer: Wolverton. Explanation: scripted."

    [log] = inspect_eval("conflict_eval/run", task_args={"method": "madam_rag", "dataset": "ramdocs",
                                                         "path": str(path)},
                         model=scripted_model(reply), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    [sample] = log.samples
    value = sample.scores["ramdocs_strict_em"].value
    assert (value["strict_em"], value["strict_em_authors"], value["parse_failure"]) == (1, 0, 0)
