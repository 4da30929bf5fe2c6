"""Issue 42's Conflict Exposure rows, each sent by a scripted model through
``conflict_eval/conflict_exposure`` on a small polluted KB built from real
HotpotQA records (``conftest.small_kb``): an explicit ``[]`` followed by a
note quoting a relation as agreeing is "no conflicts" (no document is told it
"contains knowledge that conflicts"), and a triplet item whose split the
relation vocabulary cannot decide is a counted rejection, never a guess.
Values by hand from the ``triplet_parsing`` definitions."""

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.plugins.conflict_exposure.prompts import CONFLICT_ANNOTATION, NO_CONFLICT_ANNOTATION
from conflict_eval.scorers.conflict_exposure.store import ConflictExposureStore
from conflict_eval.testing import scripted_model

AGREEING = "[]\n\nNote: (series, is, Animorphs) appears in several documents and they agree."
CONFLICTING = "[]\n\nNote: (series, is, Animorphs) conflicts with (series, is, Goosebumps)."
CONFLICT_WORDS = CONFLICT_ANNOTATION.split("{conflicts}")[0]  # "... contains knowledge that conflicts with ..."


def _model(extract: str, detect: str):
    def reply(prompt):
        if prompt.startswith("List all relations in"):
            return extract
        if prompt.startswith("List all conflict relations in"):
            return detect
        return "No"
    return scripted_model(reply)


def _run(model, small_kb, log_dir):
    """One question, top-k documents only (``expansion=none``: the rows are about extraction and detection)."""
    [log] = inspect_eval("conflict_eval/conflict_exposure",
                         task_args={"path": str(small_kb), "retriever": "bm25", "expansion": "none"},
                         model=model, limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    [sample] = log.samples
    return sample, sample.store_as(ConflictExposureStore)


@pytest.mark.parametrize("detect, no_conflicts", [(AGREEING, True), (CONFLICTING, False)])
def test_an_empty_list_then_a_note_is_no_conflicts_unless_the_note_names_one(detect, no_conflicts, small_kb, log_dir):
    model = _model("[(series, is, Animorphs), (series, is, Goosebumps)]", detect)
    sample, store = _run(model, small_kb, log_dir)
    n_docs = len(store.triplets)
    assert n_docs > 0 and store.conflict_reply == detect
    assert store.no_conflicts is no_conflicts and store.conflict_parse_failure is None
    final_prompt = model.script.calls[-1][-1].text  # the Figure 3 question over the annotated documents
    if no_conflicts:
        # every document holds the quoted relation, and none is told it conflicts
        assert store.conflicts == []
        assert set(store.annotations.values()) == {NO_CONFLICT_ANNOTATION}
        assert CONFLICT_WORDS not in final_prompt
    else:
        assert store.conflicts == [["series", "is", "Animorphs"], ["series", "is", "Goosebumps"]]
        assert all(note.startswith(CONFLICT_WORDS) for note in store.annotations.values())
    # by hand: the detection reply was read (as "no conflicts" or as two triplets): detection_failure 0;
    # 2 items per document, all exact triplets: none rejected or recovered
    assert sample.scores["triplet_parsing"].value == {"items": 2 * n_docs, "rejected": 0, "recovered": 0,
                                                      "detection_failure": 0, "no_conflicts": int(no_conflicts)}


PAIMEN = ("Paimen, piika ja emäntä", "written by", "Auni Nuolivaara")


def test_a_triplet_split_is_the_meant_one_or_a_counted_rejection(small_kb, log_dir):
    extract = ("[(Paimen, piika ja emäntä, written by, Auni Nuolivaara), "
               "(Paimen, piika ja emäntä, kirjoittaja, Auni Nuolivaara)]")
    sample, store = _run(_model(extract, "[]"), small_kb, log_dir)
    n_docs = len(store.triplets)
    assert n_docs > 0
    for doc_id, triplets in store.triplets.items():
        # two lower-case elements, one worded as a relation ("written by"): the split the writer meant ...
        assert triplets == store.recovered_items[doc_id] == [list(PAIMEN)]
        # ... neither decided by the relation vocabulary ("kirjoittaja"): rejected and counted, never a guess
        assert store.rejected_items[doc_id] == ["ambiguous split, relation one of ['piika ja emäntä', 'kirjoittaja'] "
                                                "among 4 elements: (Paimen, piika ja emäntä, kirjoittaja, Auni "
                                                "Nuolivaara)"]
    # by hand: two items per document, one recovered (split around "written by"), one rejected
    value = sample.scores["triplet_parsing"].value
    assert (value["items"], value["recovered"], value["rejected"]) == (2 * n_docs, n_docs, n_docs)
