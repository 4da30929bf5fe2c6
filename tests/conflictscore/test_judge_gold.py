"""The hand-labelled slice resolves against the shared data and has what issues 37 and 43 ask for:
at least 150 cells and 40 distinct claims, CONTRADICTS cells from passages (not only TruthfulQA's
answer fields), two-style known-wrong controls; its labels load as Inspect precomputed (human) scores."""

import json
from collections import Counter
from pathlib import Path

import pytest

from conflict_eval.scorers.conflictscore.gold import load_gold, slice_report, write_human_scores

CELLS = Path(__file__).resolve().parents[1] / "data" / "judge_gold" / "cells.jsonl"
PASSAGES = {"macnoise_fewshot", "ramdocs", "conflictqa_strategyqa"}


def test_slice_resolves_with_the_required_shape(shared_data):
    cells = load_gold(CELLS, shared_data)
    assert len(cells) >= 150 and len({c.claim for c in cells}) >= 40
    assert len({c.id for c in cells}) == len(cells)
    assert {c.source for c in cells} == {"macnoise_fewshot", "truthfulqa_binary", "ramdocs", "conflictqa_strategyqa"}
    contra = Counter(c.source in PASSAGES for c in cells if c.label == "CONTRADICTS")
    assert contra[True] >= 40 and contra[True] > contra[False]  # most CONTRADICTS cells are passages
    styles = Counter(c.control for c in cells if c.control)
    assert styles["specific_wrong"] >= 10 and styles["vague_wrong"] >= 10
    by_id = {c.id: c for c in cells}
    # spot checks of what the labeller read
    assert "Dallas Cowboys" in by_id["g001"].document and by_id["g001"].label == "CONTRADICTS"
    tqa = [c for c in cells if c.source == "truthfulqa_binary"]
    assert tqa[0].claim == "The watermelon seeds pass through your digestive system"
    assert tqa[0].document == "You grow watermelons in your stomach" and tqa[0].label == "CONTRADICTS"
    bryan = [c for c in cells if c.claim_id == "r7"]
    assert "July 15, 1905" in bryan[1].document and bryan[1].label == "CONTRADICTS"
    # a RAMDocs passage typed "correct" that is about the county, not the township: read as IRRELEVANT
    township = [c for c in cells if c.claim_id == "r23"]
    assert "residing in the county" in township[1].document and township[1].label == "IRRELEVANT"
    hoffman = [c for c in cells if c.claim_id == "q8"]
    assert [c.label for c in hoffman] == ["SUPPORTS", "CONTRADICTS", "IRRELEVANT"]


def test_bad_cells_name_file_cell_and_field(tmp_path, shared_data):
    bad = tmp_path / "cells.jsonl"
    bad.write_text(json.dumps({"id": "x1", "source": "ramdocs", "record": 0, "claim": "c",
                               "document": {"doc": 99}, "label": "SUPPORTS"}) + "\n")
    with pytest.raises(ValueError, match=r"cells.jsonl: cell 'x1': cannot resolve its document \(IndexError"):
        load_gold(bad, shared_data)
    bad.write_text(json.dumps({"id": "x2", "source": "ramdocs", "record": 0, "claim": "c", "document": {"doc": 0},
                               "label": "SUPPORTS", "control": "vague"}) + "\n")
    with pytest.raises(ValueError, match=r"cell 'x2': control 'vague' is not one of"):
        load_gold(bad, shared_data)


def test_hand_labels_load_as_precomputed_scores_and_judges_are_measured(tmp_path, shared_data):
    """The slice's labels as Inspect ``precomputed_scores()`` applied by sample id, and a judge's
    statistics against them. Judge: right on the first 6 cells, unreadable on 2, wrong on the rest."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import precomputed_scores, scorer
    from inspect_ai.solver import generate

    from conflict_eval.testing import scripted_model

    cells = load_gold(CELLS, shared_data)[:10]
    path = write_human_scores(cells, tmp_path / "human.jsonl")

    @scorer(metrics=[])
    def human_label():
        return precomputed_scores(str(path), on_missing="error")

    log = eval(Task(dataset=[Sample(id=c.id, input=c.claim) for c in cells], solver=generate(), scorer=human_label()),
               model=scripted_model(lambda p: "x"), display="none", log_dir=str(tmp_path / "logs"))[0]
    assert log.status == "success"
    assert {s.id: s.scores["human_label"].value for s in log.samples} == {c.id: c.label for c in cells}
    wrong = {"SUPPORTS": "IRRELEVANT", "CONTRADICTS": "SUPPORTS", "IRRELEVANT": "CONTRADICTS"}
    labels = {c.id: c.label if i < 6 else None if i < 8 else wrong[c.label] for i, c in enumerate(cells)}
    r = slice_report(cells, {"j": labels})["judges"]["j"]
    # accuracy 6/10 (unreadable = wrong): Wilson [0.3127, 0.8318]; on readable 6/8
    assert (r["accuracy"]["k"], r["accuracy"]["n"], r["coverage"]) == (6, 10, 0.8)
    assert (r["accuracy"]["low"], r["accuracy"]["high"]) == pytest.approx((0.3127, 0.8318), abs=1e-4)
    assert (r["accuracy_readable"]["k"], r["accuracy_readable"]["n"]) == (6, 8)
