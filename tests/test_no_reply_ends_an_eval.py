"""No model reply ends an eval (issue 11, deliverable 3).

Scripted models answer every call with pathological text -- 10,000 nested
brackets, 20,000 unclosed tags, long white-space runs, lone surrogates. Each
run must finish with status ``success``, the unreadable replies recorded on
the sample and counted as parse failures, and the sample scored by the
metric's failure rule (wrong, never a free pass).
"""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.answers.fuzz import PATHOLOGICAL_REPLIES
from conflict_eval.testing import scripted_model

PATHOLOGICAL = PATHOLOGICAL_REPLIES
CASES = list(PATHOLOGICAL.items())
IDS = list(PATHOLOGICAL)


def run_pathological(task: str, task_args: dict, reply: str, log_dir: str, limit: int = 1):
    model = scripted_model(lambda prompt: reply)
    [log] = inspect_eval(task, task_args=task_args, model=model, limit=limit, log_dir=log_dir,
                         display="none")
    assert log.status == "success", log.error
    assert log.samples and all(s.error is None for s in log.samples)
    return log


MICROACT_CASES = CASES


@pytest.mark.parametrize("name,reply", MICROACT_CASES)
def test_microact(name, reply, log_dir):
    from conflict_eval.scorers.microact.stores import MicroActStore

    log = run_pathological("conflict_eval/microact", {"dataset": "demo", "max_turns": 2, "warm_start": False},
                           reply, log_dir)
    sample = log.samples[0]
    store = sample.store_as(MicroActStore)
    assert store.turns_used == 2 and store.stop_reason == "budget"
    if name == "lone surrogates":  # its <f>reason(evidence="\ud800")</f> is a valid action
        assert [t["action"] for t in store.turns] == ["reason", "reason"]
        assert store.turns[0]["args"] == {"evidence": "\ufffd"}
    else:
        assert store.invalid_actions == 2 and all(t["error"] for t in store.turns)
    score = sample.scores["choice_accuracy"]
    assert score.value["parse_failure"] == 1 and score.value["accuracy"] == 0
    assert score.metadata["parse_failure_reason"]


@pytest.mark.parametrize("method", ["cot", "few_shot", "self_ask", "comparative"])
@pytest.mark.parametrize("name,reply", CASES, ids=IDS)
def test_baselines(method, name, reply, log_dir):
    log = run_pathological("conflict_eval/run", {"method": method, "dataset": "demo"}, reply, log_dir)
    sample = log.samples[0]
    score = sample.scores["choice_accuracy"]
    assert score.value == {"accuracy": 0, "parse_failure": 1, "refusal": 0, "misled": 0}
    assert score.metadata["parse_failure_reason"]


@pytest.mark.parametrize("name,reply", CASES, ids=IDS)
def test_user_needs(name, reply, log_dir, shared_data):
    log = run_pathological("conflict_eval/user_needs",
               {"dataset": "user_needs_kre_ecqa", "path": str(shared_data / "kre_ecqa" / "sample.jsonl"),
                "n_contexts": "1"}, reply, log_dir, limit=2)
    for sample in log.samples:
        score = sample.scores["user_need_accuracy"]
        # "lone surrogates" has a closed <output> tag: its body is read and is simply wrong
        if score.value["parse_failure"]:
            assert score.value["correct"] == 0 and score.metadata["parse_failure_reason"]
        else:
            assert name == "lone surrogates" and score.value["correct"] == 0


