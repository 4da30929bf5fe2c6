"""AtomR's F1 folds curly quotes (ours) and reports the authors' figure beside it
(issue 32); golden values by hand."""

import pytest
from inspect_ai.scorer import SampleScore, Score

from conflict_eval.answers.text_metrics import token_f1
from conflict_eval.scorers.atomr.scorer import atomr_means


def test_f1_and_authors_f1():
    # folded: "wulfsiges farm" vs "wulfsiges farm" -> 1.0; authors: tokens "“wulfsige’s", "farm”" share none
    assert token_f1("“Wulfsige’s farm”", ["Wulfsige's farm"], "atomr") == 1.0
    assert token_f1("“Wulfsige’s farm”", ["Wulfsige's farm"], "atomr_authors") == 0.0
    scores = [SampleScore(score=Score(value={"f1": 1.0, "em": 1.0, "cover_em": 1.0, "f1_authors": 0.0},
                                      metadata={"category": "KG-Web"})),
              SampleScore(score=Score(value={"f1": 0.5, "em": 0.0, "cover_em": 0.0, "f1_authors": 0.5},
                                      metadata={"category": "KG-Web"})),
              SampleScore(score=Score(value={"f1": 0.0, "em": 0.0, "cover_em": 0.0, "f1_authors": 0.0},
                                      metadata={"category": "Text-Web"}))]
    out = atomr_means()(scores)
    assert out["f1"] == pytest.approx(0.5) and out["f1_authors"] == pytest.approx(1 / 6)
    # per category too (Table 3's columns), the authors' figure beside ours
    assert out["f1/KG-Web"] == pytest.approx(0.75) and out["f1_authors/KG-Web"] == pytest.approx(0.25)
    assert out["f1_authors/Text-Web"] == 0.0 and out["n/KG-Web"] == 2.0
