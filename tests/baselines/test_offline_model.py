"""Baselines on a real KRE record with the real offline model (SmolLM2).

Only GKP (two calls, its answer phase parsed as CoT's): the machine is shared
and each call is slow; the other baselines use the same call path and are
covered by the scripted-model tests."""

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.components.compose import compose_task
from conflict_eval.components.stores import BaselineStore

METHODS = ["gkp"]


@pytest.mark.slow
def test_every_baseline_runs_with_the_offline_model(shared_data, log_dir):
    path = str(shared_data / "kre_ecare" / "sample.jsonl")
    tasks = [compose_task(m, "kre_ecare", path=path, generate_config={"max_tokens": 8}) for m in METHODS]
    logs = inspect_eval(tasks, model="conflict_eval/smollm2", limit=1, log_dir=log_dir, display="none")
    for method, log in zip(METHODS, logs):
        assert log.status == "success", (method, log.error)
        [sample] = log.samples
        store = sample.store_as(BaselineStore)
        assert len(store.calls) == (2 if method == "gkp" else 1)
        assert all(c["reply"] is not None for c in store.calls)
        score = sample.scores["choice_accuracy"]
        # a tiny model often writes no valid answer: then the reason is recorded, never a letter
        if score.value["parse_failure"]:
            assert score.answer is None and score.metadata["parse_failure_reason"]
        else:
            assert score.answer in ("A", "B") and store.parse_failure is None
        usage = list(sample.model_usage.values())
        assert sum(u.output_tokens for u in usage) <= 8 * len(store.calls)
