"""The fidelity line of plugins/atomr/README.md, checked on the AtomR authors' own
released predictions (issue 47): `score --metric token_f1 -T normalizer=atomr_authors`
gives the authors' F1; the default `atomr` folds typographic quotes and differs.

The authors' full prediction files are not in ../shared; the fixture holds nine of
their BlendQA lines unchanged (tests/fixtures/atomr_released/PROVENANCE.md), six of
them the rows where folding changes F1. Every value below is computed by hand from
AtomR's normalisation (lower case, "-" to space, ASCII punctuation and a/an/the
removed) and SQuAD F1 = 2 * common / (|pred| + |gold|).
"""

import json
from pathlib import Path

import pytest

from conflict_eval.answers.text_metrics import token_f1
from conflict_eval.cli import main as cli_main

FIXTURE = Path(__file__).parent.parent / "fixtures" / "atomr_released" / "blendqa_predictions_quotes.jsonl"

# (folded "atomr", authors' "atomr_authors") per fixture line, by hand:
HAND = [
    (1, 1),            # prediction == gold ("Studio 3-A at the NBC Studios, ...")
    (1, 1),            # "2-2" == "2-2" ("2 2")
    # "500th anniversary of raphaels death apostolic palace" (7) vs "to mark 500th anniversary of
    # raphaels death" (7): 5 common; unfolded the gold keeps "raphael’s": 4 common
    (5 / 7, 4 / 7),
    # "titanic lord of rings film trilogy" (6) vs "titanic and lord of rings trilogy" (6): 5 common;
    # unfolded "“titanic” and “ lord of rings” trilogy" (7 tokens: "“the" loses "the", "“" stays):
    # lord, of, trilogy = 3, F1 = 6 / 13
    (5 / 6, 6 / 13),
    # "accomplish some work of public interest" (6) vs "carry out work of public interest" (6): 4;
    # unfolded "“work", "interest”" do not match: of, public = 2
    (4 / 6, 2 / 6),
    # "kaspar hausers suspected ties to german royalty" (7) vs "hausers suspected ties to german
    # royalty" (6): 6, F1 = 12 / 13; unfolded "hauser’s": 5, F1 = 10 / 13
    (12 / 13, 10 / 13),
    # 18 prediction tokens vs 16 gold tokens ("jaslene gonzalez was fellow contestant on americas
    # next top model during season when jael strauss participated"): jaslene, on, americas, next,
    # top, model, jael = 7, F1 = 14 / 34; unfolded "america’s" does not match: 6, F1 = 12 / 34
    (7 / 17, 6 / 17),
    # "visceral reaction against removal of statue of robert e lee" (10) vs "he had visceral
    # reaction against removal and opposes destroying history" (10): 4, F1 = 8 / 20; unfolded
    # "“visceral", "against”" do not match: reaction, removal = 2, F1 = 4 / 20
    (2 / 5, 1 / 5),
    (0, 0),            # "2017" vs "2019"
]


def rows():
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("i", range(len(HAND)))
def test_each_released_row_by_hand(i):
    row = rows()[i]
    folded, authors = HAND[i]
    assert token_f1(row["predicted"], row["gold"], "atomr") == pytest.approx(folded)
    assert token_f1(row["predicted"], row["gold"], "atomr_authors") == pytest.approx(authors)


@pytest.mark.parametrize("normalizer, column", [("atomr_authors", 1), ("atomr", 0)])
def test_readme_command_on_the_released_file_gives_the_authors_f1(tmp_path, capsys, normalizer, column):
    """The README's command, run on the released lines as the authors wrote them (the CLI reads
    their {"index", "question", "predicted", "gold"} rows unchanged)."""
    assert cli_main(["score", "--metric", "token_f1", "-T", f"normalizer={normalizer}", "--json", str(FIXTURE)]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["n"] == 9
    assert out["value"] == pytest.approx(sum(h[column] for h in HAND) / 9)


def test_atomr_qa_and_the_card_use_the_authors_figure():
    """The reproduction card compares the per-sample key `f1_authors` of atomr_qa, which
    is the authors' normaliser; on the curly-quoted row `f1` (folded) would give 2/3."""
    import asyncio

    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState

    from conflict_eval.report.logs import score_values
    from conflict_eval.runs.cards import find_card, metric_values
    from conflict_eval.scorers.atomr.scorer import atomr_qa

    row = rows()[4]
    state = TaskState(model="m", sample_id=1, epoch=1, input=row["question"], messages=[],
                      output=ModelOutput.from_content("m", row["predicted"]))
    score = asyncio.run(atomr_qa()(state, Target(row["gold"])))
    assert score.value["f1"] == pytest.approx(4 / 6) and score.value["f1_authors"] == pytest.approx(2 / 6)
    values, _ = score_values({"atomr_qa": score})
    card = find_card("atomr-hotpotqa-replay")
    assert metric_values([values], card.metric) == [pytest.approx(2 / 6)]
