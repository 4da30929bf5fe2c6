"""Issue 28 item 15: Conflict Exposure's extraction calls and RobustRAG's
isolation calls run together, within the connection limit, and give exactly
what one call after another gives. Issue 27 Fidelity 4: RobustRAG passages
are ``title\\ntext``."""

import asyncio

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import GenerateConfig, ModelAPI, get_model, modelapi

from conflict_eval.scorers.conflict_exposure.store import ConflictExposureStore
from conflict_eval.plugins.robustrag.solver import RobustRAGStore
from conflict_eval.testing import scripted_output

from .conftest import TARGET

PEAK = {"now": 0, "max": 0}


def reply_for(prompt: str) -> str:
    if prompt.startswith("If I want to know"):
        return '["Who wrote Animorphs?", "What are companion books?"]'
    if prompt.startswith("List all relations in"):
        return "[(series, is, Goosebumps)]" if TARGET in prompt else f"[(doc, has, {len(prompt)} chars)]"
    if prompt.startswith("List all conflict relations in"):
        return "[(series, is, Goosebumps)]"
    if "Query:" in prompt:  # RobustRAG isolation
        return "Goosebumps" if TARGET in prompt.rsplit("Context information is below.", 1)[-1] else "Animorphs"
    return "No"


@modelapi(name="slowscript")
class SlowScript(ModelAPI):
    """Replies after a delay that differs per prompt, so concurrent calls finish out of order."""

    def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **kwargs):
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config):
        PEAK["now"] += 1
        PEAK["max"] = max(PEAK["max"], PEAK["now"])
        prompt = input[-1].text
        await asyncio.sleep(0.002 * (len(prompt) % 11))
        PEAK["now"] -= 1
        return scripted_output(reply_for(prompt), input_tokens=len(prompt.split()))

    def max_connections(self) -> int:
        return 4


def _run(small_kb, log_dir, method, max_connections):
    PEAK.update(now=0, max=0)
    [log] = inspect_eval("conflict_eval/conflict_exposure",
                         task_args={"path": str(small_kb), "retriever": "bm25", "method": method},
                         model=get_model("slowscript/x", memoize=False), limit=1, log_dir=log_dir,
                         display="none", max_connections=max_connections, max_samples=1)
    assert log.status == "success", log.error
    return log.samples[0], PEAK["max"]


@pytest.mark.parametrize("method, store_type", [("conflict_exposure", ConflictExposureStore),
                                                ("robustrag", RobustRAGStore)])
def test_concurrent_calls_give_the_sequential_result(small_kb, tmp_path, method, store_type):
    seq, seq_peak = _run(small_kb, str(tmp_path / "seq"), method, 1)
    par, par_peak = _run(small_kb, str(tmp_path / "par"), method, 4)
    assert seq_peak == 1 and 1 < par_peak <= 4
    assert seq.store_as(store_type).model_dump() == par.store_as(store_type).model_dump()
    assert [m.text for m in seq.messages] == [m.text for m in par.messages]
    assert seq.scores["yes_no_accuracy"].value == par.scores["yes_no_accuracy"].value


def test_robustrag_passage_is_title_newline_text(small_kb, log_dir):
    from conflict_eval.kb.format import load_kb
    from conflict_eval.plugins.robustrag.solver import passage
    from conflict_eval.testing import scripted_model

    model = scripted_model(reply_for)
    [log] = inspect_eval("conflict_eval/conflict_exposure",
                         task_args={"path": str(small_kb), "retriever": "bm25", "method": "robustrag"},
                         model=model, limit=1, log_dir=log_dir, display="none")
    [sample] = log.samples
    kb = load_kb(small_kb)
    ids = list(sample.store_as(RobustRAGStore).isolated_answers)
    assert len(ids) == 5  # k = 5, Conflict Exposure §4.3
    prompts = [c[-1].text for c in model.script.calls][:5]
    for doc_id, prompt in zip(ids, prompts):
        doc = kb.document(doc_id)
        expected = f"{doc.title}\n{doc.text}" if doc.title else doc.text
        assert passage(doc) == expected
        assert f"---------------------\n{expected}\n---------------------" in prompt
        if doc.title:
            assert f"{doc.title}: {doc.text}" not in prompt
