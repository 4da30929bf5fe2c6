"""``conflict-eval compare`` on two logs of a plain Inspect task (not one of ours), and the
paired function it shares with the leaderboard. Golden values computed by hand:

20 questions, answer "yes". Model A answers right on q0-q14 (15), model B on q0-q8 (9): every
id B gets right, A gets right too, so the discordant pairs are 6 (q9-q14, A right, B wrong) and
0 the other way.

* difference = 15/20 - 9/20 = 0.30;
* McNemar exact p = binomtest(6, 6, 0.5), two-sided = 2 * 0.5^6 = 0.03125;
* paired differences d_i: six 1s, fourteen 0s. The bootstrap mean of d is Binomial(20, 0.3)/20;
  its 2.5% and 97.5% quantiles are 2/20 = 0.10 (P(X <= 1) = 0.0076, P(X <= 2) = 0.0355) and
  10/20 = 0.50 (P(X <= 9) = 0.952, P(X <= 10) = 0.983); the normal approximation agrees,
  0.30 +- 1.96 * sqrt(0.21 / 20) = [0.099, 0.501];
* unpaired: se = sqrt((0.75 * 0.25 + 0.45 * 0.55) / 20) = 0.1475, so about [0.011, 0.589]:
  wider than the paired one, which is the gain from pairing.
"""

from __future__ import annotations

import json

import pytest
from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

N, A_RIGHT, B_RIGHT = 20, 15, 9
TOLERANCE = 0.05  # bootstrap noise at 1000 resamples, and percentile interpolation


@task
def yes_questions():
    """A plain Inspect task: 20 questions whose answer is "yes", scored by match()."""
    return Task(dataset=[Sample(id=f"q{i}", input=f"Question {i}: answer yes or no.", target="yes")
                         for i in range(N)],
                solver=generate(), scorer=match())


def _reply(text: str) -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", text)
    out.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)  # no tokenizer download
    return out


def _log(tmp_path, name: str, right: int) -> str:
    outputs = [_reply("yes" if i < right else "no") for i in range(N)]
    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    (log,) = eval(yes_questions(), model=model, log_dir=str(tmp_path / name), max_samples=1,
                  display="none")
    assert log.status == "success"
    return log.location


def test_compare_two_logs_of_a_plain_inspect_task(tmp_path, capsys):
    from conflict_eval.cli.main import main

    a, b = _log(tmp_path, "a", A_RIGHT), _log(tmp_path, "b", B_RIGHT)
    capsys.readouterr()  # what eval() printed
    assert main(["compare", a, b, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (c,) = out["comparisons"]
    r = c["result"]
    assert (c["task_a"], c["metric"], c["n_paired"], c["missing_in_a"], c["missing_in_b"]) == \
        ("yes_questions", "match", 20, [], [])
    assert r["diff"] == pytest.approx(0.30)
    assert (r["test"], r["a_higher"], r["b_higher"]) == ("mcnemar_exact", 6, 0)
    assert r["p_value"] == pytest.approx(0.03125)
    assert r["ci"][0] == pytest.approx(0.10, abs=TOLERANCE) and r["ci"][1] == pytest.approx(0.50, abs=TOLERANCE)
    lo, hi = r["unpaired_ci"]
    assert lo == pytest.approx(0.011, abs=TOLERANCE) and hi == pytest.approx(0.589, abs=TOLERANCE)
    assert hi - lo > r["ci"][1] - r["ci"][0]

    # the directories work as well; the markdown says the same
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--metric", "match"]) == 0
    md = capsys.readouterr().out
    assert "| yes_questions | match ↑ | 20 | 0 | 0 | 0 | 0.750 | 0.450 | +0.300 |" in md
    assert "McNemar exact (6 A-better / 0 B-better) | 0.03125 | 0.03125 | significant, A better |" in md


def test_compare_reports_samples_missing_on_either_side(tmp_path):
    """B's log lacks q0-q4 (a run with --limit on other ids): 15 paired ids; A's q0-q4 are missing in B."""
    from conflict_eval.report.compare import compare

    a = _log(tmp_path, "a", A_RIGHT)
    outputs = [_reply("yes") for _ in range(N)]
    (log,) = eval(yes_questions(), model=get_model("mockllm/model", custom_outputs=outputs, memoize=False),
                  log_dir=str(tmp_path / "b"), sample_id=[f"q{i}" for i in range(5, N)], max_samples=1,
                  display="none")
    (c,) = compare(a, log.location)["comparisons"]
    # paired ids q5-q19: A right on q5-q14 (10 of 15), B on all 15: diff = -5/15; McNemar 0 vs 5: p = 2 * 0.5^5
    assert (c.n_paired, c.missing_in_a, c.missing_in_b) == (15, [], ["q0", "q1", "q2", "q3", "q4"])
    assert c.result.diff == pytest.approx(-5 / 15)
    assert c.result.p_value == pytest.approx(0.0625)


@pytest.mark.parametrize("a, b, test, p, up, down", [
    # 0/1: McNemar on the discordant pairs (3 vs 1): 2 * P(X >= 3 | Bin(4, .5)) = 2 * 5/16
    ([1, 1, 1, 0, 1, 0], [0, 0, 0, 1, 1, 0], "mcnemar_exact", 10 / 16, 3, 1),
    # graded: permutation test on the mean difference; differences (0.4, 0.5, 0.6, 0.6, 0): every one
    # of the 16 swaps of the four non-zero pairs but "none" and "all" gives a smaller |mean|: 2 / 16
    ([0.5, 0.7, 0.9, 1.0, 0.2], [0.1, 0.2, 0.3, 0.4, 0.2], "permutation", 2 / 16, 4, 0),
])
def test_exact_paired_test_golden(a, b, test, p, up, down):
    from conflict_eval.report.paired import paired_difference

    r = paired_difference(a, b, bootstrap=200)
    assert (r.test, r.a_higher, r.b_higher) == (test, up, down)
    assert r.p_value == pytest.approx(p)
    assert r.diff == pytest.approx(sum(a) / len(a) - sum(b) / len(b))


def test_compare_errors_name_the_path(tmp_path):
    from conflict_eval.report.compare import compare

    with pytest.raises(FileNotFoundError, match="nowhere"):
        compare(tmp_path / "nowhere", tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no Inspect log"):
        compare(tmp_path / "empty", tmp_path / "empty")


def test_compare_pairs_by_id_and_epoch(tmp_path):
    """A: 2 epochs, right on q0-q2 of q0-q4 (every epoch); B: 1 epoch, right on q0 only. Pairs: epoch 1
    of each id (5 pairs); epoch 2 of every id is missing in B ("q0@2", ...). Per id: A 1,1,1,0,0 and
    B 1,0,0,0,0: diff = 3/5 - 1/5 = 0.4; McNemar 2 vs 0: p = 2 * 0.5^2 = 0.5."""
    from conflict_eval.report.compare import compare
    from conflict_eval.testing import scripted_model

    @task
    def five():
        return Task(dataset=[Sample(id=f"q{i}", input=f"Question {i}", target="yes") for i in range(5)],
                    solver=generate(), scorer=match())

    def answers(right: set[str]):
        return scripted_model(lambda p: "yes" if p.split()[-1] in right else "no")

    (a,) = eval(five(), model=answers({"0", "1", "2"}), epochs=2, log_dir=str(tmp_path / "a"), display="none")
    (b,) = eval(five(), model=answers({"0"}), log_dir=str(tmp_path / "b"), display="none")
    (c,) = compare(a.location, b.location)["comparisons"]
    assert (c.n_paired, c.pairs, c.missing_in_a) == (5, 5, [])
    assert c.missing_in_b == [f"q{i}@2" for i in range(5)]
    assert c.result.diff == pytest.approx(0.4) and c.result.p_value == pytest.approx(0.5)
    assert c.result.test == "mcnemar_exact"
