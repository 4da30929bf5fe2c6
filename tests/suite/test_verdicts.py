"""Verdicts a reader can trust (report.paired, report.compare, the page): significance from the
test, never the bootstrap seed; direction from the metric; nothing dropped or merged in silence.

Golden values by hand:

* 40 questions, A right on q0-q23, B on q4-q23: 4 discordant pairs, all for A. McNemar exact,
  two-sided: 2 * 0.5^4 = 0.125, not significant, whatever the seed. The bootstrap mean of the
  paired differences (four 1s, 36 0s) is Binomial(40, 0.1)/40; P(X = 0) = 0.9^40 = 0.015 < 2.5%,
  so the percentile interval usually starts at 1/40 > 0 (some seeds draw more zeros): interval and
  test then disagree, and the row says so.
* A right on q0-q31, B on q12-q31: 12 discordant, all for A: p = 2 * 0.5^12 = 0.000488.
* Permutation test, paired differences d = (0.4, 0.3, 0.2, -0.1): the statistic is mean(d) =
  0.2; of the 16 sign patterns, |mean| >= 0.2 (|sum| >= 0.8) only when the flipped magnitudes
  sum to 0 or 0.1, or to 1.0 or 0.9: 4 patterns, p = 4/16 = 0.25.
* Holm: p = (0.01, 0.04, 0.03, 0.005) -> sorted 0.005 * 4 = 0.02, 0.01 * 3 = 0.03,
  0.03 * 2 = 0.06, 0.04 * 1 = 0.04 -> running max 0.06: (0.03, 0.06, 0.06, 0.02).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import Score, match, mean, scorer
from inspect_ai.solver import generate

N = 40


def _questions(name: str = "yes", n: int = N, target: str = "yes", prompt: str = "answer yes or no"):
    @task(name=name)
    def questions():
        return Task(dataset=[Sample(id=f"q{i}", input=f"Question {i}: {prompt}.", target=target) for i in range(n)],
                    solver=generate(), scorer=match())

    return questions()


@scorer(metrics=[mean()], name="misled")
def misled_scorer():
    """1 when the model took the misleading answer ("misled"), NaN when it said "skip": lower is better."""

    async def score(state, target):
        text = state.output.completion
        return Score(value=math.nan if text == "skip" else float(text == "misled"))

    return score


def _model(name: str, replies: list[str]):
    """A scripted model named ``name`` whose reply to question i is ``replies[i]`` (any order of samples)."""
    from conflict_eval.testing import ScriptedReplies

    def reply(prompt: str) -> str:
        return replies[int(prompt.split(":")[0].split()[-1])]

    return get_model(name, custom_outputs=ScriptedReplies(reply), memoize=False)


def _run(tmp_path, name: str, replies: list[str], the_task=None, model: str = "mockllm/m", **kwargs) -> str:
    (log,) = eval(the_task or _questions(), model=_model(model, replies), log_dir=str(tmp_path / name),
                  display="none", **kwargs)
    assert log.status == "success"
    return log.location


def _right(k: int, start: int = 0) -> list[str]:
    return ["yes" if start <= i < k else "no" for i in range(N)]


def _variant(location: str, out, model: str, right: range) -> str:
    """A copy of a log of the same task, as another model that is right on ``right`` only: the
    match score of each sample rewritten (``read_eval_log`` / ``write_eval_log``), so one eval serves
    three sides (an eval of 40 samples costs seconds on the loaded test machine)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(location)
    log.eval.model = model
    for s in log.samples:
        s.scores["match"].value = "C" if int(str(s.id)[1:]) in right else "I"
    out.mkdir()
    path = str(out / f"{out.name}-{Path(location.removeprefix('file://')).name}")
    write_eval_log(log, path)
    return path


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """A right on q0-q31; B4 (same model) on q4-q31: 4 discordant, all for A; B12 (another model)
    on q12-q31: 12 discordant, all for A."""
    tmp = tmp_path_factory.mktemp("verdicts")
    a = _run(tmp, "a", _right(32))
    return {"tmp": tmp, "a": a, "b4": _variant(a, tmp / "b4", "mockllm/m", range(4, 32)),
            "b12": _variant(a, tmp / "b12", "mockllm/other", range(12, 32))}


def test_four_discordant_of_forty_is_not_significant_under_any_seed(logs):
    from conflict_eval.report.compare import compare

    notes = set()
    for seed in (0, 1, 2):
        (c,) = compare(logs["a"], logs["b4"], seed=seed)["comparisons"]
        r = c.result
        assert (r.test, r.a_higher, r.b_higher) == ("mcnemar_exact", 4, 0)
        assert r.p_value == pytest.approx(0.125) and r.p_adjusted == pytest.approx(0.125)
        assert not r.significant and c.better is None
        # the interval moves with the seed (usually [0.025, 0.2]); the verdict does not, and a row
        # whose interval excludes 0 says that it disagrees with the test
        excludes = r.ci[0] > 0
        notes.add(r.note)
        assert r.note == ("interval excludes 0 but the test is not significant" if excludes else None)
    assert "interval excludes 0 but the test is not significant" in notes


def test_twelve_discordant_of_forty_is_significant_and_flips_are_listed(logs, capsys):
    from conflict_eval.cli.main import main

    a, b = logs["a"], logs["b12"]
    assert main(["compare", a, b, "--format", "json", "--seed", "7"]) == 0
    (c,) = json.loads(capsys.readouterr().out)["comparisons"]
    assert c["result"]["p_value"] == pytest.approx(2 * 0.5 ** 12) and c["result"]["significant"]
    assert c["better"] == "mockllm/m" and c["direction"] == "higher"
    assert c["better_side"] == "A"  # both sides are mockllm/m: the model name alone does not say which won
    assert sorted(c["flips_a"], key=lambda i: int(i[1:])) == [f"q{i}" for i in range(12)] and c["flips_b"] == []
    assert main(["compare", a, b]) == 0
    md = capsys.readouterr().out
    assert "McNemar exact (12 A-better / 0 B-better) | 0.0004883 | 0.0004883 | significant, A better |" in md
    assert "flips: right in A only: 12 (" in md and "right in B only: 0 (none)" in md
    # at most 20 ids per direction in the text; all in the JSON
    from conflict_eval.report.compare import _list

    assert _list([f"q{i}" for i in range(25)], 20).endswith("q19 (+5 more)")


def test_compare_refuses_a_side_that_mixes_two_models(logs):
    import shutil

    from conflict_eval.report.compare import CompareError, compare

    mixed = logs["tmp"] / "mixed"
    mixed.mkdir()
    for k in ("b4", "b12"):
        shutil.copy(logs[k].removeprefix("file://"), mixed)
    with pytest.raises(CompareError, match=r"side B mixes models for task yes \(mockllm/m: 40 samples; "
                                           r"mockllm/other: 40 samples\)"):
        compare(logs["a"], mixed)


def test_compare_refuses_two_datasets_sharing_ids_unless_told(logs):
    from conflict_eval.report.compare import CompareError, compare

    other = _run(logs["tmp"], "other", ["yes"] * 5, _questions(n=5, prompt="answer no or yes"))
    with pytest.raises(CompareError, match="5 shared sample id.s. hold different input or target.*--pair-anyway"):
        compare(logs["a"], other)
    (c,) = compare(logs["a"], other, pair_anyway=True)["comparisons"]
    assert c.n_paired == 5 and c.missing_in_b == [f"q{i}" for i in range(5, N)] or len(c.missing_in_b) == N - 5


def test_mcnemar_p_is_scipys_binomtest():
    from scipy.stats import binomtest

    from conflict_eval.report.paired import exact_test

    for n, k in [(n, k) for n in (1, 2, 3, 4, 7, 12) for k in range(n + 1)] + [(40, 4), (40, 12), (41, 20)]:
        _, p, up, down = exact_test([1] * k + [0] * (n - k), [0] * k + [1] * (n - k))
        assert (up, down) == (k, n - k) and p == pytest.approx(binomtest(k, n, 0.5).pvalue, rel=1e-9)


def test_holm_and_alpha():
    """Two rows of one family: p 0.125 and 0.000488 -> Holm: 0.000488 * 2, then max(0.125, ...) = 0.125."""
    from conflict_eval.report.paired import adjust, holm, paired_difference

    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    r4 = paired_difference([1] * 24 + [0] * 16, [0] * 4 + [1] * 20 + [0] * 16)
    r12 = paired_difference([1] * 32 + [0] * 8, [0] * 12 + [1] * 20 + [0] * 8)
    adjust([r4, None, r12], "holm", alpha=0.05)
    assert r12.p_adjusted == pytest.approx(2 * 2 * 0.5 ** 12) and r4.p_adjusted == pytest.approx(0.125)
    assert r12.adjustment == "holm" and r12.significant and not r4.significant
    # alpha is settable: at 0.2 the four discordant pairs are significant
    adjust([r4], "none", alpha=0.2)
    assert r4.significant and r4.p_adjusted == pytest.approx(0.125)


def test_permutation_test_on_a_continuous_case_agrees_with_the_hand_count():
    from conflict_eval.report.paired import paired_difference

    for seed in (0, 1, 2):
        r = paired_difference([0.4, 0.3, 0.2, 0.0], [0.0, 0.0, 0.0, 0.1], bootstrap=200, seed=seed)
        assert r.test == "permutation" and r.diff == pytest.approx(0.2) and r.p_value == pytest.approx(0.25)
    # 22 ids a little higher in A, 8 much higher in B: the mean difference is negative and small;
    # a sign test would say p = 0.016 "for A", the permutation test on the mean does not
    a = [0.6] * 22 + [0.1] * 8
    b = [0.5] * 22 + [0.45] * 8
    r = paired_difference(a, b, bootstrap=200)
    assert r.diff == pytest.approx((22 * 0.1 - 8 * 0.35) / 30) and r.diff < 0
    assert r.test == "permutation" and r.p_value > 0.3 and not r.significant
    assert paired_difference(a, b, bootstrap=200, seed=9).p_value == r.p_value  # Monte-Carlo at a fixed seed


@task
def misleading():
    return Task(dataset=[Sample(id=f"q{i}", input=f"Question {i}: take the bait?", target="x") for i in range(12)],
                solver=generate(), scorer=misled_scorer())


def test_lower_is_better_and_nothing_dropped_in_silence(logs, tmp_path):
    """misled (lower is better), 12 questions. A: NaN ("skip") on q0, q1; misled on q2-q9; fine on
    q10, q11. B (ran q0-q10 only): NaN on q0, q2; fine elsewhere. NaN on both: q0. Missing in A: q1
    (NaN in A only). Missing in B: q2 (NaN in B only), q11 (not run). Paired: q3-q10 (8 ids), A
    misled on q3-q9: 7 discordant, all with A higher: p = 2 * 0.5^7 = 0.015625. B is better, in
    compare and on the page; the side holding a second task lists it as one-sided."""
    import shutil

    from conflict_eval.report import build_leaderboard
    from conflict_eval.report.compare import compare, to_markdown
    from conflict_eval.report.markdown import to_markdown as page

    _run(tmp_path / "a", "m", ["skip", "skip"] + ["misled"] * 8 + ["fine"] * 2, misleading(), "mockllm/worse")
    _run(tmp_path, "b", ["skip", "fine", "skip"] + ["fine"] * 9, misleading(), "mockllm/better",
         sample_id=[f"q{i}" for i in range(11)])
    shutil.copytree(logs["tmp"] / "a", tmp_path / "a" / "y")
    report = compare(tmp_path / "a", tmp_path / "b")
    (c,) = report["comparisons"]
    assert c.nan_in_both == ["q0"] and c.missing_in_a == ["q1"] and c.missing_in_b == ["q11", "q2"]
    assert c.n_paired == 8 and c.result.diff == pytest.approx(7 / 8) and c.result.p_value == pytest.approx(2 / 2 ** 7)
    assert c.direction == "lower" and c.better == "mockllm/better"
    assert c.result.counts_text("lower") == "0 A-better / 7 B-better"
    assert report["a"]["only_here"] == {"yes": N}
    md = to_markdown(report)
    assert "NaN on both sides: 1 (q0)" in md and "tasks in A only (not compared): yes (40 samples)" in md
    assert "| misled ↓ |" in md and "significant, B better" in md
    # flips read the direction: on misled 0 is right, so B (fine) is the side right on q3-q9
    assert c.flips_a == [] and c.flips_b == [f"q{i}" for i in range(3, 10)]
    assert "misled flips: right in A only: 0 (none); right in B only: 7 (q3, q4, q5, q6, q7, q8, q9)" in md

    board = build_leaderboard([tmp_path / "a" / "m", tmp_path / "b"], bootstrap=200)
    (pc,) = board["comparisons"]
    assert pc.better == "mockllm/better" and pc.significant
    assert board["ranks"] == {("mockllm/better", "misleading"): "best"}
    text = page(board)
    assert "misleading · misled ↓" in text and "significant: mockllm/better better" in text
