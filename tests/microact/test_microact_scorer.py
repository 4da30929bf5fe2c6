"""microact_trajectory: per-sample values and the summary metric, golden values by hand."""

import pytest
from inspect_ai.scorer import SampleScore, Score

from conflict_eval.scorers.microact.trajectory import MEAN_KEYS, cost_usd, trajectory_summary


def test_cost_reproduces_table_4():
    # Table 4 (GPT-4o-mini): 3532 input, 1289 output tokens -> $0.0013 at $0.15 / $0.60 per 1M:
    # 3532 * 0.15 / 1e6 = 0.0005298; 1289 * 0.60 / 1e6 = 0.0007734; sum 0.0013032.
    assert cost_usd(3532, 1289, 0.15, 0.60) == pytest.approx(0.0013032)
    # Table 3 (GPT-4o, $2.50 / $10.00): 3345 * 2.5e-6 + 1137 * 1e-5 = 0.0083625 + 0.01137 = 0.0197325 ~ $0.020.
    assert cost_usd(3345, 1137, 2.5, 10.0) == pytest.approx(0.0197325)


def _value(turns, decompose, input_tokens):
    v = {k: 0 for k in MEAN_KEYS}
    v.update(turns=turns, decompose=decompose, input_tokens=input_tokens)
    return v


def test_summary_means_and_decompose_by_conflict_type():
    scores = [
        SampleScore(score=Score(value=_value(4, 0, 1000)), sample_id="a", sample_metadata={"conflict_type": "temporal"}),
        SampleScore(score=Score(value=_value(6, 3, 3000)), sample_id="b", sample_metadata={"conflict_type": "temporal"}),
        SampleScore(score=Score(value=_value(5, 1, 2000)), sample_id="c", sample_metadata={"conflict_type": "none"}),
    ]
    out = trajectory_summary()(scores)
    assert out["turns"] == pytest.approx((4 + 6 + 5) / 3)          # 5.0
    assert out["input_tokens"] == pytest.approx((1000 + 3000 + 2000) / 3)  # 2000.0
    assert out["decompose"] == pytest.approx((0 + 3 + 1) / 3)      # 1.333...
    assert out["decompose[temporal]"] == pytest.approx(1.5)        # (0 + 3) / 2
    assert out["decompose_rate[temporal]"] == pytest.approx(0.5)   # 1 of 2 samples decomposed
    assert out["decompose[none]"] == 1.0 and out["decompose_rate[none]"] == 1.0
    assert trajectory_summary()([]) == {}
