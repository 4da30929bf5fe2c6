"""The leaderboard shows who graded each model-graded score: judges, alpha, self-agreement,
labelled-slice accuracy, or "single judge, unchecked"."""

import json

from inspect_ai import Task, eval, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import generate

from conflict_eval.scorers.conflictscore.scorer import conflictscore
from conflict_eval.testing import scripted_model

DOCS = ["Doc about cats: cats purr.", "Doc about dogs: dogs never purr."]


def _judge(dogs_label: str):
    def reply(prompt: str) -> str:
        if prompt.startswith("Instruction: Break down"):
            return "Claims:\nCats purr.\nDogs purr."
        claim = prompt.split("Claim to evaluate")[1][:40]
        label = dogs_label if "Dogs" in claim else "SUPPORTS"
        return f'{{"document_snippet": "x", "reasoning": "r", "answer": "{label}"}}'

    return scripted_model(reply)


@task
def pets_conflict():
    return Task(dataset=MemoryDataset([Sample(id="s1", input="Write about pets", metadata={"documents": DOCS})]),
                solver=generate(), scorer=conflictscore())


def test_page_names_the_judges(tmp_path):
    from conflict_eval.report.build import write_leaderboard

    logs = tmp_path / "logs"
    # model a: one judge, unchecked; model b: two judges that disagree on claim 2 (alpha from the metric)
    eval(pets_conflict(), model=scripted_model(lambda p: "Cats purr. Dogs purr."), model_roles={"grader": _judge("CONTRADICTS")},
         log_dir=str(logs / "a"), display="none")
    b = scripted_model(lambda p: "Cats purr. Dogs purr.")
    eval(pets_conflict(), model=b, model_roles={"grader": _judge("CONTRADICTS"), "grader_2": _judge("IRRELEVANT")},
         log_dir=str(logs / "b"), display="none")
    gold = tmp_path / "judge_gold.json"
    gold.write_text(json.dumps({"cells": 178, "judges": {"mockllm/model": {
        "accuracy": {"k": 89, "n": 178, "rate": 0.5, "low": 0.427, "high": 0.573}, "kappa": 0.25}}}))
    md = write_leaderboard([logs], tmp_path / "out", allow_incomplete=True)["md"].read_text()
    assert "single judge, unchecked" in md  # without a slice result, the one-judge log is unchecked
    assert "- mockllm/model × pets_conflict: judged by mockllm/model; label coverage 1.00; SINGLE JUDGE, UNCHECKED" in md
    md = write_leaderboard([logs], tmp_path / "out", allow_incomplete=True, judge_gold=gold)["md"].read_text()
    assert "Judges of the model-graded scores" in md
    head = next(line for line in md.splitlines() if line.startswith("| model | judges | label coverage"))
    assert all(cell.strip() for cell in head.strip().strip("|").split("|")), head  # no nameless column
    assert head.rstrip().endswith("| note |")
    lines = [line for line in md.splitlines() if line.startswith("| mockllm/model") and "judges" not in line
             and ("strict majority" in line or "unchecked" in line or "one judge" in line)]
    assert lines, md
    # the second run has two judges; both evaluated models are named mockllm/model, so the cell holds
    # both logs: one line per log
    single = [line for line in lines if "one judge" in line]
    panel = [line for line in lines if "strict majority" in line]
    assert len(single) == 1 and len(panel) == 1
    assert "89/178 = 0.50 [0.43, 0.57]" in single[0]  # the slice result names this judge model, with its interval
    assert "mockllm/model, mockllm/model (strict majority)" in panel[0]
    # 4 cells; judges agree on claim 1's two cells (S, S) and differ on claim 2's (C vs I twice):
    # units (S,S), (S,S), (C,I), (C,I): n_S = 4, n_C = 2, n_I = 2, n = 8; o_CI = o_IC = 2;
    # alpha = 1 - 7 * 4 / (2 * (4*2 + 4*2 + 2*2)) = 1 - 28 / 40 = 0.30
    # Cohen's kappa: raw agreement 2/4; base rates S 1/2, C 1/2 and S 1/2, I 1/2: p_e = 1/4; kappa = 1/3.
    # Label coverage: the two claim-2 cells have no majority: 2/4.
    assert "| 0.30 |" in panel[0] and "1~2: κ 0.33, raw 0.50 (4 units)" in panel[0]
    assert "| 0.50 (each judge: 1.00 / 1.00) |" in panel[0]
    assert "1: CONTRADICTS 0.50 SUPPORTS 0.50 / 2: IRRELEVANT 0.50 SUPPORTS 0.50" in panel[0]
    # and under the overview matrix, one line per model-graded log of the cell
    line = ("- mockllm/model × pets_conflict: judged by mockllm/model, mockllm/model (strict majority); "
            "label coverage 0.50 (each judge: 1.00 / 1.00); α 0.30; 1~2: κ 0.33, raw 0.50 (4 units)")
    assert line in md
    assert "label coverage 1.00 / 0.50" in md  # in the matrix cell, beside the judged figure (one per log)
    # the cell's "how it was made" row names both logs' judges (issue 44.6)
    [made] = [line for line in md.splitlines() if line.startswith("| mockllm/model | ") and "not model-graded" not in line
              and "mockllm/model; mockllm/model, mockllm/model" in line]
    html = (tmp_path / "out" / "leaderboard.html").read_text()
    assert "Judges of the model-graded scores" in html
    assert "label coverage 0.50 (each judge: 1.00 / 1.00); α 0.30" in html and "label coverage 1.00 / 0.50" in html


def test_unchecked_single_judge_says_so():
    from conflict_eval.report.judges import describe

    d = describe(["openai/gpt-4o"], {"judges": 1, "units": 10, "repeats": 1, "temperature": 0.0}, {})
    assert d["note"] == "single judge, unchecked" and d["slice"] == "not run"
    d = describe(["openai/gpt-4o"], {"judges": 1, "repeats": 3, "temperature": 1.0, "self_agreement_1": 0.9}, {})
    assert d["note"] == "" and d["self_agreement"] == "0.90 (3 repeats, T=1.0)"


def test_old_slice_result_is_a_clear_error(tmp_path):
    import pytest

    from conflict_eval.report.judges import load_gold

    old = tmp_path / "old.json"
    old.write_text(json.dumps({"cells": 65, "judges": {"m": {"accuracy": 0.5}}}))
    with pytest.raises(ValueError, match=r"old.json: judge 'm': field 'accuracy'"):
        load_gold(old)


def test_page_reads_a_list_valued_grader_role(tmp_path):
    """``--model-role grader=a,b`` binds a list to one role; the log header keeps a list of model
    configs, which the page reads as a panel of two judges."""
    from conflict_eval.report.build import write_leaderboard
    from conflict_eval.report.judges import _judges

    assert _judges({"roles": {"grader": ["a/x", "b/y"], "grader_2": "c/z"}}, "m") == ["a/x", "b/y", "c/z"]
    eval(pets_conflict(), model=scripted_model(lambda p: "Cats purr. Dogs purr."),
         model_roles={"grader": [_judge("CONTRADICTS"), _judge("IRRELEVANT")]}, log_dir=str(tmp_path / "logs"),
         display="none")
    md = write_leaderboard([tmp_path / "logs"], tmp_path / "out", allow_incomplete=True)["md"].read_text()
    assert "judged by mockllm/model, mockllm/model (strict majority); label coverage 0.50" in md
    assert "--model-role grader=mockllm/model,mockllm/model" in md  # the command that reproduces the log
