"""Failure never improves a ConflictScore: golden CS-C / CS-R computed by hand
from the paper's definitions (§3), with scripted graders in real Inspect evals.

Definitions: D+/D- = documents labelled SUPPORTS/CONTRADICTS for a claim;
CS-C = conflicted claims (D+ and D- non-empty) / claims; CS-R = mean over
claims of |D-| / (|D+| + |D-|) (0 when both are empty). Our failure rules: a
failed cell could hold any label, so CS-C/CS-R are the worst case over the
failed cells (``*_best`` the best case); no parsed label at all -> undefined (NaN).
"""

import math

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import generate

from conflict_eval.scorers.conflictscore.metrics import coverage, cs_c, cs_c_best, cs_r, cs_r_best
from conflict_eval.scorers.conflictscore.scorer import conflictscore
from conflict_eval.testing import scripted_model

S, C, I = "SUPPORTS", "CONTRADICTS", "IRRELEVANT"
DOCS = ["Doc one: cats purr.", "Doc two: dogs never purr.", "Doc three: the weather is sunny."]
RESPONSE = "Cats purr. Dogs purr."

# label of (claim, document number) -- claims "Cats purr." and "Dogs purr."
TABLE = {
    ("Cats purr.", 1): S, ("Cats purr.", 2): I, ("Cats purr.", 3): I,   # D+=1, D-=0: ratio 0
    ("Dogs purr.", 1): S, ("Dogs purr.", 2): C, ("Dogs purr.", 3): I,   # D+=1, D-=1: conflicted, ratio 1/2
}
# CS-C = 1/2 ; CS-R = (0 + 1/2) / 2 = 1/4


def _claim_doc(prompt: str) -> tuple[str, int]:
    claim = prompt.split("Claim to evaluate")[1].split("Document to evaluate against")[0].strip()
    doc = prompt.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
    return claim, next(i + 1 for i, d in enumerate(DOCS) if d in doc)


def grader(decomposition: str, label_reply=None):
    def reply(prompt: str) -> str:
        if prompt.startswith("Instruction: Break down"):
            return decomposition
        if prompt.startswith("Document-Claim"):
            claim, doc = _claim_doc(prompt)
            label = TABLE.get((claim, doc), I)
            if label_reply is not None:
                return label_reply(claim, doc, label)
            return '{"document_snippet": "s", "reasoning": "r", "answer": "%s"}' % label
        raise AssertionError(prompt[:80])
    return scripted_model(reply)


def run(judge, n=1, response=RESPONSE, **opts):
    samples = [Sample(id=f"s{i}", input="Write about pets", metadata={"documents": DOCS}) for i in range(n)]
    task = Task(dataset=MemoryDataset(samples), solver=generate(), scorer=conflictscore(**opts))
    log = eval(task, model=scripted_model(lambda p: response), model_roles={"grader": judge}, display="none")[0]
    assert log.status == "success", log.error
    return log


def metric(log, key: str, name: str) -> float:
    [score] = [s for s in log.results.scores if s.name == key]
    [value] = [m.value for n, m in score.metrics.items() if n.split("/")[-1] == name]
    return value


def values(log):
    return [s.scores["conflictscore"].value for s in log.samples]


def test_golden_matrix_definitions():
    # the TABLE matrix: CS-C 1/2, CS-R 1/4, every pair labelled
    m = [[S, I, I], [S, C, I]]
    assert cs_c(m) == 0.5 and cs_r(m) == 0.25 and coverage(m) == 1.0
    assert cs_c_best(m) == 0.5 and cs_r_best(m) == 0.25  # no failure: the range is one value
    # a third claim whose labels all failed could be anything: worst case conflicted with ratio 1
    # (CS-C (0+1+1)/3, CS-R (0+1/2+1)/3), best case unconflicted with ratio 0 (CS-C 1/3, CS-R 1/6)
    m3 = m + [[None, None, None]]
    assert cs_c(m3) == pytest.approx(2 / 3) and cs_r(m3) == pytest.approx(1 / 2) and coverage(m3) == pytest.approx(6 / 9)
    assert cs_c_best(m3) == pytest.approx(1 / 3) and cs_r_best(m3) == pytest.approx(1 / 6)
    # partly failed claim [S, None, C]: conflicted either way; ratio from 1/3 (None = S) to 2/3 (None = C)
    assert cs_c([[S, None, C]]) == 1.0 and cs_r([[S, None, C]]) == pytest.approx(2 / 3)
    assert cs_c_best([[S, None, C]]) == 1.0 and cs_r_best([[S, None, C]]) == pytest.approx(1 / 3)
    # one document and a failed cell: never conflicted (needs two documents); ratio 0 to 1
    assert cs_c([[None], [S]]) == 0.0 and cs_r([[None], [S]]) == 0.5
    # no label at all: no best case, but the worst case stands (issue 32: never left out of a mean)
    assert cs_c([[None] * 3] * 2) == 1.0 and cs_r([[None] * 3] * 2) == 1.0
    assert cs_c_best([[None] * 3] * 2) is None and cs_r_best([[None] * 3] * 2) is None
    assert cs_c([[None]] * 2) == 0.0 and cs_r([[None]] * 2) == 1.0  # one document cannot conflict
    assert coverage([[None] * 3] * 2) == 0.0 and coverage([]) is None


def test_plain_decomposition_gives_the_golden_values():
    log = run(grader("Claims: Cats purr.\nClaims: Dogs purr."))
    [v] = values(log)
    assert (v["cs_c"], v["cs_r"], v["label_coverage"], v["undefined"]) == (0.5, 0.25, 1.0, 0)


@pytest.mark.parametrize("decomposition", [
    "Sure! Here are the claims made in the report:\n\n1. **Cats purr.**\n2. **Dogs purr.**\n\n"
    "Note: both claims are factual statements.",
    "**Claims**\n\n- Cats purr.\n- Dogs purr.\n\nLet me know if you need anything else!",
    "```\nClaims:\n* Cats purr.\n* Dogs purr.\n```",
])
def test_chatty_decomposition_yields_exactly_its_claims(decomposition):
    log = run(grader(decomposition))
    [s] = log.samples
    score = s.scores["conflictscore"]
    assert score.metadata["claims"] == ["Cats purr.", "Dogs purr."]
    assert score.value["cs_c"] == 0.5 and score.value["cs_r"] == 0.25  # CS-C 0.5 stays 0.5


def test_grader_that_never_gives_a_readable_label_is_scored_by_its_worst_case():
    unreadable = ["I think it is fine.", "[" * 10_000, "<a>" * 20_000, "Answer:" + " " * 20_000,
                  '{"claim": "Cats purr.", "document_snippet": "cats', "\ud800" * 50]
    judge = grader("Claims: Cats purr.\nClaims: Dogs purr.",
                   lambda claim, doc, label: unreadable[(doc + len(claim)) % len(unreadable)])
    log = run(judge, n=2)
    for v in values(log):
        # 3 documents per claim, none readable: every claim may be conflicted and contradicted
        assert v["cs_c"] == 1.0 and v["cs_r"] == 1.0 and math.isnan(v["cs_c_best"]) and math.isnan(v["cs_r_best"])
        assert v["undefined"] == 1 and v["label_coverage"] == 0.0 and v["label_failures"] == 6
    assert log.samples[0].scores["conflictscore"].metadata["undefined_reason"] == "no label parsed"
    assert log.samples[0].scores["conflictscore"].reason == "grader_failed"  # Inspect's vocabulary
    assert metric(log, "cs_c", "defined_mean") == 1.0 and metric(log, "cs_r", "defined_mean") == 1.0
    assert not math.isfinite(metric(log, "cs_c_best", "defined_mean"))
    assert not math.isfinite(metric(log, "cs_r_best", "defined_mean"))
    assert metric(log, "undefined", "total") == 2
    assert metric(log, "label_coverage", "pooled_coverage") == 0.0
    [best] = [s for s in log.results.scores if s.name == "cs_c_best"]
    assert best.unscored_samples == 2


def test_a_claim_whose_labels_all_failed_counts_at_its_worst():
    # a third claim "Birds purr." whose every label reply is unreadable
    judge = grader("Claims: Cats purr.\nClaims: Dogs purr.\nClaims: Birds purr.",
                   lambda claim, doc, label: "no idea" if claim == "Birds purr." else '{"answer": "%s"}' % label)
    [v] = values(run(judge))
    # Cats (ratio 0), Dogs (conflicted, 1/2), Birds undetermined: worst conflicted, ratio 1; best 0, 0
    assert v["cs_c"] == pytest.approx(2 / 3) and v["cs_r"] == pytest.approx(1 / 2)
    assert v["cs_c_best"] == pytest.approx(1 / 3) and v["cs_r_best"] == pytest.approx(1 / 6)
    assert v["label_coverage"] == pytest.approx(6 / 9) and v["claims"] == 3 and v["claims_undetermined"] == 1


# Six claims x three documents, labelled by hand. Five claims are conflicted:
# full-label CS-C = 5/6 = 0.833; ratios 1/2, 1/2, 2/3, 1/3, 1/2, 0 ->
# CS-R = (1/2 + 1/2 + 2/3 + 1/3 + 1/2 + 0) / 6 = 2.5 / 6.
SIX = {
    "A1.": [S, C, I], "A2.": [C, S, I], "A3.": [S, C, C],
    "A4.": [S, S, C], "A5.": [C, I, S], "A6.": [S, I, I],
}
SIX_DOCS = ["Doc alpha.", "Doc beta.", "Doc gamma."]


def _six_grader(refuse_contradicting: bool):
    def reply(prompt: str) -> str:
        if prompt.startswith("Instruction: Break down"):
            return "\n".join(f"Claims: {c}" for c in SIX)
        claim = prompt.split("Claim to evaluate")[1].split("Document to evaluate against")[0].strip()
        doc = prompt.split("Document to evaluate against")[1].split("Output format")[0]
        label = SIX[claim][next(i for i, d in enumerate(SIX_DOCS) if d in doc)]
        if refuse_contradicting and label == C:
            return "I'm sorry, I can't help with judging this document."
        return '{"document_snippet": "s", "reasoning": "r", "answer": "%s"}' % label
    return scripted_model(reply)


def test_a_grader_failing_exactly_on_contradicting_cells_never_lowers_the_score():
    def score(refuse: bool):
        samples = [Sample(id="six", input="Write", metadata={"documents": SIX_DOCS})]
        task = Task(dataset=MemoryDataset(samples), solver=generate(), scorer=conflictscore())
        log = eval(task, model=scripted_model(lambda p: "A report."), model_roles={"grader": _six_grader(refuse)},
                   display="none")[0]
        assert log.status == "success", log.error
        return values(log)[0]

    full, failing = score(False), score(True)
    assert full["cs_c"] == pytest.approx(5 / 6) and full["cs_r"] == pytest.approx(2.5 / 6)
    assert full["label_failures"] == 0 and full["claims_undetermined"] == 0
    assert failing["label_failures"] == 6 and failing["claims_undetermined"] == 5
    # the failures cannot lower the headline scores (here the worst case equals the truth) ...
    assert failing["cs_c"] >= full["cs_c"] and failing["cs_r"] >= full["cs_r"]
    assert failing["cs_c"] == pytest.approx(5 / 6) and failing["cs_r"] == pytest.approx(2.5 / 6)
    # ... and the best case the failures allow is what a parsed-cells-only score would have read:
    # no claim keeps a parsed CONTRADICTS, so 0 conflicted claims and ratio 0
    assert failing["cs_c_best"] == 0.0 and failing["cs_r_best"] == 0.0


def test_unlabelled_samples_enter_the_means_at_their_worst_case():
    # sample s0 is graded normally (CS-C 1/2, CS-R 1/4), s1's grader replies are unreadable: each of
    # its 2 claims has 3 unreadable documents, so each may be conflicted with every document
    # contradicting (CS-C 1, CS-R 1); it has no best case (issue 32: leaving it out of the means
    # would let a grader that fails where documents contradict lower the run's CS)
    seen = {"n": 0}

    def label_reply(claim, doc, label):
        seen["n"] += 1
        return '{"answer": "%s"}' % label

    calls = []

    def judge_fn(prompt):
        calls.append(prompt)
        if prompt.startswith("Instruction"):
            return "Claims: Cats purr.\nClaims: Dogs purr."
        claim, doc = _claim_doc(prompt)
        # the first 6 label calls belong to one sample and the next 6 to the other (samples run in order)
        return '{"answer": "%s"}' % TABLE[(claim, doc)] if len(calls) <= 7 else "garbled"

    log = eval(Task(dataset=MemoryDataset([Sample(id=f"s{i}", input="Write about pets", metadata={"documents": DOCS})
                                           for i in range(2)]), solver=generate(),
                    # the two samples send identical prompts; without dedupe each gets its own grader reply
                    scorer=conflictscore(grader_dedupe=False)),
               model=scripted_model(lambda p: RESPONSE), model_roles={"grader": scripted_model(judge_fn)},
               display="none", max_samples=1)[0]
    assert log.status == "success", log.error
    vs = sorted(values(log), key=lambda v: v["undefined"])
    assert vs[0]["cs_c"] == 0.5 and vs[1]["cs_c"] == 1.0 and vs[1]["cs_r"] == 1.0 and math.isnan(vs[1]["cs_c_best"])
    assert metric(log, "cs_c", "defined_mean") == 0.75     # (0.5 + 1) / 2, never (0.5 + 0) / 2
    assert metric(log, "cs_r", "defined_mean") == 0.625    # (0.25 + 1) / 2
    assert metric(log, "cs_c_best", "defined_mean") == 0.5  # the best case only where there is one
    assert metric(log, "undefined", "total") == 1
    assert metric(log, "label_coverage", "pooled_coverage") == pytest.approx(6 / 12)


@pytest.mark.parametrize("decomposition, reason", [
    ("Sorry, I cannot help with that.", "refusal"),
    ("Claims:\nNone", "empty claim list"),
    ("[]", "empty claim list"),
    ("[" * 10_000, None),
], ids=["refusal", "none", "empty-list", "brackets"])
def test_failed_decomposition_is_counted_and_undefined(decomposition, reason):
    log = run(grader(decomposition))
    [s] = log.samples
    v, md = s.scores["conflictscore"].value, s.scores["conflictscore"].metadata
    assert math.isnan(v["cs_c"]) and math.isnan(v["cs_r"]) and v["undefined"] == 1
    assert v["decomposition_failure"] == 1 and v["grader_calls"] == 1
    assert md["undefined_reason"] == "decomposition failed"
    if reason:
        assert md["decomposition_error"].startswith(reason)
    assert metric(log, "decomposition_failure", "total") == 1


def test_all_docs_reply_that_is_not_a_list_is_undefined():
    def judge_fn(prompt):
        if prompt.startswith("Instruction"):
            return "Claims: Cats purr.\nClaims: Dogs purr."
        return "All documents are irrelevant." if "Cats" in prompt.split("Claim to evaluate")[1][:40] else '{"answer": "SUPPORTS"}'

    [v] = values(run(scripted_model(judge_fn), labelling="all_docs"))
    # no reply is a list: no label at all; only the worst case is known
    assert math.isnan(v["cs_c_best"]) and v["undefined"] == 1 and v["label_coverage"] == 0.0
    assert v["cs_c"] == 1.0 and v["cs_r"] == 1.0

    def judge_half(prompt):
        if prompt.startswith("Instruction"):
            return "Claims: Cats purr.\nClaims: Dogs purr."
        if "Cats" in prompt.split("Claim to evaluate")[1][:40]:
            return "not a list"
        return '```json\n[{"document": 1, "answer": "supports"}, {"document": 2, "answer": "CONTRADICTS"}, {"document": 3, "answer": "IRRELEVANT"}]\n```'

    [v] = values(run(scripted_model(judge_half), labelling="all_docs"))
    # "Cats purr." failed on every document: worst case conflicted with ratio 1; "Dogs purr." conflicted, 1/2
    assert v["cs_c"] == 1.0 and v["cs_r"] == 0.75 and v["label_coverage"] == 0.5
    assert v["cs_c_best"] == 0.5 and v["cs_r_best"] == 0.25 and v["claims_undetermined"] == 1


def test_pathological_response_and_grader_text_complete_with_success():
    for text in ("[" * 10_000, "<output>" * 20_000, " " * 100_000, "\ud800" * 1000 + "{" * 5000):
        judge = grader(text, lambda claim, doc, label: text)
        log = run(judge, response=text)  # asserts status success
        v = values(log)[0]
        assert math.isnan(v["cs_c"]) or 0.0 <= v["cs_c"] <= 1.0
