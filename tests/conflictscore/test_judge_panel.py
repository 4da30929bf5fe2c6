"""Judge panels and judge stability on the conflictscore scorer, with scripted graders.
Golden values computed by hand (Krippendorff 2011, nominal alpha from the coincidence matrix).

Two claims ("Cats purr.", "Dogs purr.") x two documents (D0 cats, D1 dogs): four cells.

             (c0,D0)  (c0,D1)  (c1,D0)  (c1,D1)
  judge 1       S        I        I        C
  judge 2       S        I        S        C
  judge 3       S        C        S        C

Two judges (1, 2): majority S, I, tie -> undetermined, C. Alpha: coincidences o_SS = 2, o_II = 2,
o_CC = 2, o_IS = o_SI = 1; n_S = 3, n_I = 3, n_C = 2, n = 8;
alpha = 1 - (n - 1) * (o_IS + o_SI) / sum_{c != k} n_c n_k = 1 - 7 * 2 / (2 * (9 + 6 + 6)) = 2/3.
Label matrix [[S, I], [None, C]]: claim 0 unconflicted, ratio 0; claim 1 undetermined, worst
case (the tie = SUPPORTS) conflicted with ratio 1 (no D+ at all -> worst ratio 1): CS-C = CS-R = 1/2.

Three judges: majority S, I (2 of 3), S (2 of 3), C. Agreement with the majority: judge 1 3/4
(not on (c1,D0)), judge 2 4/4, judge 3 3/4 (not on (c0,D1)). Alpha: per unit disagreements
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
    assert values["alpha"] == pytest.approx(2 / 3)
    assert values["agreement_1"] == 1.0 and values["agreement_2"] == 1.0 and values["judges"] == 2


def test_three_judges_strict_majority_and_agreement():
    score, panel = _run({"grader": _grader(JUDGE_1), "grader_2": _grader(JUDGE_2), "grader_3": _grader(JUDGE_3)})
    assert score.metadata["label_matrix"] == [["SUPPORTS", "IRRELEVANT"], ["SUPPORTS", "CONTRADICTS"]]
    assert score.value["cs_c"] == pytest.approx(0.5) and score.value["cs_r"] == pytest.approx(0.25)
    values = _flat(panel)
    assert values["alpha"] == pytest.approx(25 / 47)
    assert (values["agreement_1"], values["agreement_2"], values["agreement_3"]) == (0.75, 1.0, 0.75)


def test_repeats_and_swap_report_self_agreement_and_flip_rate():
    """One judge, judge_repeats=3, judge_swap=true. On (c0,D1) its three replies are I, I, S (majority I):
    self-agreement 3/4 cells. Swapped, it answers SUPPORTS on claim 1: (c1,D0) I -> S and (c1,D1) C -> S
    flip, (c0,*) do not: flip rate 2/4. Calls: 1 decomposition + 4 cells x (3 repeats + 1 swapped) = 17."""
    judge = _grader(JUDGE_1, flip_on_swap=True, wobble={(0, 1): ["I", "I", "S"]})
    score, panel = _run({"grader": judge}, judge_repeats=3, judge_swap=True)
    md = score.metadata
    assert md["label_matrix"] == [["SUPPORTS", "IRRELEVANT"], ["IRRELEVANT", "CONTRADICTS"]]  # unchanged labels
    assert score.value["grader_calls"] == 17
    assert md["judges"]["repeats"] == 3 and md["judges"]["temperature"] == 1.0 and md["judges"]["swap"] is True
    assert md["judges"]["units"][1]["votes"] == [["IRRELEVANT", "IRRELEVANT", "SUPPORTS"]]
    assert [u["swapped"] for u in md["judges"]["units"]] == [["SUPPORTS"], ["IRRELEVANT"], ["SUPPORTS"], ["SUPPORTS"]]
    values = _flat(panel)
    assert values["self_agreement_1"] == pytest.approx(0.75)
    assert values["flip_rate_1"] == pytest.approx(0.5) and values["flip_rate"] == pytest.approx(0.5)
    assert values["repeats"] == 3 and values["temperature"] == 1.0
    # the repeated and swapped calls ran at the recorded temperature (Inspect's model events)
    temps = Counter(e.config.temperature for e in LAST_LOG[0].samples[0].events if e.event == "model")
    assert temps[1.0] == 16 and temps[0.0] == 1  # 4 x (3 + 1) judge calls; the decomposition at 0


def test_default_run_is_one_judge_one_question():
    score, panel = _run({"grader": _grader(JUDGE_1)})
    assert score.value["grader_calls"] == 1 + 4
    values = _flat(panel)
    assert values == {"judges": 1, "units": 4, "repeats": 1, "temperature": 0.0}


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
    assert values["alpha"] == pytest.approx(2 / 3) and values["flip_rate"] == 0.0
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
    assert s.accuracy == pytest.approx([4 / 6, 3 / 6])
    assert s.error_correlation["1_2"] == pytest.approx(2 ** -0.5)
