"""NLI backend plumbing. No NLI model is available offline, so these tests
build a tiny *randomly initialised* 2-layer BERT sequence classifier with
entailment/neutral/contradiction labels: they prove the loading, label
mapping, batching and scoring path, not label quality."""

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import generate

from conflict_eval.scorers.conflictscore.scorer import conflictscore
from conflict_eval.testing import scripted_model


def _tiny_nli(path, id2label):
    from conflict_eval.scorers.conflictscore.nli import build_random_nli_model

    return build_random_nli_model(path, id2label)


NLI_LABELS = {0: "ENTAILMENT", 1: "neutral", 2: "contradiction"}


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory):
    return _tiny_nli(tmp_path_factory.mktemp("nli") / "model", NLI_LABELS)


def test_nli_backend_runs_without_any_llm_grader(nli_dir):
    docs = ["Doc about cats: cats purr.", "Dogs never purr.", "Weather report: sunny."]
    task = Task(dataset=MemoryDataset([Sample(id="s", input="q", metadata={"documents": docs})]),
                solver=generate(), scorer=conflictscore(claims="sentences", backend="nli", nli_model=nli_dir))
    model = scripted_model(["Cats purr. Dogs bark."])
    log = eval(task, model=model, display="none")[0]
    assert log.status == "success", log.error
    score = log.samples[0].scores["conflictscore"]
    assert len(model.script.calls) == 1  # the answer only: no grader call
    assert score.value["grader_calls"] == 0 and score.value["claims"] == 2
    matrix = score.metadata["label_matrix"]
    assert len(matrix) == 2 and all(len(row) == 3 for row in matrix)
    assert {x for row in matrix for x in row} <= {"SUPPORTS", "CONTRADICTS", "IRRELEVANT"}
    assert score.value["label_failures"] == 0 and 0 <= score.value["cs_r"] <= 1


def test_nli_labeller_is_deterministic_and_maps_labels(nli_dir):
    from conflict_eval.scorers.conflictscore.nli import get_labeller

    lab = get_labeller(nli_dir)
    assert lab.index_to_label == {0: "SUPPORTS", 1: "IRRELEVANT", 2: "CONTRADICTS"}
    long_doc = "the weather report is sunny " * 40  # longer than the tiny model's 64 positions
    pairs = [("cats purr", "cats purr"), ("dogs bark", long_doc)] * 10  # > one batch
    assert lab.label(pairs) == lab.label(pairs) and len(lab.label(pairs)) == 20


def test_nli_model_without_nli_labels_is_rejected(tmp_path):
    from conflict_eval.scorers.conflictscore.nli import NLILabeller

    bad = _tiny_nli(tmp_path / "bad", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(ValueError, match="entailment, neutral and contradiction"):
        NLILabeller(bad)
    with pytest.raises(FileNotFoundError, match="config.json"):
        NLILabeller(tmp_path / "nowhere")
