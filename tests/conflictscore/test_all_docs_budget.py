"""labelling=all_docs sizes its output budget to the number of documents
(issue 27, Scoring 4): 10 documents do not fit in 512 tokens."""

import json

from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import get_model
from inspect_ai.solver import generate

from conflict_eval.scorers.conflictscore.pipeline import all_docs_max_tokens
from conflict_eval.scorers.conflictscore.scorer import conflictscore
from conflict_eval.testing import scripted_model, scripted_output

DOCS = [f"Document text number {i}." for i in range(1, 11)]
TOKENS_PER_OBJECT = 75  # a JSON object with a snippet and a reasoning, as a strong model writes it


def _object(n: int) -> str:
    return json.dumps({"document": n, "document_snippet": f"Document text number {n}.",
                       "reasoning": "The document says nothing about the claim's attributes. " * 4,
                       "answer": "IRRELEVANT"})


def cutting_grader():
    """Writes one object per document and stops at ``config.max_tokens``
    (an object costs TOKENS_PER_OBJECT tokens), as a provider does."""
    budgets = []

    def outputs(input, tools, tool_choice, config):
        budgets.append(config.max_tokens)
        fits = (config.max_tokens or 10**6) // TOKENS_PER_OBJECT
        objects = [_object(n) for n in range(1, 11)]
        if fits >= len(objects):
            return scripted_output("[\n" + ",\n".join(objects) + "\n]")
        return scripted_output("[\n" + ",\n".join(objects[:fits]) + ',\n{"document": ', stop_reason="max_tokens")

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False), budgets


def test_the_budget_grows_with_the_documents():
    assert all_docs_max_tokens(512, 10) == 1600 and all_docs_max_tokens(512, 2) == 512
    assert all_docs_max_tokens(None, 10) is None


def test_ten_documents_are_all_labelled():
    judge, budgets = cutting_grader()
    task = Task(dataset=MemoryDataset([Sample(id="s", input="Write", metadata={"documents": DOCS})]),
                solver=generate(), scorer=conflictscore(claims="whole", labelling="all_docs"))
    log = eval(task, model=scripted_model(lambda p: "The museum opened in 1990."), model_roles={"grader": judge},
               display="none")[0]
    assert log.status == "success", log.error
    score = log.samples[0].scores["conflictscore"]
    assert budgets == [1600]
    # at 512 tokens only 512 // 75 = 6 objects fit and documents 7-10 would fail; now all 10 are labelled
    assert score.value["label_failures"] == 0 and score.value["label_coverage"] == 1.0
    assert score.metadata["label_matrix"] == [["IRRELEVANT"] * 10]
