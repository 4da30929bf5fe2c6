"""Issue 42's Conflict Exposure rows, each sent by a scripted model through
``conflict_eval/conflict_exposure`` on a small polluted KB built from real
HotpotQA records (``conftest.small_kb_module``): an explicit ``[]`` followed
by a note quoting a relation as agreeing is "no conflicts" (no document is
told it "contains knowledge that conflicts"), and a triplet item whose split
the relation vocabulary cannot decide is a counted rejection, never a guess.
Values by hand from the ``triplet_parsing`` definitions.

The three rows run once for the module, in one eval (``runs``). They are
three one-question tasks, not three samples of one: the extraction and
detection prompts show only a document or a relation list, never the
question, so one scripted model could not tell the samples apart."""

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import task_with

from conflict_eval.plugins.conflict_exposure.prompts import CONFLICT_ANNOTATION, NO_CONFLICT_ANNOTATION
from conflict_eval.scorers.conflict_exposure.store import ConflictExposureStore
from conflict_eval.testing import CHEAP_EVAL, scripted_model

pytestmark = pytest.mark.xdist_group("issue42_conflict_exposure_rows")
"""Under ``pytest -n N --dist loadgroup`` one worker runs the whole module, so its one eval runs once; under
``--dist load`` every worker given one of its tests runs that eval."""

AGREEING = "[]\n\nNote: (series, is, Animorphs) appears in several documents and they agree."
CONFLICTING = "[]\n\nNote: (series, is, Animorphs) conflicts with (series, is, Goosebumps)."
CONFLICT_WORDS = CONFLICT_ANNOTATION.split("{conflicts}")[0]  # "... contains knowledge that conflicts with ..."
TWO_SERIES = "[(series, is, Animorphs), (series, is, Goosebumps)]"
PAIMEN = ("Paimen, piika ja emäntä", "written by", "Auni Nuolivaara")
PAIMEN_ITEMS = ("[(Paimen, piika ja emäntä, written by, Auni Nuolivaara), "
                "(Paimen, piika ja emäntä, kirjoittaja, Auni Nuolivaara)]")
ROWS = {"agreeing": (TWO_SERIES, AGREEING), "conflicting": (TWO_SERIES, CONFLICTING), "paimen": (PAIMEN_ITEMS, "[]")}
"""Row -> (the extraction reply, the detection reply)."""


def _model(extract: str, detect: str):
    def reply(prompt):
        if prompt.startswith("List all relations in"):
            return extract
        if prompt.startswith("List all conflict relations in"):
            return detect
        return "No"
    return scripted_model(reply)


@pytest.fixture(scope="module")
def runs(small_kb_module, tmp_path_factory):
    """Row -> (its one sample, its store, its scripted model). One question each, top-k documents only
    (``expansion=none``: the rows are about extraction and detection)."""
    from conflict_eval.tasks.conflict_exposure.task import conflict_exposure

    models = {row: _model(*replies) for row, replies in ROWS.items()}
    tasks = []
    for row, model in models.items():
        task = conflict_exposure(path=str(small_kb_module), retriever="bm25", expansion="none")
        tasks.append(task_with(task, name=row, dataset=task.dataset[:1], model=model))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONFLICT_EVAL_OFFLINE", "1")  # as the per-test _no_network fixture sets it
        logs = inspect_eval(tasks, **CHEAP_EVAL, log_dir=str(tmp_path_factory.mktemp("logs")), max_tasks=len(tasks))
    out = {}
    for log in logs:
        assert log.status == "success", log.error
        [sample] = log.samples
        out[log.eval.task] = sample, sample.store_as(ConflictExposureStore), models[log.eval.task]
    assert set(out) == set(ROWS)
    return out


@pytest.mark.parametrize("row, no_conflicts", [("agreeing", True), ("conflicting", False)])
def test_an_empty_list_then_a_note_is_no_conflicts_unless_the_note_names_one(row, no_conflicts, runs):
    sample, store, model = runs[row]
    detect = ROWS[row][1]
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


def test_a_triplet_split_is_the_meant_one_or_a_counted_rejection(runs):
    sample, store, _ = runs["paimen"]
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
