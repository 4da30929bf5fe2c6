"""KRE items that list one option text under two letters are scored by option
text (issue 27, "Scoring" item 1), on the real records in ../shared/data."""

import json
import logging

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.answers import parse_choice
from conflict_eval.plugins.kre.dataset import duplicate_options, load_kre
from conflict_eval.scorers.choice_accuracy.values import choice_values
from conflict_eval.testing import scripted_model

# (1-based line of ../shared/data/kre_ecqa/sample.jsonl, choices, gold, candidate), read by hand
LINE_61 = (61, ["mortal", "dying", "death", "dead", "mortal"], "E", "C")    # gold text twice (A, E)
LINE_105 = (105, ["anterior", "front", "main", "front", "current"], "E", "D")  # candidate text twice (B, D)
LINE_16 = (16, ["get money", "have money", "bring cash", "go to market", "bring cash"], "A", "B")


def _row(shared_data, line):
    return json.loads((shared_data / "kre_ecqa" / "sample.jsonl").read_text().splitlines()[line - 1])


@pytest.mark.parametrize("line, choices, gold, candidate", [LINE_61, LINE_105, LINE_16])
def test_the_records_are_as_read_by_hand(shared_data, line, choices, gold, candidate):
    row = _row(shared_data, line)
    assert (row["choices"], row["answer"], row["candidate"]) == (choices, gold, candidate)


def test_loader_counts_duplicate_options_per_dataset(shared_data, caplog):
    with caplog.at_level(logging.INFO, logger="conflict_eval.plugins.kre.dataset"):
        ecqa = load_kre("kre_ecqa", shared_data / "kre_ecqa" / "sample.jsonl")
        ecare = load_kre("kre_ecare", shared_data / "kre_ecare" / "sample.jsonl")
    messages = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert ("WARNING", f"kre_ecqa ({shared_data / 'kre_ecqa' / 'sample.jsonl'}): 6 of 400 record(s) list the "
            "same option text under two letters (3 with the gold option's text twice); they are scored by "
            "option text") in messages
    assert any(level == "INFO" and msg.startswith("kre_ecare (") and ": 0 of 400 record(s)" in msg
               for level, msg in messages)
    marked = [r for r in ecqa if "duplicate_options" in r.extra]
    assert len(marked) == 6 and not any("duplicate_options" in r.extra for r in ecare)
    by_question = {r.question: r for r in marked}
    assert by_question[_row(shared_data, 61)["question"]].extra["duplicate_options"] == [["A", "E"]]
    assert by_question[_row(shared_data, 105)["question"]].extra["duplicate_options"] == [["B", "D"]]


def test_duplicate_groups_ignore_case_and_white_space():
    assert duplicate_options(["Bent", " bent ", "crooked"]) == [["A", "B"]]
    assert duplicate_options(["a", "b"]) == []


@pytest.mark.parametrize("letter, expected", [
    ("A", (1, 0, True)),   # gold text under the other letter: correct
    ("E", (1, 0, False)),
    ("C", (0, 1, False)),  # the conflicting option
    ("B", (0, 0, False)),
])
def test_values_gold_text_twice(letter, expected):
    _, choices, gold, candidate = LINE_61
    assert choice_values(letter, gold, candidate, choices) == expected


@pytest.mark.parametrize("letter, expected", [
    ("B", (0, 1, True)),   # the candidate's text under the other letter: misled
    ("D", (0, 1, False)),
    ("E", (1, 0, False)),
])
def test_values_candidate_text_twice(letter, expected):
    _, choices, gold, candidate = LINE_105
    assert choice_values(letter, gold, candidate, choices) == expected


def test_gold_and_conflict_with_one_text_is_correct_not_misled():
    assert choice_values("B", "A", "B", ["x", "x", "y"]) == (1, 0, True)


def test_option_text_reply_with_a_duplicated_text_parses():
    parsed = parse_choice("It is mortal.", "ABCDE", options=LINE_61[1])
    assert parsed.ok and parsed.letter in {"A", "E"}


def test_run_scores_duplicate_items_by_text(shared_data, log_dir):
    path = shared_data / "kre_ecqa" / "sample.jsonl"
    questions = {_row(shared_data, 61)["question"]: "A", _row(shared_data, 105)["question"]: "B",
                 _row(shared_data, 16)["question"]: "E"}

    def reply(prompt):
        [letter] = [v for q, v in questions.items() if f"Question: {q}\n" in prompt]
        return f"The final answer is: <a>{letter}</a>"

    ids = [r.id for r in load_kre("kre_ecqa", path) if r.question in questions]
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "kre_ecqa",
                                                          "path": str(path)},
                         model=scripted_model(reply), sample_id=ids, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    got = {s.metadata["question"]: (s.scores["choice_accuracy"].value, s.scores["choice_accuracy"].metadata)
           for s in log.samples}
    value, meta = got[_row(shared_data, 61)["question"]]
    assert value == {"accuracy": 1, "parse_failure": 0, "refusal": 0, "misled": 0} and meta["scored_by_option_text"]
    value, meta = got[_row(shared_data, 105)["question"]]
    assert value == {"accuracy": 0, "parse_failure": 0, "refusal": 0, "misled": 1} and meta["scored_by_option_text"]
    value, meta = got[_row(shared_data, 16)["question"]]  # duplicates that neither answer touches
    assert value == {"accuracy": 0, "parse_failure": 0, "refusal": 0, "misled": 0} and "scored_by_option_text" not in meta


def test_lmeval_scores_duplicate_items_by_text(shared_data):
    pytest.importorskip("lm_eval")
    from conflict_eval.lmeval.utils import load_docs, process_end_to_end

    docs = load_docs("kre_ecqa", path=str(shared_data / "kre_ecqa" / "sample.jsonl"))["test"]
    [doc] = [d for d in docs if json.loads(d["record"])["question"] == _row(shared_data, 61)["question"]]
    assert process_end_to_end(doc, ["A</a>"]) == {"accuracy": 1, "parse_failure": 0, "refusal": 0, "misled": 0}
    assert process_end_to_end(doc, ["C</a>"]) == {"accuracy": 0, "parse_failure": 0, "refusal": 0, "misled": 1}
