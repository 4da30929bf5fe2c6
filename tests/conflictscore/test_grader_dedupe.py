"""Identical grader prompts are sent once (issue 27, Wasted calls 2): the RAG
and Balanced samples of a report run label the same claims against the same
documents."""

from inspect_ai import eval

from conflict_eval.tasks.conflictscore_report.task import conflictscore_report
from conflict_eval.testing import scripted_model

REPORT = "The Steelers have won six Super Bowls. The league has 32 teams."


def judge(prompt: str) -> str:
    if prompt.startswith("Instruction: Break down"):
        return "Claims: The Steelers have won six Super Bowls.\nClaims: The league has 32 teams."
    return '{"answer": "%s"}' % ("SUPPORTS" if "Steelers" in prompt.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
                                 else "IRRELEVANT")


def run(shared_data, dedupe: bool):
    task = conflictscore_report(path=str(shared_data / "macnoise_fewshot" / "sample.jsonl"),
                                strategies="rag,balanced", grader_dedupe=dedupe)
    grader = scripted_model(judge)
    log = eval(task, model=scripted_model(lambda p: REPORT), model_roles={"grader": grader}, limit=2,
               display="none")[0]
    assert log.status == "success", log.error
    return log, grader


def test_identical_label_prompts_of_the_rag_and_balanced_samples_are_sent_once(shared_data):
    log, grader = run(shared_data, dedupe=True)
    # both samples: the same report -> 1 decomposition + 2 claims x 5 documents = 11 identical prompts
    assert len(grader.script.calls) == 11
    prompts = [c[-1].text for c in grader.script.calls]
    assert len(set(prompts)) == 11
    scores = {s.id: s.scores["conflictscore"] for s in log.samples}
    # the samples run concurrently: a prompt already in flight is awaited, not sent again, so
    # between them the two samples made 11 calls and reused 10 label replies
    assert sum(s.value["grader_calls"] for s in scores.values()) == 11
    assert sum(s.metadata["reused_label_replies"] for s in scores.values()) == 10
    # the reused replies give the same labels and scores
    a, b = scores.values()
    assert a.metadata["label_matrix"] == b.metadata["label_matrix"] and a.value["cs_c"] == b.value["cs_c"]


def test_without_dedupe_every_prompt_is_sent(shared_data):
    _, grader = run(shared_data, dedupe=False)
    assert len(grader.script.calls) == 22


def test_replies_are_not_reused_across_runs(shared_data):
    # the same grader model object in two eval() runs: the second run sends its prompts again
    task = conflictscore_report(path=str(shared_data / "macnoise_fewshot" / "sample.jsonl"), strategies="rag")
    grader = scripted_model(judge)
    for expected in (11, 22):
        log = eval(task, model=scripted_model(lambda p: REPORT), model_roles={"grader": grader}, limit=1,
                   display="none")[0]
        assert log.status == "success", log.error
        assert len(grader.script.calls) == expected
