"""Issue 28 items 6-9: the reply shapes quoted there, through the real parsers,
and what Conflict Exposure records for them in a scripted run."""

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.plugins.conflict_exposure.parse import parse_question_list, parse_triplets, says_no_conflicts
from conflict_eval.scorers.conflict_exposure.store import ConflictExposureStore
from conflict_eval.testing import scripted_model

from .conftest import TARGET

# ---------------------------------------------------------------- item 6: commas in a name


@pytest.mark.parametrize("reply, triplet", [
    ("[(Adriana Trigiani, based in, Greenwich Village, New York City)]",
     ("Adriana Trigiani", "based in", "Greenwich Village, New York City")),
    ("[(Kevin Costner, born on, January 22, 1965)]", ("Kevin Costner", "born on", "January 22, 1965")),
    ("[(the stadium, seats, 1,500)]", ("the stadium", "seats", "1,500")),
    ("[(The Rams, based in, Los Angeles, California)]", ("The Rams", "based in", "Los Angeles, California")),
    ('[("Kevin Costner", "born on", "January 22", 1965)]', ("Kevin Costner", "born on", "January 22, 1965")),
])
def test_items_with_a_comma_in_a_name_are_recovered(reply, triplet):
    p = parse_triplets(reply)
    assert p.triplets == [triplet] and p.recovered == [triplet] and p.rejected == []


def test_recovered_items_are_counted_apart_from_exact_ones():
    p = parse_triplets("[(a, r, b), (Adriana Trigiani, based in, Greenwich Village, New York City), (x, y)]")
    assert len(p.triplets) == 2 and len(p.recovered) == 1 and p.rejected == ["2 element(s): (x, y)"]
    assert p.items == 3
    # an empty element is still a rejection, however many elements there are
    assert parse_triplets("[(a, , b, c)]").rejected == ["3 element(s): (a, , b, c)"]

# ---------------------------------------------------------------- item 7: sub-question lists


@pytest.mark.parametrize("reply, questions", [
    ("[Who directed Jaws, and when was it released?, Where was Steven Spielberg born?]",
     ["Who directed Jaws, and when was it released?", "Where was Steven Spielberg born?"]),
    ("You should first know:\n[What is the population of Paris, France?, Who is its mayor?]",
     ["What is the population of Paris, France?", "Who is its mayor?"]),
    ("[Who wrote Animorphs, a science fantasy series?, Who published it?, When",  # cut
     ["Who wrote Animorphs, a science fantasy series?", "Who published it?"]),
    ('["Who wrote X, the novel?", "When?"]', ["Who wrote X, the novel?", "When?"]),
    ("[question1, question2, question3]", ["question1", "question2", "question3"]),  # no '?': commas split
])
def test_unquoted_sub_question_lists_are_not_split_inside_a_question(reply, questions):
    assert parse_question_list(reply).questions == questions

# ---------------------------------------------------------------- item 8: prose is not a triplet


@pytest.mark.parametrize("reply, triplets", [
    ("Here are the relations in the form (subject, predicate, object):\n[(Paris, capital of, France)]",
     [("Paris", "capital of", "France")]),
    ("Each relation is written as (entityA, relationship1, entityB).", []),
    ("(Subject, Relation, Object)\n(Paris, capital of, France)", [("Paris", "capital of", "France")]),
])
def test_format_placeholders_are_not_triplets(reply, triplets):
    p = parse_triplets(reply)
    assert p.triplets == triplets and p.rejected == [] and len(p.ignored) == 1

# ---------------------------------------------------------------- item 9: "no conflicts"


@pytest.mark.parametrize("reply", [
    "[]", "```\n[]\n```", "Conflicts: []", "There are no conflicting relations.", "No conflicts found.",
    "None.", "I could not find any contradictions among these relations.", "**None**",
])
def test_no_conflicts_replies(reply):
    p = parse_triplets(reply)
    assert says_no_conflicts(reply, p) and p.triplets == [] and p.rejected == []


@pytest.mark.parametrize("reply", ["[(a, r, b)]", "I am not sure.", "[(a, b)]", "Conflicts: (x, y)"])
def test_not_a_no_conflicts_reply(reply):
    assert not says_no_conflicts(reply, parse_triplets(reply))

# ---------------------------------------------------------------- in a run


def _reply(detect):
    def reply(prompt):
        if prompt.startswith("If I want to know"):
            return "[Who wrote Animorphs, a science fantasy series?, What are its companion books?]"
        if prompt.startswith("List all relations in"):
            if TARGET in prompt:
                return "[(series, is, Goosebumps), (Goosebumps, published on, June 1, 1996)]"
            return "Relations (subject, predicate, object):\n[(series, is, Animorphs), (half, item)]"
        if prompt.startswith("List all conflict relations in"):
            return detect
        return "No"
    return reply


@pytest.mark.parametrize("detect, no_conflicts", [("[]", True), ("There are no conflicting relations.", True),
                                                  ("[(series, is, Goosebumps)]", False)])
def test_run_records_no_conflicts_recoveries_and_the_rejected_rate(small_kb, log_dir, detect, no_conflicts):
    [log] = inspect_eval("conflict_eval/conflict_exposure",
                         task_args={"path": str(small_kb), "retriever": "bm25"},
                         model=scripted_model(_reply(detect)), limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    [sample] = log.samples
    store = sample.store_as(ConflictExposureStore)
    assert store.split_questions == ["Who wrote Animorphs, a science fantasy series?",
                                     "What are its companion books?"]
    assert store.no_conflicts is no_conflicts and store.conflict_parse_failure is None
    polluted = [i for i, ts in store.triplets.items() if ["series", "is", "Goosebumps"] in ts]
    clean = [i for i in store.triplets if i not in polluted]
    assert polluted and clean
    for i in polluted:
        assert store.recovered_items[i] == [["Goosebumps", "published on", "June 1, 1996"]]
    for i in clean:
        assert store.rejected_items[i] == ["2 element(s): (half, item)"]
        assert store.ignored_items[i] == ["placeholder, not a relation: (subject, predicate, object)"]
    # the metric: items = 2 per document; rejected = 1 per clean document; recovered = 1 per polluted one
    value = sample.scores["triplet_parsing"].value
    assert value == {"items": 2 * len(store.triplets), "rejected": len(clean), "recovered": len(polluted),
                     "detection_failure": 0, "no_conflicts": int(no_conflicts)}
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics["rejected_item_rate"] == pytest.approx(len(clean) / (2 * len(store.triplets)))
    assert metrics["recovered_item_rate"] == pytest.approx(len(polluted) / (2 * len(store.triplets)))
