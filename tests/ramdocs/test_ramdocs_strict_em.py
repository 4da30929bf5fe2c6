"""RAMDocs strict exact match: pure function edge cases, and the scorer through
conflict_eval/run on real records with scripted replies (golden values by hand)."""

import json
import math

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.scorers.ramdocs.metrics import breakdown, strict_em, strict_em_parts
from conflict_eval.testing import scripted_model


def test_every_gold_and_no_wrong_answer():
    golds, wrongs = ["1987", "1988"], ["1995", "1990"]
    assert strict_em("It was released in 1987 and in 1988.", golds, wrongs) == 1.0
    assert strict_em("1987", golds, wrongs) == 0.0  # one gold missing
    assert strict_em("1987, 1988 and 1995", golds, wrongs) == 0.0  # a wrong answer
    assert strict_em("19871988", golds, wrongs) == 0.0  # whole tokens only


def test_squad_normalisation_on_both_sides():
    assert strict_em("THE 3,559 People!", ["3,559 people"], ["10,000 people"]) == 1.0
    assert strict_em("3559 people", ["3,559 people"], []) == 1.0  # punctuation dropped: 3559
    assert strict_em("Mahesh Bhatt (not Raj Kapoor)", ["Mahesh Bhatt"], ["Raj Kapoor"]) == 0.0


def test_wrong_answer_inside_a_gold_answer_is_not_checked():
    # upstream rows have e.g. wrong "Football" beside gold "American football",
    # and "Hindi" in both lists
    assert strict_em("American football", ["American football"], ["Football"]) == 1.0
    assert strict_em("Hindi", ["Hindi"], ["Hindi"]) == 1.0


def test_parts_and_undefined_recall():
    assert strict_em_parts("1963 only", ["1963", "1956"], ["1998"]) == (0.0, 0.5, 0)
    em, recall, wrong = strict_em_parts("anything", ["The"], [])  # normalises to nothing
    assert em == 0.0 and math.isnan(recall) and wrong == 0
    with pytest.raises(TypeError):
        strict_em("x", "x", [])


def test_breakdown_empty_group_is_nan():
    out = breakdown([(1.0, ("ambiguous", "with_misinformation"))])
    assert out["ambiguous"] == 1.0 and out["with_misinformation"] == 1.0
    assert math.isnan(out["single_answer"]) and math.isnan(out["without_misinformation"])


# line of ../shared/data/ramdocs/sample.jsonl -> (scripted reply, strict EM by hand)
CASES = {
    0: ("3,559 people", 1),  # single, no misinformation document
    2: ("Mahesh Bhatt and Raj Kapoor", 0),  # single, misinfo: wrong answer included
    5: ("1902", 1),  # single, misinfo
    67: ("January 2012", 0),  # ambiguous (2 gold), no misinfo: one gold missing
    68: ("1987; 1988", 1),  # ambiguous, misinfo
    69: ("Dynasty, Jeremy Camp, Metallica", 0),  # ambiguous, misinfo: wrong included
    71: ("3 July 1750 and 3 September 1717", 1),  # ambiguous, misinfo
}


def test_strict_em_and_breakdowns_by_hand(shared_data, tmp_path, log_dir):
    lines = (shared_data / "ramdocs" / "sample.jsonl").read_text().splitlines()
    subset = tmp_path / "ramdocs_subset.jsonl"
    subset.write_text("\n".join(lines[i] for i in CASES) + "\n")
    rows = [json.loads(lines[i]) for i in CASES]
    replies = {r["question"]: reply for r, (reply, _) in zip(rows, CASES.values())}
    assert [len(r["gold_answers"]) >= 2 for r in rows] == [False, False, False, True, True, True, True]

    def reply(prompt):
        [text] = [a for q, a in replies.items() if f"Question: {q}\n" in prompt]
        return text + "</a>"  # end_to_end's prompt ends inside <a>

    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "ramdocs",
                                                         "scorer": "strict_em", "path": str(subset)},
                         model=scripted_model(reply), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    by_question = {s.metadata["question"]: s.scores["ramdocs_strict_em"].value["strict_em"] for s in log.samples}
    assert [by_question[r["question"]] for r in rows] == [em for _, em in CASES.values()]
    [scores] = log.results.scores
    metrics = {name: m.value for name, m in scores.metrics.items()}
    # by hand: 4 of 7 right; ambiguous 67,68,69,71 -> 0,1,0,1; single 0,2,5 -> 1,0,1;
    # with misinformation 2,5,68,69,71 -> 0,1,1,0,1; without 0,67 -> 1,0
    assert metrics["strict_em"] == pytest.approx(4 / 7)
    assert metrics["strict_em:ambiguous"] == pytest.approx(0.5)
    assert metrics["strict_em:single_answer"] == pytest.approx(2 / 3)
    assert metrics["strict_em:with_misinformation"] == pytest.approx(0.6)
    assert metrics["strict_em:without_misinformation"] == pytest.approx(0.5)
    assert (metrics["n:ambiguous"], metrics["n:single_answer"]) == (4, 3)
    assert metrics["parse_failure"] == 0
    # stderr of 4 ones and 3 zeros: sqrt((4*(3/7)^2 + 3*(4/7)^2) / 6 / 7)
    assert metrics["strict_em_stderr"] == pytest.approx(((4 * (3 / 7) ** 2 + 3 * (4 / 7) ** 2) / 6 / 7) ** 0.5)


@pytest.mark.parametrize("method,calls", [("end_to_end", 1), ("standard_rag", 1), ("astuterag", 3),
                                          ("microact", None)])
def test_document_methods_run_on_ramdocs(shared_data, log_dir, method, calls):
    """Methods that take documents get every RAMDocs document of the sample."""
    path = shared_data / "ramdocs" / "sample.jsonl"
    row = json.loads(path.read_text().splitlines()[68])  # ambiguous, 8 documents incl. misinformation
    golds = row["gold_answers"]

    def reply(prompt):
        if "<f>" in prompt or "**Thought:**" in prompt or "### Task" in prompt:
            return "<f>terminate()</f>"  # Micro-Act: stop at once, then the final answer
        return ", ".join(golds) + "</a>"

    model = scripted_model(reply)
    from conflict_eval.plugins.ramdocs.dataset import load_ramdocs

    sample_id = next(r.id for r in load_ramdocs(path) if r.question == row["question"])
    [log] = inspect_eval("conflict_eval/run", task_args={"method": method, "dataset": "ramdocs",
                                                         "scorer": "strict_em", "path": str(path)},
                         model=model, sample_id=sample_id, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    prompts = "\n".join(m.text for call in model.script.calls for m in call)
    for doc in row["documents"]:  # every document reached the model
        assert doc["text"] in prompts
    if calls is not None:
        assert len(model.script.calls) == calls
    [sample] = log.samples
    assert sample.scores["ramdocs_strict_em"].value["strict_em"] == 1


@pytest.mark.parametrize("method,message", [
    ("cot", "cot needs multiple-choice items"),
    ("conflict_exposure", "this method runs on the polluted_kb dataset"),
    ("conflictqa_mc", "has no options; this method asks a multiple-choice question"),
])
def test_methods_that_cannot_take_ramdocs_say_why(shared_data, log_dir, method, message):
    [log] = inspect_eval("conflict_eval/run", task_args={"method": method, "dataset": "ramdocs", "scorer": "strict_em",
                                                         "path": str(shared_data / "ramdocs" / "sample.jsonl")},
                         model=scripted_model(lambda p: "x"), limit=1, log_dir=log_dir, display="none")
    assert log.status == "error" and message in log.error.message
