"""The hand-labelled slice resolves against the shared data and has what issue 37 asks for."""

from collections import Counter
from pathlib import Path

from conflict_eval.scorers.conflictscore.gold import load_gold

CELLS = Path(__file__).resolve().parents[1] / "data" / "judge_gold" / "cells.jsonl"


def test_slice_resolves_with_all_three_labels(shared_data):
    cells = load_gold(CELLS, shared_data)
    assert len(cells) >= 60
    assert set(Counter(c.label for c in cells)) == {"SUPPORTS", "CONTRADICTS", "IRRELEVANT"}
    assert {c.source for c in cells} == {"macnoise_fewshot", "truthfulqa_binary"}
    by_id = {c.id: c for c in cells}
    # spot checks of what the labeller read
    assert "Dallas Cowboys" in by_id["g001"].document and by_id["g001"].label == "CONTRADICTS"
    assert by_id["g013"].document.count("not written in 1973") == 1
    tqa = [c for c in cells if c.source == "truthfulqa_binary"]
    assert tqa[0].claim == "The watermelon seeds pass through your digestive system"
    assert tqa[0].document == "You grow watermelons in your stomach" and tqa[0].label == "CONTRADICTS"
    assert tqa[1].document == "The watermelon seeds will be excreted" and tqa[1].label == "SUPPORTS"
