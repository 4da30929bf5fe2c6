"""Issue 32, Conflict Exposure rows: triplets whose names hold commas are split
around their relation (or rejected and counted, never misread), and "no
conflicts" written in prose with a parenthesis is no conflict. Parser shapes,
then the conflict_exposure task with a scripted model; values by hand."""

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.plugins.conflict_exposure.parse import parse_triplets, says_no_conflicts
from conflict_eval.scorers.conflict_exposure.store import ConflictExposureStore
from conflict_eval.testing import scripted_model

KATRI = ("Katri, Girl of the Meadows", "is", "anime series")


@pytest.mark.parametrize("reply, relations, triplets, rejected", [
    # the row: the relation is the lower-case element, the subject keeps its comma
    ("[(Katri, Girl of the Meadows, is, anime series)]", (), [KATRI], 0),
    # a real reply's shape (ce-def, Great Eastern Conventions): the comma of "Inc."
    ("[(Great Eastern Conventions, Inc., instance of, entertainment company)]", (),
     [("Great Eastern Conventions, Inc.", "instance of", "entertainment company")], 0),
    # commas in the object, as before
    ("[(Jon Stone, occupation, writer, director and producer)]", (),
     [("Jon Stone", "occupation", "writer, director and producer")], 0),
    ("[(Manorama, appeared in, more than 1,500 films)]", (), [("Manorama", "appeared in", "more than 1,500 films")], 0),
    # no element reads as a relation: rejected, not guessed
    ("[(Katri, Girl of the Meadows, Is, Anime Series)]", (), [], 1),
    # a reply that capitalises its relations gives no case cue ...
    ("[(Katri, Is, Anime Series), (Katri, Girl of the Meadows, aired on, Fuji TV)]", (),
     [("Katri", "Is", "Anime Series")], 1),
    # ... but its known relations still split an item
    ("[(Katri, Is, Anime Series), (Katri, Girl of the Meadows, Is, Fuji TV Anime)]", (),
     [("Katri", "Is", "Anime Series"), ("Katri, Girl of the Meadows", "Is", "Fuji TV Anime")], 0),
    # the detection step knows the relations of its prompt's list
    ("[(Katri, Girl of the Meadows, Aired On, 1984)]", ("aired on",),
     [("Katri, Girl of the Meadows", "Aired On", "1984")], 0),
])
def test_items_with_commas_in_names(reply, relations, triplets, rejected):
    p = parse_triplets(reply, relations)
    assert p.triplets == triplets and len(p.rejected) == rejected


WESTMINSTER = ("There are no conflicting relations in this list. The relations describe different schools "
               "(Westminster School, Concho Elementary, Grace Church School, Pembroke Hill and Grennaskolan) "
               "and none of them contradict each other.")


@pytest.mark.parametrize("reply, no_conflicts", [
    (WESTMINSTER, True),
    ("There are no conflicting relations: the schools (Westminster School, Concho, Grace Church School) differ.",
     True),
    ("There are no conflicting relations except one:\n[(Katri, aired on, 1984), (Katri, aired on, 1985)]", False),
    ("No conflicts found.\n(Katri, aired on, 1984)\n(Katri, aired on, 1985)", False),  # triplets on their lines
    ("The years differ (Katri, aired on, 1984).", False),  # no statement that there are none
    ("None of these relations conflict with each other.", True),
    ("These relations don’t contradict each other.", True),
])
def test_no_conflicts_in_prose(reply, no_conflicts):
    assert says_no_conflicts(reply, parse_triplets(reply)) is no_conflicts


def _reply(detect):
    def reply(prompt):
        if prompt.startswith("If I want to know"):
            return "[Who wrote Animorphs?, Who published it?]"
        if prompt.startswith("List all relations in"):
            return "[(Katri, Girl of the Meadows, is, anime series), (Katri, Girl of the Meadows, Aired On, 1984)]"
        if prompt.startswith("List all conflict relations in"):
            return detect
        return "No"
    return reply


@pytest.mark.parametrize("detect, no_conflicts, conflicts", [
    (WESTMINSTER, 1, []),
    ("[(Katri, Girl of the Meadows, is, anime series)]", 0, [list(KATRI)]),
])
def test_run_reads_triplets_and_prose_as_meant(small_kb, log_dir, detect, no_conflicts, conflicts):
    [log] = inspect_eval("conflict_eval/conflict_exposure",
                         task_args={"path": str(small_kb), "retriever": "bm25"},
                         model=scripted_model(_reply(detect)), limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    [sample] = log.samples
    store = sample.store_as(ConflictExposureStore)
    n_docs = len(store.triplets)
    assert n_docs > 0
    for doc_id, triplets in store.triplets.items():
        assert triplets == [list(KATRI)]
        assert store.rejected_items[doc_id] == [
            "no relation element among 4 elements: (Katri, Girl of the Meadows, Aired On, 1984)"]
    assert store.no_conflicts is bool(no_conflicts) and store.conflicts == conflicts
    value = sample.scores["triplet_parsing"].value
    # by hand: 2 items per document, 1 rejected (no relation element), 1 recovered (the Katri triplet)
    assert value == {"items": 2 * n_docs, "rejected": n_docs, "recovered": n_docs,
                     "detection_failure": 0, "no_conflicts": no_conflicts}
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics["rejected_item_rate"] == pytest.approx(0.5)
    assert metrics["recovered_item_rate"] == pytest.approx(0.5)
