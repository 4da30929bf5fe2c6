"""Issue 42's table, row by row: each reply sent by a scripted model through
the task named in its row (or, for a pure reader, given to it directly) is
recorded as meant; where the row says "no single option", a counted failure.

Golden values are worked out by hand from the metrics' definitions (comments
beside each assertion).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.testing import scripted_model

from .test_choice_rows import control_rag_metrics

FIXTURES = Path(__file__).resolve().parent / "fixtures"
KRE = str(FIXTURES / "kre" / "comparative_shapes_handwritten.json")  # golds B, E, E, E, D (5 options)


def _overall(log) -> dict[str, float]:
    return {sc.name: next(iter(sc.metrics.values())).value for sc in log.results.scores}


def _by_question(replies: dict[str, str]):
    def reply(prompt):
        [text] = [r for q, r in replies.items() if f"Question: {q}" in prompt]
        return text

    return reply


def _answers(log) -> dict[str, str | None]:
    return {s.metadata["question"][:20]: s.scores["choice_accuracy"].answer for s in log.samples}


# ---------------------------------------------------------------- ConflictQA: a lead that names a later option


def test_conflictqa_lead_choice_is_not_dropped_for_a_bracketed_later_option(log_dir):
    # options counter first: A "Biochemistry studies gluons." (counter), B "... does not study ..." (memory), C Uncertain
    reply = "A — the passage's evidence holds, so the information's claim (B) is not convincing."
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "conflictqa_mc", "dataset": "conflictqa", "option_order": "counter_first",
                                    "path": str(FIXTURES / "conflictqa" / "gluons_handwritten.jsonl")},
                         model=scripted_model(lambda p: reply), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    classes = {s.scores["memorization_ratio"].metadata["class"] for s in log.samples}
    assert classes == {"counter"}  # was "memory": the reader took (B)
    m = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert m["memorization_ratio"] == 0.0 and m["parse_failure_rate"] == 0.0  # by hand: 0 memory / (0 + 4 counter)


# ---------------------------------------------------------------- TruthfulQA Control-RAG


def test_control_rag_reads_a_dash_explanation_and_a_json_answer(shared_data):
    def reply(prompt, i, row, gold, other):
        if i == 0:
            return f"({gold}) — Document 1 says so; nothing supports ({other})."
        return json.dumps({"answer": gold})

    m = control_rag_metrics(shared_data, reply)
    # by hand: both Control-RAG replies give the gold letter -> 2/2 (was 0/2: both parse failures)
    assert m["control_rag"] == 1.0 and m["control_parse_failure"] == 0.0 and m["rag"] == 1.0


# ---------------------------------------------------------------- End-to-End, Comparative, CoT, GKP on KRE ECQA


@pytest.mark.parametrize("method,replies,want", [
    ("end_to_end", {"What do people call": "B</a>",
                    "The dog was tuckered": "D</a>\n\nActually, wait — the evidence is about cats. <a>E</a>",
                    "After the long hike": "E</a>", "The tired retriever": "E</a>",
                    "How did Sam get": "<a>A</a> and <a>D</a>"},
     ["B", "E", "E", "E", None]),  # two tags, no revision: ambiguous, counted
    ("comparative", {"What do people call": "B", "The dog was tuckered": "E", "After the long hike": "E",
                     "The tired retriever": "E",
                     "How did Sam get": "The context gives (A), but a car is how people get to work.\n\n$$\\boxed{D}$$"},
     ["B", "E", "E", "E", "D"]),
    ("cot", {"What do people call": "x</t>\n# Answer: B", "The dog was tuckered": "x</t>\n**Answer:** E — walked",
             "After the long hike": "x</t>\nMy answer: option E (walked)", "The tired retriever": "x</t><a>E</a>",
             "How did Sam get": "x</t>\nI think it's D."},
     ["B", "E", "E", "E", "D"]),
])
def test_methods_read_their_answer_region_with_the_shared_reader(method, replies, want, log_dir):
    [log] = inspect_eval("conflict_eval/run", task_args={"method": method, "dataset": "kre_ecqa", "path": KRE},
                         model=scripted_model(_by_question(replies)), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    answers = [s.scores["choice_accuracy"].answer for s in log.samples]
    assert sorted(answers, key=str) == sorted(want, key=str) and len(answers) == 5


def test_gkp_reads_an_untagged_answer_after_the_thought(log_dir):
    def reply(prompt):
        if "</t>" not in prompt and "<t>" not in prompt:
            return "Knowledge: cars take people to work."
        return "The evidence is wrong here.</t>\n**Answer:** D — car"

    [log] = inspect_eval("conflict_eval/run", task_args={"method": "gkp", "dataset": "kre_ecqa", "path": KRE},
                         model=scripted_model(reply), log_dir=log_dir, display="none", limit=1)
    assert log.status == "success", log.error
    assert log.samples[0].scores["choice_accuracy"].answer == "D"


# ---------------------------------------------------------------- pure readers (the rest of the table)


@pytest.mark.parametrize("reply,letter", [
    ("I think it's B.", "B"), ("Probably B.", "B"), ("It's B.", "B"), ('{"answer": "B"}', "B"),
    ("**Answer — A**", "A"), ("| step | choice |\n| --- | --- |\n| evidence | A |\n| final | B |", "B"),
    ("\\boxed{B}", "B"), ("My best guess is B.", "B"),
    ("A or B", None), ("I think it's A or B.", None), ("<a>A</a> <a>B</a>", None),
])
def test_letters_in_common_chat_forms(reply, letter):
    from conflict_eval.answers import parse_choice

    got = parse_choice(reply, "ABCD")
    assert got.letter == letter and (got.ok or got.reason)


@pytest.mark.parametrize("answer,option", [
    ("rest or falling asleep", None), ("bus depot or bridge", None),
    ("bus depot (or possibly a train station)", "bus depot"), ("moving forward (the first option)", "moving forward"),
])
def test_option_matching_never_picks_from_a_hedge(answer, option):
    from conflict_eval.scorers.user_needs.normalize import option_match

    options = ["rest", "falling asleep", "bus depot", "bridge", "train station", "moving forward", "going back"]
    got = option_match(answer, options)
    assert got.option == option and (got.matched or got.reason)


def test_conflict_exposure_empty_list_then_a_note_is_no_conflicts():
    from conflict_eval.plugins.conflict_exposure.parse import parse_triplets, says_no_conflicts

    reply = "[]\n\nNote: (Cathedral, founded in, 1856) appears in two documents and they agree."
    assert says_no_conflicts(reply, parse_triplets(reply, relations=["founded in"]))
    reply = "[]\n\nNote: (Cathedral, founded in, 1856) conflicts with (Cathedral, founded in, 1900)."
    assert not says_no_conflicts(reply, parse_triplets(reply, relations=["founded in"]))


def test_conflictscore_label_and_microact_assert_follow_a_revision():
    from conflict_eval.scorers.microact.parse import parse_assert
    from conflict_eval.scorers.conflictscore.parse import parse_label

    label = parse_label('{"answer": "SUPPORTS"}\n\nActually, the document says the opposite, so the correct label is '
                        "CONTRADICTS")
    assert label.label == "CONTRADICTS"
    verdict = parse_assert("<c>0</c> ... actually, on reflection the dates differ. Final: <c>1</c> <p>0.85</p>")
    assert (verdict.conflict, verdict.confidence) == (1, 0.85)
    assert parse_assert("<c>0</c> <c>1</c>").error  # no revision: several verdicts, counted


def test_a_triplet_split_the_vocabulary_cannot_decide_is_a_counted_failure():
    from conflict_eval.plugins.conflict_exposure.parse import parse_triplets

    meant = parse_triplets("[(Paimen, piika ja emäntä, written by, Auni Nuolivaara)]")
    assert meant.triplets == [("Paimen, piika ja emäntä", "written by", "Auni Nuolivaara")]
    unsure = parse_triplets("[(Paimen, piika ja emäntä, kirjoittaja, Auni Nuolivaara)]")
    assert unsure.triplets == [] and unsure.rejected[0].startswith("ambiguous split")
