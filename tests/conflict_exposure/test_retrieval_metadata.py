"""The ``retrieval`` eval-metadata block of conflict_exposure (issue 13)."""

from conflict_eval.kb.format import load_kb
from conflict_eval.tasks.conflict_exposure.task import conflict_exposure


def test_conflict_exposure_records_its_pooled_kb(small_kb):
    task = conflict_exposure(path=str(small_kb), method="standard_rag", pollution="all", retriever="bm25")
    r = task.metadata["retrieval"]
    assert r["source_names"] == ["polluted_kb"] and r["pooled_from_dataset"] is True
    src = r["sources"]["polluted_kb"]
    assert src["passages"] == len(load_kb(small_kb).corpus("all")) and src["backend"] == "bm25 (in memory)"
    assert "not the BEIR HotpotQA Wikipedia corpus of Conflict Exposure §4.2" in r["note"]
    clean = conflict_exposure(path=str(small_kb), pollution="none").metadata["retrieval"]["sources"]["polluted_kb"]
    assert clean["passages"] < src["passages"] and clean["backend"] == "dense (in memory)"
