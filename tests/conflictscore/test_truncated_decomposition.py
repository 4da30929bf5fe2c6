"""A claim list cut at the token limit (issue 27, Scoring 3): retried with a
larger budget; claims still lost are counted and lower the label coverage."""

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import get_model
from inspect_ai.solver import generate

from conflict_eval.scorers.conflictscore.pipeline import DECOMPOSE_RETRY_FACTOR
from conflict_eval.scorers.conflictscore.scorer import conflictscore
from conflict_eval.testing import scripted_model, scripted_output

DOCS = ["Doc one.", "Doc two."]
CLAIMS = [f"Claims: Fact number {i} about the museum is true." for i in range(1, 41)]
FULL = "\n".join(CLAIMS)
TOKENS_PER_CLAIM = 14  # a 512-token budget ends inside claim 37 (512 = 36 x 14 + 8)


def grader(cap: int | None = None):
    """Decomposition replies cut like a real model at ``config.max_tokens``
    (or ``cap``, a provider's own output limit) with ``stop_reason``
    ``max_tokens``; every label is IRRELEVANT."""
    budgets = []

    def outputs(input, tools, tool_choice, config):
        prompt = input[-1].text
        if not prompt.startswith("Instruction: Break down"):
            return scripted_output('{"answer": "IRRELEVANT"}')
        budgets.append(config.max_tokens)
        limit = min(x for x in (config.max_tokens, cap) if x)
        if limit >= TOKENS_PER_CLAIM * len(CLAIMS):
            return scripted_output(FULL)
        whole, part = divmod(limit, TOKENS_PER_CLAIM)
        cut = "\n".join(CLAIMS[:whole]) + "\n" + CLAIMS[whole][: part * 3]
        return scripted_output(cut, stop_reason="max_tokens")

    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    return model, budgets


def run(judge):
    task = Task(dataset=MemoryDataset([Sample(id="s", input="Write", metadata={"documents": DOCS})]),
                solver=generate(), scorer=conflictscore())
    log = eval(task, model=scripted_model(lambda p: "A long report."), model_roles={"grader": judge},
               display="none")[0]
    assert log.status == "success", log.error
    return log, log.samples[0].scores["conflictscore"]


def test_a_cut_claim_list_is_retried_with_a_larger_budget():
    judge, budgets = grader()
    _, score = run(judge)
    assert budgets == [512, 512 * DECOMPOSE_RETRY_FACTOR]
    assert score.value["claims"] == 40 and score.value["decomposition_truncated"] == 0
    assert score.value["claims_lost"] == 0 and score.value["label_coverage"] == 1.0
    assert score.value["grader_calls"] == 2 + 40 * 2


def test_claims_still_lost_after_the_retry_are_counted_beside_coverage():
    judge, budgets = grader(cap=512)  # the provider never returns more than 512 tokens
    log, score = run(judge)
    assert budgets == [512, 2048]
    # 36 complete claims, the 37th cut mid-sentence ("Fact number 37 a"): dropped and counted
    assert score.value["claims"] == 36 and score.value["decomposition_truncated"] == 1
    assert score.value["claims_lost"] == 1
    assert score.metadata["claims"][-1] == "Fact number 36 about the museum is true."
    # the lost claim's pairs count as unlabelled: 72 labelled of 74
    assert (score.metadata["labelled_pairs"], score.metadata["pairs"]) == (72, 74)
    assert score.value["label_coverage"] == pytest.approx(72 / 74)
    assert "cut at the token limit" in score.explanation
    totals = {s.name: {n.split("/")[-1]: m.value for n, m in s.metrics.items()} for s in log.results.scores}
    assert totals["decomposition_truncated"]["total"] == 1 and totals["claims_lost"]["total"] == 1
    assert totals["label_coverage"]["pooled_coverage"] == pytest.approx(72 / 74)
