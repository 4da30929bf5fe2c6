"""§4.3 accuracy levels, the §5.3.2 conditioning rule and Table 2's refusal split,
on a hand-built result set; answer normalisation and <output> parsing."""

import pytest

from conflict_eval.scorers.user_needs.parse import parse_output
from conflict_eval.scorers.user_needs.levels import (
    case_accuracy, overall_accuracy, refusal_rate, refusal_split, setting_accuracy, summary)
from conflict_eval.scorers.user_needs.normalize import canonical, is_i_dont_know, matches

CE, CF, MF = "context_exclusive", "context_first", "memory_first"
M, C, I = "matching", "conflict", "irrelevant"


def row(q, u, s, correct, refusal=False, parse_failure=False, n=1):
    return {"question_id": q, "user_need": u, "setting": s, "n_contexts": n,
            "correct": correct, "refusal": refusal, "parse_failure": parse_failure}


def results():
    rows = [row("q1", u, s, True) for u in (CE, CF, MF) for s in (M, C, I)]
    wrong_q2 = {(CE, M), (MF, C)}
    rows += [row("q2", u, s, (u, s) not in wrong_q2, refusal=(u, s) == (CE, M)) for u in (CE, CF, MF) for s in (M, C, I)]
    # q3, q4: only Context Matching cells (an incomplete grid)
    rows += [row("q3", CE, M, False), row("q3", CF, M, True), row("q3", MF, M, False)]
    rows += [row("q4", CE, M, False, parse_failure=True), row("q4", CF, M, False), row("q4", MF, M, True)]
    return rows


def test_overall_counts_only_complete_questions():
    # q1 all 9 right, q2 two cells wrong; q3/q4 lack cells -> not counted: 1/2
    assert overall_accuracy(results()) == {1: {"accuracy": 0.5, "right": 1, "n": 2}}


def test_case_level():
    got = case_accuracy(results())
    assert got[(CE, 1)]["accuracy"] == 0.5   # q1 yes; q2 matching wrong
    assert got[(CF, 1)]["accuracy"] == 1.0   # q1, q2 all three settings right
    assert got[(MF, 1)]["accuracy"] == 0.5   # q2 conflict wrong
    assert got[(CF, 1)]["n"] == 2            # q3, q4 lack conflict/irrelevant cells


def test_setting_specific_with_matching_condition():
    got = setting_accuracy(results())
    # matching: plain cell accuracy over q1..q4 under CE: q1 only -> 1/4
    assert got[(CE, M, 1)]["accuracy"] == pytest.approx(1 / 4)
    # CE conflict: q1 (conflict ok, matching ok) = 1; q2 (conflict ok, matching wrong) = 0 -> 1/2
    assert got[(CE, C, 1)] == {"accuracy": 0.5, "right": 1, "n": 2, "given_matching": 1.0}
    # MF conflict: q1 1, q2 conflict wrong -> 1/2; both matching right -> given_matching 1/2
    assert got[(MF, C, 1)] == {"accuracy": 0.5, "right": 1, "n": 2, "given_matching": 0.5}
    # CE irrelevant: q2 right in isolation but its matching is wrong -> 1/2, not 2/2
    assert got[(CE, I, 1)]["accuracy"] == 0.5


def test_refusal_split_table_2():
    # cases: CE matching wrong and CF or MF matching right:
    #   q2 (CE refused, CF right) -> refusal; q3 (CE wrong, no refusal, CF right) -> hallucination;
    #   q4 (CE parse failure, MF right) -> parse failure, neither; q1 CE right -> not a case
    assert refusal_split(results()) == {"cases": 3, "refusals": 1, "hallucinations": 1, "near_refusals": 0,
                                        "parse_failures": 1, "refusal_share": 0.5,
                                        "refusal_share_with_near": 0.5}
    assert refusal_rate(results())[(CE, M, 1)] == {"refusal_rate": 0.25, "refusals": 1, "n": 4}


def test_groups_by_context_count_and_rejects_duplicates():
    rows = [dict(r, n_contexts=2) for r in results()] + results()
    assert set(overall_accuracy(rows)) == {1, 2}
    with pytest.raises(ValueError, match="appears twice"):
        overall_accuracy(results() + [row("q1", CE, M, True)])


def test_summary_pools_over_counts():
    s = summary(results())
    assert s["overall"] == 0.5 and s[f"case/{CF}"] == 1.0 and s[f"setting/{CE}/{C}"] == 0.5


def test_empty_input_gives_no_groups():
    assert overall_accuracy([]) == {} and refusal_split([])["refusal_share"] is None


@pytest.mark.parametrize("pred,gold,ok", [
    ("Sun", ["Sun"], True), ("the sun.", ["Sun"], True), ("Proxima Centauri", ["Sun"], False),
    ("4", ["four"], True), ("4.0", ["4"], True), ("1,000", ["1000"], True), ("4 apples", ["4"], False),
    ("Yes.", ["yes"], True), ("No, it cannot", ["no"], True), ("Yes", ["no"], False),
    ("I don't know.", ["I don't know"], True), ("i do not know", ["I don't know"], True),
    ("Unknown", ["I don't know"], False), ("", ["x"], False),
])
def test_answer_normalisation(pred, gold, ok):
    assert matches(pred, gold) is ok


def test_refusal_and_canonical_forms():
    assert is_i_dont_know("I DON'T KNOW") and not is_i_dont_know("I know")
    assert canonical("twenty") == "20" and canonical("**Paris**") == "paris"


@pytest.mark.parametrize("reply,answer,reason", [
    ("<output>Sun</output>", "Sun", None),
    ("Thinking... <output>a</output> no, <output>Sun</output>", "Sun", None),
    ("<OUTPUT> 4 </OUTPUT>", "4", None),
    ("Sun", None, "no <output> tag"),
    ("<output>Sun", None, "unclosed <output> tag"),
    ("<output> </output>", None, "empty <output> tag"),
])
def test_parse_output(reply, answer, reason):
    got = parse_output(reply)
    assert (got.answer, got.reason) == (answer, reason)
