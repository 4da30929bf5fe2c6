"""Answer extraction for replies no reader could read (issue 32, Deliver 5).

``-T answer_extraction=grader``: ``choice_accuracy`` sends an unreadable reply
to the grader role with the extraction prompt; a letter found so is scored,
recorded as ``extracted`` and still counted in ``parse_failure``. Scripted
models only (the grader's replies are written here).
"""

from __future__ import annotations

from inspect_ai import eval as inspect_eval

from conflict_eval.answers.extraction import EXTRACTION_PROMPT, extraction_prompt, read_extraction
from conflict_eval.testing import scripted_model

UNREADABLE = "Both options have merit; (A) and (B) are each defended by some documents."


def test_prompt_quotes_options_and_reply():
    prompt = extraction_prompt("I lean towards Rome.", ["Paris", "Rome"], "AB")
    assert "A. Paris\nB. Rome" in prompt and "<<<\nI lean towards Rome.\n>>>" in prompt
    assert "one letter (A or B)" in prompt and "write NONE" in prompt
    assert prompt.startswith(EXTRACTION_PROMPT.split("{", 1)[0])


def test_read_extraction():
    assert read_extraction("B", "ABCD").letter == "B"
    assert read_extraction("**(c)**", "ABCD").letter == "C"
    assert read_extraction("Answer: B", "ABCD").letter == "B"
    assert not read_extraction("NONE", "ABCD").ok
    assert not read_extraction("none.", "ABCD").ok
    assert not read_extraction("", "ABCD").ok


def _run(grader_reply: str, main_reply: str, extraction: str | None, log_dir: str):
    main = scripted_model(lambda prompt: main_reply)
    grader = scripted_model(lambda prompt: grader_reply)
    args = {"method": "end_to_end", "dataset": "demo", "scorer": "choice_accuracy"}
    if extraction:
        args["answer_extraction"] = extraction
    [log] = inspect_eval("conflict_eval/run", task_args=args, model=main, model_roles={"grader": grader},
                         limit=2, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    return log, grader


def test_grader_extracts_but_the_reply_stays_a_parse_failure(log_dir):
    log, grader = _run("B", UNREADABLE, "grader", log_dir)
    for sample in log.samples:
        score = sample.scores["choice_accuracy"]
        assert score.value["parse_failure"] == 1 and score.value["extracted"] == 1
        assert score.answer == "B" and score.metadata["extracted_letter"] == "B"
        assert score.metadata["parse_failure_reason"]
        assert score.value["accuracy"] == int(sample.target == "B")
    assert len(grader.script.calls) == 2
    assert all(UNREADABLE in c for c in map(str, grader.script.calls))


def test_grader_finding_no_choice_leaves_the_failure_wrong(log_dir):
    log, _ = _run("NONE", UNREADABLE, "grader", log_dir)
    for sample in log.samples:
        score = sample.scores["choice_accuracy"]
        assert {k: score.value[k] for k in ("accuracy", "parse_failure", "misled", "extracted")} == \
            {"accuracy": 0, "parse_failure": 1, "misled": 0, "extracted": 0}
        assert score.metadata["extraction_reply"] == "NONE"


def test_readable_replies_never_reach_the_grader(log_dir):
    log, grader = _run("A", "<a>B</a>", "grader", log_dir)
    assert grader.script.calls == []
    for sample in log.samples:
        assert sample.scores["choice_accuracy"].value["extracted"] == 0
        assert sample.scores["choice_accuracy"].value["parse_failure"] == 0


def test_off_by_default(log_dir):
    log, grader = _run("B", UNREADABLE, None, log_dir)
    assert grader.script.calls == []
    assert all("extracted" not in s.scores["choice_accuracy"].value for s in log.samples)


def test_read_extraction_takes_a_leading_letter_only_when_it_stands_alone():
    for reply in ("B:", "B: Rome is the capital", "E (walked)", "**B**", "(B)", "B.", "B\n", "B — Rome"):
        assert read_extraction(reply, "ABCDE").letter == reply.strip("*(").strip()[0], reply
    assert not read_extraction("A letter cannot be given.", "ABCD").ok  # the article, not option A
