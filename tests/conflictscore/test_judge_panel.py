"""Judge panels and judge stability on the conflictscore scorer, with scripted graders.
Golden values computed by hand (Krippendorff 2011, nominal alpha from the coincidence matrix).

Two claims ("Cats purr.", "Dogs purr.") x two documents (D0 cats, D1 dogs): four cells.

             (c0,D0)  (c0,D1)  (c1,D0)  (c1,D1)
  judge 1       S        I        I        C
  judge 2       S        I        S        C
  judge 3       S        C        S        C

Two judges (1, 2): majority S, I, tie -> undetermined, C (panel label coverage 3/4). Raw agreement
3/4; base rates judge 1 S 1/4, I 2/4, C 1/4, judge 2 S 2/4, I 1/4, C 1/4; chance agreement
p_e = 2/16 + 2/16 + 1/16 = 5/16; Cohen's kappa = (12/16 - 5/16) / (11/16) = 7/11. Alpha: coincidences o_SS = 2, o_II = 2,
o_CC = 2, o_IS = o_SI = 1; n_S = 3, n_I = 3, n_C = 2, n = 8;
alpha = 1 - (n - 1) * (o_IS + o_SI) / sum_{c != k} n_c n_k = 1 - 7 * 2 / (2 * (9 + 6 + 6)) = 2/3.
Label matrix [[S, I], [None, C]]: claim 0 unconflicted, ratio 0; claim 1 undetermined, worst
case (the tie = SUPPORTS) conflicted with ratio 1 (no D+ at all -> worst ratio 1): CS-C = CS-R = 1/2.

Three judges: majority S, I (2 of 3), S (2 of 3), C. Pairs: 1~2 kappa 7/11 (above); 1~3 agree on
2 of 4, judge 3 S 2/4, C 2/4, p_e = 2/16 + 0 + 2/16 = 4/16, kappa = (8 - 4) / 12 = 1/3; 2~3 agree on
3 of 4, p_e = 4/16 + 0 + 2/16 = 6/16, kappa = (12 - 6) / 10 = 3/5. Alpha: per unit disagreements
(m = 3) 0, (9 - 5) / 2 = 2, 2, 0 -> D_o = 4 / 12; totals S 5, I 3, C 4, n = 12 ->
D_e = (144 - 50) / 132; alpha = 1 - (1/3) / (94/132) = 25/47.
"""

import math
from collections import Counter

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import generate

from conflict_eval.scorers.conflictscore.scorer import conflictscore
from conflict_eval.testing import scripted_model

DOCS = ["Doc about cats: cats purr.", "Doc about dogs: dogs never purr."]
RESPONSE = "Cats purr. Dogs purr."
FULL = {"S": "SUPPORTS", "I": "IRRELEVANT", "C": "CONTRADICTS"}
JUDGE_1 = {(0, 0): "S", (0, 1): "I", (1, 0): "I", (1, 1): "C"}
JUDGE_2 = {(0, 0): "S", (0, 1): "I", (1, 0): "S", (1, 1): "C"}
JUDGE_3 = {(0, 0): "S", (0, 1): "C", (1, 0): "S", (1, 1): "C"}
LAST_LOG: list = []


def _cell_of(prompt: str) -> tuple[int, int, bool]:
    """(claim, document, swapped) of a Table 8 prompt."""
    claim_at, doc_at = prompt.index("Claim to evaluate"), prompt.index("Document to evaluate against")
    claim = 0 if "Cats purr." in prompt[claim_at:claim_at + 40] else 1
    doc = 0 if "cats purr" in prompt[doc_at:doc_at + 80] else 1
    return claim, doc, doc_at < claim_at


def _grader(labels: dict, flip_on_swap: bool = False, wobble: dict | None = None):
    """A scripted judge: decomposes, then labels each cell as ``labels`` says. With ``flip_on_swap``,
    a swapped prompt about claim 1 is answered SUPPORTS; ``wobble`` gives per-cell replies by call count."""
    seen: Counter = Counter()

    def reply(prompt: str) -> str:
        if prompt.startswith("Instruction: Break down"):
            return "Claims:\nCats purr.\nDogs purr."
        claim, doc, swapped = _cell_of(prompt)
        label = labels[(claim, doc)]
        if swapped and flip_on_swap and claim == 1:
            label = "S"
        elif not swapped and wobble and (claim, doc) in wobble:
            label = wobble[(claim, doc)][seen[prompt]]
            seen[prompt] += 1
        return f'{{"document_snippet": "x", "reasoning": "r", "answer": "{FULL[label]}"}}'

    return scripted_model(reply)


def _run(roles: dict, **opts):
    task = Task(dataset=MemoryDataset([Sample(id="s1", input="Write about pets", metadata={"documents": DOCS})]),
                solver=generate(), scorer=conflictscore(**opts))
    log = eval(task, model=scripted_model([RESPONSE]), model_roles=roles, display="none")[0]
    assert log.status == "success", log.error
    LAST_LOG[:] = [log]
    score = log.samples[0].scores["conflictscore"]
    panel = {k: m.value for s in log.results.scores if s.name == "grader_calls"
             for k, m in s.metrics.items() if k != "mean"}
    return score, panel


def test_two_judges_majority_tie_and_alpha():
    score, panel = _run({"grader": _grader(JUDGE_1), "grader_2": _grader(JUDGE_2)})
    md = score.metadata
    assert md["label_matrix"] == [["SUPPORTS", "IRRELEVANT"], [None, "CONTRADICTS"]]
    assert "no strict majority of the 2 judges" in md["label_failures"][0]["error"]
    assert score.value["cs_c"] == pytest.approx(0.5) and score.value["cs_r"] == pytest.approx(0.5)
    assert score.value["claims_undetermined"] == 1
    assert score.value["grader_calls"] == 1 + 2 * 4  # one decomposition (first judge), 4 cells x 2 judges
    assert md["judges"]["judges"] == ["grader=mockllm/model", "grader_2=mockllm/model"]
    assert [u["majority"] for u in md["judges"]["units"]] == ["SUPPORTS", "IRRELEVANT", None, "CONTRADICTS"]
    values = _flat(panel)
    assert values["alpha"] == pytest.approx(2 / 3) and values["judges"] == 2
    assert values["kappa_1_2"] == pytest.approx(7 / 11) and values["raw_agreement_1_2"] == pytest.approx(0.75)
    assert values["coverage"] == pytest.approx(0.75) and values["coverage_1"] == values["coverage_2"] == 1.0
    assert (values["base_rate_1_SUPPORTS"], values["base_rate_1_IRRELEVANT"], values["base_rate_2_SUPPORTS"]) == \
        (0.25, 0.5, 0.5)
    assert not any(k.startswith("agreement_") for k in values)  # no "agreement with the majority" (1.00 by design)


def test_three_judges_strict_majority_and_agreement():
    score, panel = _run({"grader": _grader(JUDGE_1), "grader_2": _grader(JUDGE_2), "grader_3": _grader(JUDGE_3)})
    assert score.metadata["label_matrix"] == [["SUPPORTS", "IRRELEVANT"], ["SUPPORTS", "CONTRADICTS"]]
    assert score.value["cs_c"] == pytest.approx(0.5) and score.value["cs_r"] == pytest.approx(0.25)
    values = _flat(panel)
    assert values["alpha"] == pytest.approx(25 / 47)
    assert values["kappa_1_2"] == pytest.approx(7 / 11) and values["kappa_1_3"] == pytest.approx(1 / 3)
    assert values["kappa_2_3"] == pytest.approx(3 / 5) and values["raw_agreement_1_3"] == pytest.approx(0.5)
    assert values["coverage"] == 1.0


def test_repeats_and_swap_report_self_agreement_and_flip_rate():
    """One judge, judge_repeats=3, judge_swap=true. On (c0,D1) its three replies are I, I, S (majority I):
    self-agreement 3/4 cells. The swapped question is asked at temperature 0 and compared with one more
    same-order question at temperature 0 (on (c0,D1) its 4th reply, I). Swapped, it answers SUPPORTS on
    claim 1: (c1,D0) I -> S and (c1,D1) C -> S flip, (c0,*) do not: flip rate 2/4, pooled 2 of 4 units.
    Calls: 1 decomposition + 4 cells x (3 repeats + 1 same order at T=0 + 1 swapped at T=0) = 21."""
    judge = _grader(JUDGE_1, flip_on_swap=True, wobble={(0, 1): ["I", "I", "S", "I"]})
    score, panel = _run({"grader": judge}, judge_repeats=3, judge_swap=True)
    md = score.metadata
    assert md["label_matrix"] == [["SUPPORTS", "IRRELEVANT"], ["IRRELEVANT", "CONTRADICTS"]]  # unchanged labels
    assert score.value["grader_calls"] == 21
    assert md["judges"]["repeats"] == 3 and md["judges"]["temperature"] == 1.0 and md["judges"]["swap"] is True
    assert md["judges"]["swap_temperature"] == 0.0
    assert md["judges"]["units"][1]["votes"] == [["IRRELEVANT", "IRRELEVANT", "SUPPORTS"]]
    assert [u["swapped"] for u in md["judges"]["units"]] == [["SUPPORTS"], ["IRRELEVANT"], ["SUPPORTS"], ["SUPPORTS"]]
    values = _flat(panel)
    assert values["self_agreement_1"] == pytest.approx(0.75)
    assert values["flip_rate_1"] == pytest.approx(0.5) and values["flip_rate"] == pytest.approx(0.5)
    assert values["flip_units"] == 4 and values["swap_temperature"] == 0.0
    assert values["repeats"] == 3 and values["temperature"] == 1.0
    # the repeats ran at the recorded temperature, the swapped question and its partner at 0 (model events)
    temps = Counter(e.config.temperature for e in LAST_LOG[0].samples[0].events if e.event == "model")
    assert temps[1.0] == 12 and temps[0.0] == 1 + 8  # 4 x 3 repeats; decomposition + 4 x (same order + swapped)


def test_default_run_is_one_judge_one_question():
    score, panel = _run({"grader": _grader(JUDGE_1)})
    assert score.value["grader_calls"] == 1 + 4
    values = _flat(panel)
    assert values == {"judges": 1, "units": 4, "repeats": 1, "temperature": 0.0, "coverage": 1.0, "coverage_1": 1.0,
                      "base_rate_1_CONTRADICTS": 0.25, "base_rate_1_IRRELEVANT": 0.5, "base_rate_1_SUPPORTS": 0.25}


def test_judge_options_are_checked():
    with pytest.raises(ValueError, match="judge_repeats"):
        conflictscore(judge_repeats=0)
    with pytest.raises(ValueError, match="judge_temperature"):
        conflictscore(judge_temperature=5)


def _flat(panel: dict) -> dict:
    """The judge_panel metric's dict (Inspect names its keys ``conflict_eval/judge_panel_<key>``)."""
    return {k.removeprefix("conflict_eval/judge_panel_"): v for k, v in panel.items()}


def _all_docs_grader(labels: dict):
    """labelling=all_docs: one JSON list per claim, labelled by each document's content (so the
    reversed order of judge_swap must map back to the same labels: no flip)."""
    import json

    def reply(prompt: str) -> str:
        if prompt.startswith("Instruction: Break down"):
            return "Claims:\nCats purr.\nDogs purr."
        claim = 0 if "Cats purr." in prompt.split("Claim to evaluate")[1][:40] else 1
        blocks = prompt.split('<document number="')[1:]
        out = []
        for b in blocks:
            number = int(b.split('"', 1)[0])
            doc = 0 if "cats purr" in b.split("</document>")[0] else 1
            out.append({"document": number, "document_snippet": "x", "reasoning": "r",
                        "answer": FULL[labels[(claim, doc)]]})
        return json.dumps(out)

    return scripted_model(reply)


def test_all_docs_panel_with_swap_maps_reversed_documents_back():
    score, panel = _run({"grader": _all_docs_grader(JUDGE_1), "grader_2": _all_docs_grader(JUDGE_2)},
                        labelling="all_docs", judge_swap=True)
    md = score.metadata
    assert md["label_matrix"] == [["SUPPORTS", "IRRELEVANT"], [None, "CONTRADICTS"]]
    assert [u["swapped"] for u in md["judges"]["units"]] == [
        ["SUPPORTS", "SUPPORTS"], ["IRRELEVANT", "IRRELEVANT"], ["IRRELEVANT", "SUPPORTS"],
        ["CONTRADICTS", "CONTRADICTS"]]
    values = _flat(panel)
    assert values["alpha"] == pytest.approx(2 / 3) and values["flip_rate"] == 0.0 and values["flip_units"] == 8
    # 1 decomposition + 2 claims x 2 judges x (1 + 1 swapped)
    assert score.value["grader_calls"] == 1 + 8


def test_error_correlation_accuracy_and_summary_with_reference_labels():
    """Reference S S C C I I; judge a S C C S I I (errors 0 1 0 1 0 0), judge b S C C I I S
    (errors 0 1 0 1 0 1). Pearson r: cov = 2/6 - (1/3)(1/2) = 1/6, var_a = 1/3 - 1/9 = 2/9,
    var_b = 1/4: r = (1/6) / sqrt(2/36) = 1/sqrt(2). Accuracy a 4/6, b 3/6."""
    from conflict_eval.scorers.conflictscore.panel import accuracy, error_correlation, summarise

    ref = ["S", "S", "C", "C", "I", "I"]
    a = ["S", "C", "C", "S", "I", "I"]
    b = ["S", "C", "C", "I", "I", "S"]
    assert error_correlation(a, b, ref) == pytest.approx(2 ** -0.5)
    assert accuracy(a, ref) == pytest.approx(4 / 6) and accuracy(b, ref) == pytest.approx(3 / 6)
    assert error_correlation(a, a[:], ref) == pytest.approx(1.0)
    assert math.isnan(error_correlation(ref, a, ref))  # a judge that never errs: no correlation defined
    block = {"judges": ["a", "b"], "repeats": 1, "temperature": 0.0,
             "units": [{"votes": [[x], [y]], "reference": r} for x, y, r in zip(a, b, ref)]}
    s = summarise([block])
    # the panel's label is determined where a == b (units 1, 2, 3, 5: S, C, C, I against S, S, C, I): 3 of 4
    assert [a["rate"] for a in s.accuracy] == pytest.approx([4 / 6, 3 / 6, 3 / 4])
    assert s.error_correlation["1_2"] == pytest.approx(2 ** -0.5)
    # effective judges k / (1 + (k - 1) rho) = 2 / (1 + 1/sqrt(2)) = 1.1716
    assert s.effective_judges == pytest.approx(2 / (1 + 2 ** -0.5))
    flat = s.flat()
    # Wilson interval of 4/6 (z = 1.95996): centre (4 + z^2/2) / (6 + z^2), half-width
    # z / (6 + z^2) * sqrt(4 * 2 / 6 + z^2 / 4) = 0.60161 -+ 0.30162 -> [0.29999, 0.90323]
    assert (flat["accuracy_1_low"], flat["accuracy_1_high"]) == pytest.approx((0.29999, 0.90323), abs=1e-4)
    assert flat["accuracy_panel_n"] == 4 and flat["effective_judges"] == pytest.approx(1.17157, abs=1e-4)


def _disagreeing_pair() -> list[dict]:
    """60 units of two judges that disagree on 26 (rows judge A, columns judge B):
             S   C   I
        S   20   6   4    A: S 30, C 18, I 12
        C    5  10   3    B: S 29, C 20, I 11
        I    4   4   4
    raw agreement 34/60; p_e = (30*29 + 18*20 + 12*11) / 3600 = 1362/3600;
    kappa = (2040 - 1362) / (3600 - 1362) = 678/2238 = 0.30295."""
    table = {("S", "S"): 20, ("S", "C"): 6, ("S", "I"): 4, ("C", "S"): 5, ("C", "C"): 10, ("C", "I"): 3,
             ("I", "S"): 4, ("I", "C"): 4, ("I", "I"): 4}
    return [{"votes": [[FULL[a]], [FULL[b]]]} for (a, b), k in table.items() for _ in range(k)]


def test_two_judges_disagreeing_on_26_of_60_show_kappa_raw_agreement_and_base_rates():
    from conflict_eval.report.judges import describe
    from conflict_eval.scorers.conflictscore.panel import summarise

    s = summarise([{"judges": ["a", "b"], "repeats": 1, "temperature": 0.0, "units": _disagreeing_pair()}])
    flat = s.flat()
    assert flat["kappa_1_2"] == pytest.approx(678 / 2238) and flat["raw_agreement_1_2"] == pytest.approx(34 / 60)
    assert flat["base_rate_1_SUPPORTS"] == pytest.approx(0.5) and flat["base_rate_2_CONTRADICTS"] == pytest.approx(1 / 3)
    assert flat["coverage"] == pytest.approx(34 / 60)  # two judges: a disagreement is an undetermined label
    row = describe(["openai/a", "openai/b"], flat, {})
    assert row["agreement"] == "1~2: κ 0.30, raw 0.57 (60 units)"
    assert row["base_rates"] == "1: SUPPORTS 0.50 CONTRADICTS 0.30 IRRELEVANT 0.20 / " \
                                "2: SUPPORTS 0.48 CONTRADICTS 0.33 IRRELEVANT 0.18"
    assert row["coverage"] == "0.57 (each judge: 1.00 / 1.00)"
    assert "1.00" not in row["agreement"] + row["alpha"]


def test_a_judge_that_ignores_order_flips_nothing_at_temperature_0():
    """The judge labels by content and ignores order; at temperature 1 it answers at random (a fixed
    noisy cycle). Asked 3 times at T=1 with the swap: the swap is compared at T=0 with the same order
    at T=0, so its flip rate is 0; the noise shows in self-agreement instead. (Before issue 43 the
    swapped question ran at T=1 against the first T=1 repeat and read the noise as order effect.)"""
    from inspect_ai.model import get_model

    from conflict_eval.testing import scripted_output

    noise = iter(["S", "C", "I", "C", "I", "S", "I", "S"] * 40)

    def reply(input, tools, tool_choice, config):
        prompt = input[-1].text
        if prompt.startswith("Instruction: Break down"):
            return scripted_output("Claims:\nCats purr.\nDogs purr.")
        claim, doc, _ = _cell_of(prompt)
        label = JUDGE_1[(claim, doc)] if not config.temperature else next(noise)
        return scripted_output(f'{{"answer": "{FULL[label]}"}}')

    judge = get_model("mockllm/model", custom_outputs=reply, memoize=False)
    score, panel = _run({"grader": judge}, judge_repeats=3, judge_swap=True)
    values = _flat(panel)
    assert values["flip_rate"] == 0.0 and values["flip_rate_1"] == 0.0 and values["flip_units"] == 4
    assert values["self_agreement_1"] < 1.0  # sampling noise, reported apart


def test_list_valued_grader_role_is_a_panel_by_strict_majority():
    """Inspect 0.3.285 parses ``--model-role grader=a,b,c`` into a list bound to one role
    (checked by hand: ``{'grader': ['mockllm/a', 'mockllm/b', 'mockllm/c']}``; the parser is private, so
    the test passes the list as the CLI does); each member is a judge, the label is their strict majority."""
    score, panel = _run({"grader": [_grader(JUDGE_1), _grader(JUDGE_2), _grader(JUDGE_3)]})
    assert score.metadata["label_matrix"] == [["SUPPORTS", "IRRELEVANT"], ["SUPPORTS", "CONTRADICTS"]]
    assert [j.split("=")[0] for j in score.metadata["judges"]["judges"]] == ["grader[0]", "grader[1]", "grader[2]"]
    assert _flat(panel)["kappa_1_3"] == pytest.approx(1 / 3)
