"""Issue 28 item 14: with ``negatives=true`` the two samples of a question make
the calls before the final question once (conflict_eval/kb/shared.py)."""

import anyio
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import GenerateConfig, ModelOutput

from conflict_eval.plugins.astuterag.solver import AstuteRAGStore
from conflict_eval.scorers.conflict_exposure.store import ConflictExposureStore
from conflict_eval.kb.shared import shared_generate
from conflict_eval.plugins.robustrag.solver import RobustRAGStore
from conflict_eval.testing import scripted_model

from .conftest import TARGET


def reply(prompt):
    if prompt.startswith("If I want to know"):
        return '["Who wrote Animorphs?", "What are companion books?"]'
    if prompt.startswith("List all relations in"):
        return "[(series, is, Goosebumps)]" if TARGET in prompt else "[(series, is, Animorphs)]"
    if prompt.startswith("List all conflict relations in"):
        return "[(series, is, Goosebumps)]"
    if "Query:" in prompt:
        return "Animorphs"
    if prompt.startswith("Question:") or prompt.startswith("Is "):
        return "Yes" if '"Animorphs"' in prompt.splitlines()[-1] else "No"
    return "Animorphs is a science fantasy series."


@pytest.mark.parametrize("method, store_type, shared_per_question", [
    ("conflict_exposure", ConflictExposureStore, None),   # split + one per document + detection
    ("robustrag", RobustRAGStore, 5),                      # the k isolation calls
    ("astuterag", AstuteRAGStore, 2),                      # elicitation + consolidation
])
def test_negatives_make_shared_calls_once(small_kb, log_dir, method, store_type, shared_per_question):
    model = scripted_model(reply)
    [log] = inspect_eval("conflict_eval/conflict_exposure",
                         task_args={"path": str(small_kb), "retriever": "bm25", "method": method,
                                    "negatives": True},
                         model=model, limit=2, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    pos, neg = log.samples
    assert neg.id == f"{pos.id}:neg"
    reused = neg.store_as(store_type).shared_calls + pos.store_as(store_type).shared_calls
    if shared_per_question is None:  # Conflict Exposure: 1 split + one per document + 1 detection
        shared_per_question = 1 + len(pos.store_as(store_type).doc_sources) + 1
        assert pos.store_as(store_type).triplets == neg.store_as(store_type).triplets
    assert reused == shared_per_question
    # calls made: the shared ones once, plus both final questions
    assert len(model.script.calls) == shared_per_question + 2
    # per-sample model events: the sibling's reused calls are not calls
    events = [sum(1 for e in s.events if e.event == "model") for s in (pos, neg)]
    assert sorted(events) == [1, shared_per_question + 1]
    finals = [c[-1].text for c in model.script.calls if '(Yes or No)' in c[-1].text]
    assert len(finals) == 2 and finals[0] != finals[1]
    assert {pos.scores["yes_no_accuracy"].value["accuracy"], neg.scores["yes_no_accuracy"].value["accuracy"]} == {1}


class FlakyModel:
    """First call raises; later calls answer. Counts calls."""

    def __init__(self):
        self.calls = 0

    async def generate(self, input, config=None):
        self.calls += 1
        await anyio.sleep(0.01)
        if self.calls == 1:
            raise RuntimeError("rate limited")
        return ModelOutput.from_content("m", f"answer {self.calls}")


class FakeState:
    def __init__(self, sid):
        self.sample_id, self.epoch = sid, 1
        self.metadata = {"extra": {"share_group": "kb|all|q1", "share_group_size": 2}}


async def test_a_failed_owner_call_lets_the_sibling_ask_itself():
    model = FlakyModel()
    results = {}

    async def run(sid):
        try:
            results[sid] = (await shared_generate(FakeState(sid), model, "same prompt")).completion
        except RuntimeError as err:
            results[sid] = str(err)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, "q1")
        tg.start_soon(run, "q1:neg")
    assert results == {"q1": "rate limited", "q1:neg": "answer 2"} and model.calls == 2


async def test_different_config_is_not_shared():
    model = FlakyModel()
    model.calls = 1  # no failure
    a = await shared_generate(FakeState("q1"), model, "p", GenerateConfig(max_tokens=5))
    b = await shared_generate(FakeState("q1:neg"), model, "p", GenerateConfig(max_tokens=6))
    assert model.calls == 3 and a.completion != b.completion
