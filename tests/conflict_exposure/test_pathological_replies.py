"""Conflict Exposure with a model that only writes pathological text (issue 11)."""

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.answers.fuzz import PATHOLOGICAL_REPLIES
from conflict_eval.testing import scripted_model


@pytest.mark.parametrize("name", list(PATHOLOGICAL_REPLIES))
def test_conflict_exposure_survives_pathological_replies(name, small_kb, log_dir):
    from conflict_eval.scorers.conflict_exposure.store import ConflictExposureStore

    reply = PATHOLOGICAL_REPLIES[name]
    [log] = inspect_eval("conflict_eval/conflict_exposure", task_args={"path": str(small_kb), "retriever": "bm25"},
                         model=scripted_model(lambda prompt: reply), limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    sample = log.samples[0]
    store = sample.store_as(ConflictExposureStore)
    if name == "lone surrogates":  # "(\ud800, \udc00, x)" is a triplet, read with U+FFFD
        assert store.conflicts == [["\ufffd", "\ufffd", "x"]]
    else:
        assert store.extraction_failures  # the triplet replies were unreadable, and recorded
        assert len(store.extraction_failures) == len(store.doc_sources)
    score = sample.scores["yes_no_accuracy"]
    assert score.value == {"accuracy": 0, "parse_failure": 1}
    expected = {"lone surrogates": "ambiguous: both yes and no",
                "white space": "empty reply"}.get(name, "neither yes nor no")  # only 20,000 characters are read
    assert score.metadata["parse_failure_reason"] == expected
