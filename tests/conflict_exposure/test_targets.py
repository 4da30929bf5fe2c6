"""Misinformation targets too close to the gold answer are rejected and counted
(the issue's example: "Greenwich" for "Greenwich Village, New York City")."""

import pytest

from conflict_eval.plugins.polluted_kb.build import build_polluted_kb, build_report
from conflict_eval.plugins.polluted_kb.parse import parse_target
from conflict_eval.testing import scripted_model

GOLD = ["Greenwich Village, New York City"]


@pytest.mark.parametrize("reply, value, reason", [
    ("Greenwich", None, "part of the gold answer 'Greenwich Village, New York City'"),
    ("  greenwich   VILLAGE ", None, "part of the gold answer 'Greenwich Village, New York City'"),
    ('"New York City"', None, "part of the gold answer 'Greenwich Village, New York City'"),
    ("Greenwich Village, New York City, USA", None, "contains the gold answer 'Greenwich Village, New York City'"),
    ("greenwich village new york city.", None, "same as the gold answer 'Greenwich Village, New York City'"),
    # a quoted phrase too close to the gold answer is skipped for the next one
    ('Not "Greenwich" but "Harlem"', "Harlem", None),
    # whole words only: "Green" is a different word from "Greenwich"
    ("Green", "Green", None),
    ("**SoHo, Manhattan**", "SoHo, Manhattan", None),
])
def test_targets_close_to_the_gold_answer(reply, value, reason):
    p = parse_target(reply, GOLD)
    assert (p.value, p.reason) == (value, reason)


def test_gold_contained_in_target_and_empty_gold():
    assert parse_target("Paris, Texas", ["Paris"]).reason == "contains the gold answer 'Paris'"
    assert parse_target("Spa", ["Spain"]).value == "Spa"
    # a gold answer that normalises to nothing (only an article) cannot reject everything
    assert parse_target("Blue Moon", ["The", "Animorphs"]).value == "Blue Moon"


@pytest.mark.parametrize("reply", [None, 42, "", "\n\n", "\"" * 50_000, "x " * 1_000_000,
                                   "“" + "a" * 300 + "”", "```\n\n```"])
def test_parse_target_is_total(reply):
    p = parse_target(reply, GOLD)
    assert p.ok is (p.value is not None)


def test_parse_target_bad_answers_do_not_raise():
    assert parse_target("Harlem", None).value == "Harlem"
    assert parse_target("Harlem", [None, 3, "Greenwich Village"]).value == "Harlem"


REPLIES = {"Animorphs": "The Animorphs", "Greenwich Village, New York City": "Greenwich",
           "YG Entertainment": '"YG Entertainment Inc."', "Eenasul Fateh": "Goosebumps"}


def close_targets(prompt):
    [gold] = [g for g in REPLIES if f'different from "{g}"' in prompt]
    return REPLIES[gold]


def test_build_report_counts_rejections(small_source):
    # real HotpotQA rows: Animorphs, Greenwich Village..., YG Entertainment, Eenasul Fateh
    kb = build_polluted_kb(small_source, scripted_model(close_targets), types=("III",), limit=4)
    assert [q.target for q in kb.questions] == [None, None, None, "Goosebumps"]
    assert kb.questions[1].failures == {"target": "part of the gold answer 'Greenwich Village, New York City'"}
    assert build_report(kb) == {
        "clean_documents": 40, "injected_documents": 1, "questions": 4, "with_target": 1,
        "target_rejected": {"same as": 1, "part of": 1, "contains": 1}, "target_failed": 0,
        "target_failed_reasons": {}}


def test_cli_prints_the_rejections(small_source, tmp_path, capsys, monkeypatch):
    from conflict_eval.cli import main
    from conflict_eval.plugins.polluted_kb import build

    real = build.build_polluted_kb
    monkeypatch.setattr(build, "build_polluted_kb",
                        lambda source, model, **kw: real(source, scripted_model(close_targets), **kw))
    assert main(["build-polluted-kb", "--source", str(small_source), "--types", "III", "--limit", "4",
                 "--out", str(tmp_path / "kb.json")]) == 0
    out = capsys.readouterr().out
    assert "4 questions (3 without a misinformation target)" in out
    assert ("targets rejected as too close to the gold answer: 1 same as it, 1 part of it, 1 contains it; "
            "other target failures: 0") in out


@pytest.mark.parametrize("negatives, acc, n", [(False, 1.0, 3), (True, 0.5, 6)])
def test_always_yes_scores_100_percent_without_negatives(small_kb, log_dir, negatives, acc, n):
    """The README's caveat next to ACC, checked: 3 questions with a target; an
    always-yes model scores 3/3 on the all-"Yes" labels, 3/6 with the negatives."""
    from inspect_ai import eval as inspect_eval

    [log] = inspect_eval("conflict_eval/conflict_exposure",
                         task_args={"path": str(small_kb), "method": "standard_rag", "retriever": "bm25",
                                    "negatives": negatives},
                         model=scripted_model(lambda prompt: "Yes"), log_dir=log_dir, display="none")
    assert log.status == "success" and log.results.total_samples == n
    scores = {s.name: s for s in log.results.scores}
    assert scores["accuracy"].metrics["accuracy"].value == pytest.approx(acc)
