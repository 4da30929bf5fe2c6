"""Issue 28 items 10-12: near-refusals counted apart from the strict "I don't
know", e-CARE answers matched to the option they name, and Table 2's refusal
split reported by the scorer and by `user-needs curves`. Real e-CARE rows."""

import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from conflict_eval.plugins.user_needs.prompts import SYSTEM_PROMPTS
from conflict_eval.scorers.user_needs.normalize import is_near_refusal, is_i_dont_know, match_option
from conflict_eval.testing import scripted_output


@pytest.mark.parametrize("answer, strict, near", [
    ("I don't know", True, False),
    ("I do not know.", True, False),
    ("i dont know", True, False),
    ("I don’t know", True, False),                # curly apostrophe
    ("I don't know the answer.", False, True),
    ("I’m not sure", False, True),
    ("I'm not sure.", False, True),
    ("Not enough information to answer.", False, True),
    ("The context does not say.", False, True),
    ("I cannot determine that from the information.", False, True),
    ("Sahara desert", False, False),
    ("Nobody", False, False),
    # an answer slot holding no answer (answers.refusal, answer_slot=True)
    ("Unknown", False, True),
    ("**N/A**", False, True),
    ("It is unclear.", False, True),
    ("No information is given about it.", False, True),
    ("The provided documents do not mention it.", False, True),
    ("I couldn’t find the answer in the context.", False, True),   # curly apostrophe
    # hedged: an answer after all (the shared rule), not a near-refusal
    ("I'm not sure, but probably Paris", False, False),
    ("Unknown, though most likely Lyon", False, False),
])
def test_strict_and_near_refusals(answer, strict, near):
    assert (is_i_dont_know(answer), is_near_refusal(answer)) == (strict, near)


ECARE = ["The woman gave birth to a child.", "The baby feels the awareness through physical sensations."]


@pytest.mark.parametrize("answer, option", [
    ("birth", ECARE[0]),
    ("The woman gave birth to a child", ECARE[0]),
    ("physical sensations", ECARE[1]),
    ("The woman gave birth to a child..", ECARE[0]),
    ("a child", ECARE[0]),
    ("awareness of a child", None),  # one content word each: a tie names no option
    ("Sahara desert", None),
])
def test_match_option(answer, option):
    assert match_option(answer, ECARE) == option


def _grid_model(shared_data, ce_reply):
    """Context-First and Memory-First answer as Figure 2 expects on the first
    e-CARE row, in a short entity ("birth"); Context-Exclusive replies ``ce_reply``."""
    row = json.loads((shared_data / "kre_ecare" / "sample.jsonl").open().readline())
    golden, negative = row[" golden_context"].strip(), row["negative_context"].strip()
    need_of = {v: k for k, v in SYSTEM_PROMPTS.items()}

    def outputs(input, tools, tool_choice, config):
        need, prompt = need_of[input[0].text], input[-1].text
        if need == "context_exclusive":
            text = ce_reply
        elif f"<info>{negative}</info>" in prompt and need == "context_first":
            text = "physical sensations"      # the conflicting context's option, in a few words
        else:
            text = "birth"                     # the gold option, in a word
        return scripted_output(f"<output>{text}</output>", input_tokens=1)

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def test_scorer_matches_options_and_reports_the_refusal_split(shared_data, log_dir, tmp_path):
    path = str(shared_data / "kre_ecare" / "sample.jsonl")
    [log] = inspect_eval("conflict_eval/user_needs",
                         task_args={"dataset": "user_needs_kre_ecare", "path": path, "limit": 1,
                                    "n_contexts": "1"},
                         model=_grid_model(shared_data, "I'm not sure"), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    cells = {(s.metadata["extra"]["user_need"], s.metadata["setting"]): s.scores["user_need_accuracy"]
             for s in log.samples}
    # Context-First: matching "birth" names the gold option; conflict "physical sensations" the negative one
    assert cells[("context_first", "matching")].value["correct"] == 1
    assert cells[("context_first", "matching")].metadata["matched_option"] == ECARE[0]
    assert cells[("context_first", "conflict")].value["correct"] == 1
    assert cells[("memory_first", "conflict")].value["correct"] == 1
    # Context-Exclusive "I'm not sure": wrong everywhere, a near-refusal, never a strict refusal
    for s in ("matching", "conflict", "irrelevant"):
        assert cells[("context_exclusive", s)].value == {"correct": 0, "refusal": 0, "near_refusal": 1,
                                                         "parse_failure": 0, "unmatched": 0}
    metrics = {k: m.value for sc in log.results.scores for k, m in sc.metrics.items()}
    # Table 2 by hand: one case (CE matching wrong, CF matching right), a hallucination that is a near-refusal
    assert metrics["refusal_split/cases"] == 1 and metrics["refusal_split/refusals"] == 0
    assert metrics["refusal_split/hallucinations"] == 1 and metrics["refusal_split/near_refusals"] == 1
    assert metrics["refusal_split/refusal_share"] == 0.0
    assert metrics["refusal_split/refusal_share_with_near"] == 1.0
    by_name = {sc.name: sc for sc in log.results.scores}
    assert by_name["near_refusal"].metrics["mean"].value == pytest.approx(3 / 9)

    from conflict_eval.cli import main
    out = tmp_path / "curves"
    assert main(["user-needs", "curves", log.location, "--out", str(out), "--name", "ecare"]) == 0
    split = json.loads((out / "ecare_mockllm_model.refusal_split.json").read_text())
    assert split == {"cases": 1, "refusals": 0, "hallucinations": 1, "near_refusals": 1, "parse_failures": 0,
                     "refusal_share": 0.0, "refusal_share_with_near": 1.0}
    md = (out / "ecare_mockllm_model.md").read_text()
    assert "## Refusal split (Table 2" in md and "| 1 | 0 | 1 | 1 | 0 | 0.000 | 1.000 |" in md


def test_refusal_split_undefined_without_cases(shared_data, log_dir):
    path = str(shared_data / "kre_ecare" / "sample.jsonl")
    [log] = inspect_eval("conflict_eval/user_needs",
                         task_args={"dataset": "user_needs_kre_ecare", "path": path, "limit": 1,
                                    "n_contexts": "1"},
                         model=_grid_model(shared_data, "birth"), log_dir=log_dir, display="none")
    metrics = {k: m.value for sc in log.results.scores for k, m in sc.metrics.items()}
    assert metrics["refusal_split/cases"] == 0
    assert metrics["refusal_split/refusal_share"] != metrics["refusal_split/refusal_share"]  # NaN, not 0


def test_issue_ecare_rows(shared_data):
    """The issue's e-CARE shapes on the real rows: the option ending "desert.." (line 270) and
    "Sahara desert" naming the manipulated option (line 242)."""
    from conflict_eval.plugins.user_needs.dataset import kre_items
    from conflict_eval.records import read_jsonl

    items = {it.id: it for it in kre_items("kre_ecare", read_jsonl(shared_data / "kre_ecare" / "sample.jsonl"))}
    desert = items["kre_ecare-270"]
    assert desert.question.endswith("Options: He saw a native plant in the desert; John had cardiovascular disease.")
    assert "desert.." not in desert.question
    sahara = items["kre_ecare-242"]
    options = sahara.extra["options"]
    assert match_option("Sahara desert", options) == sahara.manipulated_answers[0]
    assert match_option("Tom's experiments", options) == sahara.answers[0]


async def test_an_untagged_refusal_is_marked_in_the_score():
    """parse_output reads a reply without <output> that sincerely refuses as that
    refusal; the score says so (``untagged_refusal``), a tagged one does not."""
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState

    from conflict_eval.scorers.user_needs.scorer import user_need_accuracy

    scorer = user_need_accuracy()
    scores = []
    for reply in ("Based on the documents, I cannot determine the answer.", "<output>I don't know</output>"):
        state = TaskState(model="scripted/x", sample_id=1, epoch=1, input="q", messages=[],
                          output=ModelOutput.from_content("scripted/x", reply), metadata={"setting": "matching"})
        scores.append(await scorer(state, Target(["Paris"])))
    untagged, tagged = scores
    assert untagged.value == {"correct": 0, "refusal": 0, "near_refusal": 1, "parse_failure": 0, "unmatched": 0}
    assert untagged.metadata["untagged_refusal"] is True
    assert tagged.value["refusal"] == 1 and "untagged_refusal" not in tagged.metadata
