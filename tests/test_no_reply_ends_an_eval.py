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


def run_every_case(task: str, task_args: dict, log_dir: str) -> dict:
    """One eval of the demo's first samples, one per case: every call of a sample gets its
    case's reply (the samples are independent, as one eval per case was); ``{case: sample}``."""
    from inspect_ai.model import get_model

    from conflict_eval.plugins.demo.dataset import demo
    from conflict_eval.testing import scripted_output

    case_of = {s.input: CASES[k % len(CASES)] for k, s in enumerate(demo())}

    def outputs(input, tools, tool_choice, config):
        text = "\n".join(m.text for m in input)
        [(_, reply)] = [case for question, case in case_of.items() if question in text]
        return scripted_output(reply)

    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    [log] = inspect_eval(task, task_args=task_args, model=model, limit=len(CASES), log_dir=log_dir,
                         display="none")
    assert log.status == "success", log.error
    assert log.samples and all(s.error is None for s in log.samples)
    by_case = {case_of[s.input][0]: s for s in log.samples}
    assert sorted(by_case) == sorted(IDS)  # every case ran, on its own sample
    return by_case


def test_microact(log_dir):
    from conflict_eval.scorers.microact.stores import MicroActStore

    samples = run_every_case("conflict_eval/microact", {"dataset": "demo", "max_turns": 2, "warm_start": False},
                             log_dir)
    for name, sample in samples.items():
        store = sample.store_as(MicroActStore)
        assert store.turns_used == 2 and store.stop_reason == "budget", name
        if name == "lone surrogates":  # its <f>reason(evidence="\ud800")</f> is a valid action
            assert [t["action"] for t in store.turns] == ["reason", "reason"]
            assert store.turns[0]["args"] == {"evidence": "\ufffd"}
        else:
            assert store.invalid_actions == 2 and all(t["error"] for t in store.turns), name
        score = sample.scores["choice_accuracy"]
        assert score.value["parse_failure"] == 1 and score.value["accuracy"] == 0, name
        assert score.metadata["parse_failure_reason"], name


@pytest.mark.parametrize("method", ["cot", "few_shot", "self_ask", "comparative"])
def test_baselines(method, log_dir):
    samples = run_every_case("conflict_eval/run", {"method": method, "dataset": "demo"}, log_dir)
    for name, sample in samples.items():
        score = sample.scores["choice_accuracy"]
        assert score.value == {"accuracy": 0, "parse_failure": 1, "refusal": 0, "misled": 0}, name
        assert score.metadata["parse_failure_reason"], name


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


