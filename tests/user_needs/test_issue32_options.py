"""Issue 32, user-needs / KRE option-matching rows, through the user_needs task
(KRE ECQA items, Appendix B/C prompts) with a scripted model: "three eyes",
"not falling asleep" and "He does not process flaxseeds" name no option (wrong,
and counted ``unmatched`` apart from wrong); "darkness" names the option "dark".

Rows: two real KRE ECQA rows (../shared/data/kre_ecqa/sample.jsonl lines 145 and
265) and two hand-made rows in the upstream format (the "two eyes" question of a
real reply in ../shared/replies, and the e-CARE flaxseed question, line 94 of
kre_ecare, with a hand-written gold option). Values by hand from Figure 2."""

import json

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.testing import scripted_model

HAND_MADE = [
    {"question": "Unlike a spider and his many sight seers, people only have what?", "answer": "E",
     "negative_answer": "brains", "candidate": "C",
     " golden_context": "two eyes Unlike a spider and his many sight seers",
     "negative_context": "Unlike a spider, people only have brains to see with.",
     "choices": ["tongues", "names", "brains", "feelings", "two eyes"]},
    {"question": "He substituted linseed oil for soybean oil. What is the more possible cause of this?",
     "answer": "A", "negative_answer": "The researcher needed a kind of addition compound.", "candidate": "B",
     " golden_context": "Flaxseed is rich in linseed oil.",
     "negative_context": "Linseed oil can be used to create addition compounds in scientific research.",
     "choices": ["He processes flaxseeds.", "The researcher needed a kind of addition compound."]},
]


def reply(prompt: str) -> str:
    if "people only have what?" in prompt:
        return "<output>three eyes</output>"
    if "trying to forget her day" in prompt:
        return "<output>not falling asleep</output>"
    if "linseed oil for soybean oil" in prompt:
        return "<output>He does not process flaxseeds</output>"
    if "feathers look like" in prompt:
        # the conflicting context's option in another form; else the gold option
        dark = "Birds in the rainforest often have dark feathers" in prompt
        return "<output>darkness</output>" if dark else "<output>very colorful</output>"
    raise AssertionError(prompt[-300:])


@pytest.fixture
def rows_file(shared_data, tmp_path):
    lines = (shared_data / "kre_ecqa" / "sample.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(lines[144]), json.loads(lines[264])] + HAND_MADE
    assert "falling asleep" in rows[0]["choices"] and rows[1]["negative_answer"] == "dark"
    path = tmp_path / "ecqa_rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_option_matching_rows(rows_file, log_dir):
    [log] = inspect_eval("conflict_eval/user_needs",
                         task_args={"dataset": "user_needs_kre_ecqa", "path": str(rows_file), "n_contexts": "1"},
                         model=scripted_model(reply), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    assert len(log.samples) == 4 * 9
    birds = [s for s in log.samples if "feathers look like" in s.metadata["question"]]
    others = [s for s in log.samples if s not in birds]
    # never a match: wrong in every cell, counted unmatched, no option recorded
    for s in others:
        score = s.scores["user_need_accuracy"]
        assert score.value == {"correct": 0, "refusal": 0, "near_refusal": 0, "parse_failure": 0, "unmatched": 1}
        assert "matched_option" not in score.metadata
    # "darkness" names "dark": right where "dark" is expected (conflict, context-exclusive and
    # context-first, Figure 2); wrong under memory-first (expects "very colorful"), but matched
    cells = {(s.metadata["extra"]["user_need"], s.metadata["setting"]): s.scores["user_need_accuracy"]
             for s in birds}
    for need in ("context_exclusive", "context_first"):
        assert cells[(need, "conflict")].value["correct"] == 1
        assert cells[(need, "conflict")].metadata["matched_option"] == "dark"
    assert cells[("memory_first", "conflict")].value["correct"] == 0
    assert cells[("memory_first", "conflict")].value["unmatched"] == 0
    assert cells[("memory_first", "conflict")].metadata["matched_option"] == "dark"
    # by hand: 27 other cells unmatched, birds none -> 27/36
    by_name = {sc.name: sc for sc in log.results.scores}
    assert by_name["unmatched"].metrics["mean"].value == pytest.approx(27 / 36)


@pytest.mark.parametrize("original, manipulated, stored, problem", [
    ("Paris (the capital of France)", "Lyon, a city in France", ("Paris", "Lyon"), None),
    ("Paris", "Lyon — the second city", ("Paris", "Lyon"), None),
    ("Great Eastern Conventions, Inc.", "Marvel Comics", ("Great Eastern Conventions, Inc.", "Marvel Comics"), None),
    ("Paris", "Lyon or Marseille", None, "item 0: entity answer 'Lyon or Marseille': several alternatives, not one span"),
    ("Paris", "Lyon is the answer", None, "item 0: entity answer 'Lyon is the answer': a sentence, not a span"),
    ("Paris", "Paris (again)", None, "item 0: original and manipulated answers are the same"),
])
def test_generator_entity_answers_are_spans(original, manipulated, stored, problem):
    """URAQ generation (Appendix A.5 prompt's JSON) reads entity answers with the shared span reader."""
    from conflict_eval.plugins.user_needs.generator import parse_questions

    reply = json.dumps([{"hops": 1, "question": "Where?", "original_answer": original,
                         "manipulated_answer": manipulated, "answer_type": "entity"}])
    good, problems = parse_questions(f"Here you go:\n```json\n{reply}\n```")
    if stored is None:
        assert good == [] and problems == [problem]
    else:
        assert [(q["original_answer"], q["manipulated_answer"]) for q in good] == [stored] and problems == []
