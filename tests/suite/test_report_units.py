"""Units of the report: grouping keys, path display, intervals (golden values
by hand), direction, ties, score conversion."""

import math

import pytest

from conflict_eval.report.grouping import display_path, sample_group, short_heads, task_key
from conflict_eval.report.logs import score_values
from conflict_eval.report.stats import MetricSummary, Row, arrow, direction, interval, ranks

Z = 1.959963984540054


def wilson(k, n):
    """The Wilson score interval written out (Wilson 1927)."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


@pytest.mark.parametrize("values", [[1.0], [0.0], [1.0, 0.0, 1.0, 1.0], [0.0] * 5, [1.0] * 20])
def test_wilson_for_zero_one_metrics_never_zero_width(values):
    ci, method = interval(values)
    assert method == "wilson"
    assert ci == pytest.approx(wilson(sum(values), len(values)))
    assert ci[1] - ci[0] > 0.05


def test_bootstrap_then_clopper_pearson_when_every_value_is_the_same():
    ci, method = interval([0.2, 0.4, 0.9, 0.5], bootstrap=500, seed=0)
    assert method == "bootstrap" and 0.2 <= ci[0] < ci[1] <= 0.9
    # four samples each at 0.5 (e.g. two epochs, one right): no variation to resample;
    # Clopper-Pearson of k = 2 of n = 4: [beta.ppf(.025, 2, 3), beta.ppf(.975, 3, 2)] = [0.0676, 0.9324]
    ci, method = interval([0.5] * 4)
    assert method == "clopper-pearson" and ci == pytest.approx((0.067586, 0.932414), abs=1e-5)


def test_direction():
    assert direction("accuracy") == "higher" and direction("misled") == "lower"
    assert direction("conflict_detection.undetermined") == "lower" and direction("kre_ecqa/f1") == "higher"
    # parse failures, refusals, misled, harm and label failures are lower is better; a ratio
    # that is neither (ConflictQA's memorization ratio) declares nothing: no arrow
    assert {direction(m) for m in ("parse_failure", "refusal", "harm_rate", "label_failures")} == {"lower"}
    assert direction("memorization_ratio") is None and arrow("memorization_ratio") == ""
    assert arrow("label_failures") == "↓" and arrow("mean", "misled") == "↓"


def _row(model, mean, ci, metric="accuracy", per_id=None):
    return Row(model=model, task="t", n=10, errors=0, metrics={metric: MetricSummary(mean, None, ci, 10)},
               parse_failure_rate=None, calls=1, input_tokens=1, output_tokens=1, cost_per_sample=None,
               cost_total=None, cost_source=None, groups={}, headline=metric, per_id_headline=per_id or {})


def _ids(right: int, n: int = 20) -> dict[str, float]:
    return {f"q{i}": float(i < right) for i in range(n)}


def test_ties_come_from_the_paired_test_and_direction_decides_best():
    """a right on q0-q17, b on q0-q15 (2 discordant: McNemar p = 0.5, tied with a), c on q0-q3
    (14 discordant against a: p = 2 * 0.5^14, significant after Holm over the 3 pairs)."""
    from conflict_eval.report.stats import paired_comparisons

    rows = [_row("a", 0.9, (0.7, 0.97), per_id=_ids(18)), _row("b", 0.8, (0.6, 0.9), per_id=_ids(16)),
            _row("c", 0.2, (0.05, 0.5), per_id=_ids(4))]
    comps = paired_comparisons(rows)
    assert ranks(rows, comps) == {("a", "t"): "best (tied)", ("b", "t"): "tied"}
    # lower is better: c, with the lower value, is best, and not tied with a
    rows = [_row("a", 0.9, (0.7, 0.97), "misled", _ids(18)), _row("c", 0.2, (0.05, 0.5), "misled", _ids(4))]
    assert ranks(rows, paired_comparisons(rows)) == {("c", "t"): "best"}
    # a metric that declares no direction: no best, no tie
    rows = [_row("a", 0.9, None, "memorization_ratio", _ids(18)), _row("c", 0.2, None, "memorization_ratio", _ids(4))]
    assert ranks(rows, paired_comparisons(rows)) == {}


def test_scores_through_value_to_float():
    from inspect_ai.scorer import CORRECT, INCORRECT, PARTIAL, Score

    values, parse = score_values({"match": Score(value=CORRECT)})
    assert values == {"match": 1.0} and parse is None
    assert score_values({"match": Score(value=INCORRECT)})[0] == {"match": 0.0}
    assert score_values({"match": Score(value=PARTIAL)})[0] == {"match": 0.5}
    # an arbitrary answer string is not a metric; a dict's numeric keys are
    values, parse = score_values({"s": Score(value={"label": "undetermined", "correct": True, "parse_failure": 1})})
    assert values == {"correct": 1.0} and parse == 1.0


def test_sample_group_and_row_key():
    assert sample_group({"conflict_type": "temporal", "setting": "x"}) == "temporal"
    assert sample_group({"setting": "conflict"}) == "conflict" and sample_group({}) is None


def test_labels_never_carry_absolute_paths(tmp_path):
    f = tmp_path / "kre_ecqa" / "sample.jsonl"
    f.parent.mkdir()
    f.write_text('{"a": 1}\n')
    from conflict_eval.records.download import sha256_file

    shown = display_path(str(f))
    assert shown == f"kre_ecqa/sample.jsonl#{sha256_file(f)[:8]}" and display_path("../data/x.jsonl") == "../data/x.jsonl"
    key = task_key("conflict_eval/run", {"method": "cot", "dataset": "kre_ecqa", "path": str(f), "setting": "conflict"})
    assert key.label == f"cot/kre_ecqa(path={shown}, setting=conflict)" and str(tmp_path) not in key.label


def test_short_heads_keep_only_settings_that_differ():
    keys = [task_key("conflict_eval/run", {"method": "cot", "dataset": "kre_ecqa", "path": "/x/kre_ecqa/s.jsonl",
                                           "setting": s}) for s in ("conflict", "no_conflict", "mixed")]
    keys += [task_key("conflict_eval/microact", {"dataset": d, "max_turns": 4}) for d in ("kre_ecqa", "kre_ecare")]
    heads = short_heads(keys)
    assert sorted(heads.values()) == ["cot/kre_ecqa (setting=conflict)", "cot/kre_ecqa (setting=mixed)",
                                      "cot/kre_ecqa (setting=no_conflict)", "microact/kre_ecare", "microact/kre_ecqa"]


@pytest.mark.parametrize("n, p, significant", [(4, 2 / 2 ** 4, False), (6, 2 / 2 ** 6, True)])
def test_paired_comparison_with_no_variation_uses_mcnemar(n, p, significant):
    """Model a right on every shared id, b wrong on every one: every difference is +1, a
    bootstrap interval would be [1, 1]; McNemar's exact test gives p = 2 * 0.5^n."""
    from conflict_eval.report.stats import paired_comparisons

    a, b = _row("a", 1.0, None), _row("b", 0.0, None)
    a.per_id_headline = {f"q{i}": 1.0 for i in range(n)}
    b.per_id_headline = {f"q{i}": 0.0 for i in range(n + 2)}  # b has two ids a lacks: not compared
    (c,) = paired_comparisons([a, b])
    assert (c.n, c.n_a, c.n_b, c.diff, c.ci) == (n, n, n + 2, 1.0, None)
    assert c.result.p_value == pytest.approx(p) and c.significant is significant


def test_cell_says_n_cost_and_when_it_has_fewer_samples_than_its_column():
    from conflict_eval.report.format import cell_text

    r = _row("a", 0.5, (0.2, 0.8))
    r.cost_total = 0.25
    assert cell_text(r, None, 10) == "0.500 [0.200, 0.800] · n=10 · $0.2500"
    assert cell_text(r, "tied", 400) == "0.500 [0.200, 0.800] · fewer samples (10 vs 400) · tied · n=10 · $0.2500"
    assert cell_text(None) == "not run"
    r.parse_failure_rate, r.metrics["accuracy"] = 1.0, MetricSummary(0.0, None, (0.0, 0.28), 10)
    assert cell_text(r, None, 10) == "0.000 [0.000, 0.280] · 100% parse failures · n=10 · $0.2500"
