"""The conflictscore scorer end to end with scripted graders: calls taken,
label matrix, failures, variants, and which model grades."""

import math

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample

from conflict_eval.scorers.conflictscore.scorer import conflictscore
from conflict_eval.testing import scripted_model

DOCS = ["Doc about cats: cats purr.", "Doc about dogs: dogs never purr.", "Weather report: sunny."]
RESPONSE = "Cats purr. Dogs purr."


def _task(**opts):
    samples = [Sample(id="s1", input="Write about pets", metadata={"documents": DOCS})]
    return Task(dataset=MemoryDataset(samples), scorer=conflictscore(**opts))


def grader(prompt: str) -> str:
    """Decomposition -> two claims; labels by (claim, document) content."""
    if prompt.startswith("Instruction: Break down"):
        return "Claims:\nCats purr.\nDogs purr."
    if prompt.startswith("Document-Claim"):
        claim = prompt.split("Claim to evaluate")[1].split("Document to evaluate against")[0]
        doc = prompt.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
        if "Weather" in doc:
            return "not json at all"  # unparseable -> counted, never a label
        if "Dogs" in claim and "dogs never purr" in doc:
            return 'Answer: {"document_snippet": "dogs never purr", "reasoning": "r", "answer": "CONTRADICTS"}'
        return '{"document_snippet": "purr", "reasoning": "r", "answer": "SUPPORTS"}'
    raise AssertionError(f"unexpected grader prompt {prompt[:80]!r}")


def _run(task, model, **kw):
    log = eval(task, model=model, display="none", **kw)[0]
    assert log.status == "success", log.error
    return log, log.samples[0].scores["conflictscore"]


def response_model():
    return scripted_model([RESPONSE])


def test_full_pipeline_calls_matrix_and_failures():
    main = scripted_model(lambda p: RESPONSE if p == "Write about pets" else grader(p))
    task = _task()
    from inspect_ai.solver import generate
    task.solver = generate()
    log, score = _run(task, main)
    prompts = [c[-1].text for c in main.script.calls]
    # 1 answer + 1 decomposition + 2 claims x 3 documents
    assert len(prompts) == 1 + 1 + 6
    assert score.value["claims"] == 2 and score.value["grader_calls"] == 7
    md = score.metadata
    assert md["label_matrix"] == [["SUPPORTS", "SUPPORTS", None], ["SUPPORTS", "CONTRADICTS", None]]
    # document 3 failed for both claims, so each claim is a range. Worst case (document 3 =
    # CONTRADICTS): claim 0 D+=2, D-=1 -> conflicted, 1/3; claim 1 D+=1, D-=2 -> conflicted, 2/3:
    # CS-C = 1, CS-R = 1/2. Best case (document 3 = SUPPORTS): claim 0 ratio 0; claim 1 conflicted,
    # 1/3: CS-C = 1/2, CS-R = 1/6.
    assert score.value["cs_c"] == pytest.approx(1.0) and score.value["cs_r"] == pytest.approx(0.5)
    assert score.value["cs_c_best"] == pytest.approx(0.5) and score.value["cs_r_best"] == pytest.approx(1 / 6)
    assert score.value["claims_undetermined"] == 2
    assert score.value["label_failures"] == 2
    assert all(f["reply"] == "not json at all" and f["document"] == 2 for f in md["label_failures"])
    assert md["cells"][4]["snippet"] == "dogs never purr"
    assert "the evaluated model grades" in md["grader_source"]
    means = {s.name: list(s.metrics.values())[0].value for s in log.results.scores}
    assert means["cs_c"] == pytest.approx(1.0) and means["label_failures"] == 2


def test_grader_role_does_the_grading():
    from inspect_ai.solver import generate

    main = scripted_model([RESPONSE])
    judge = scripted_model(grader)
    task = _task()
    task.solver = generate()
    log, score = _run(task, main, model_roles={"grader": judge})
    assert len(main.script.calls) == 1  # only the answer
    infos = [str(e.data) for e in log.samples[0].events if e.event == "info"]
    assert any("conflictscore grader" in i and "model role 'grader'" in i for i in infos)
    assert len(judge.script.calls) == 7
    assert score.metadata["grader_source"] == "model role 'grader'"


@pytest.mark.parametrize("opts, calls, claims", [
    ({"claims": "whole"}, 3, 1),                         # no decomposition, 1 claim x 3 docs
    ({"claims": "salient", "k": 1}, 1 + 3, 1),           # salient list cut to k=1
    ({"labelling": "all_docs"}, 1 + 2, 2),               # one call per claim
    ({"claims": "whole", "labelling": "all_docs"}, 1, 1),
])
def test_cheaper_variants_call_counts(opts, calls, claims):
    from inspect_ai.solver import generate

    def judge_fn(prompt):
        if "Documents to evaluate against" in prompt:
            return '[{"document": 1, "answer": "SUPPORTS"}, {"document": 2, "answer": "CONTRADICTS"}, {"document": 3, "answer": "IRRELEVANT"}]'
        if prompt.startswith("Instruction: Break down the following report into individual claims, and keep only"):
            assert "the 1 most salient" in prompt
            return "Claims:\nCats purr.\nDogs purr."
        return grader(prompt)

    judge = scripted_model(judge_fn)
    task = _task(**opts)
    task.solver = generate()
    _, score = _run(task, scripted_model([RESPONSE]), model_roles={"grader": judge})
    assert len(judge.script.calls) == calls == score.value["grader_calls"]
    assert score.value["claims"] == claims


def test_empty_response_and_failed_decomposition_have_no_score():
    from inspect_ai.solver import generate

    task = _task()
    task.solver = generate()
    judge = scripted_model(lambda p: "Claims:" if p.startswith("Instruction") else grader(p))
    log, score = _run(task, scripted_model([RESPONSE]), model_roles={"grader": judge})
    assert math.isnan(score.value["cs_c"]) and score.value["decomposition_failure"] == 1
    assert score.metadata["decomposition_error"].startswith("no claims")
    assert len(judge.script.calls) == 1
    cs_c = [m for s in log.results.scores if s.name == "cs_c" for m in s.metrics.values()][0]
    assert math.isnan(cs_c.value)  # no sample had a defined score

    _, score = _run(task, scripted_model([""]), model_roles={"grader": judge})
    assert math.isnan(score.value["cs_r"]) and score.value["claims"] == 0 and score.value["grader_calls"] == 0


def test_bad_options_and_missing_documents():
    with pytest.raises(ValueError, match="claims='lines'"):
        conflictscore(claims="lines")
    with pytest.raises(ValueError, match="nli_model"):
        conflictscore(backend="nli")
    from inspect_ai.solver import generate

    task = Task(dataset=MemoryDataset([Sample(id="x", input="q")]), solver=generate(), scorer=conflictscore())
    log = eval(task, model=scripted_model(["a"]), display="none")[0]
    assert log.status == "error" and "no grounding documents" in str(log.error)
