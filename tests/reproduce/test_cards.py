"""Reproduction cards: file validation, ``reproduce list``, and the verdict rule
(golden intervals computed by hand from the Wilson formula)."""

import math

import pytest
import yaml

from conflict_eval.cli import main
from conflict_eval.runs.cards import (CardError, compare, find_card, load_card_file, metric_values, parse_card,
                                      render_comparisons, shipped_cards)

GOOD = {
    "paper": "A paper", "source": "Table 9, row X, column Y",
    "tasks": [{"task": "conflict_eval/run", "args": {"method": "end_to_end", "dataset": "demo"}}],
    "metric": "accuracy", "scale": 100, "paper_n": 10,
    "results": [{"model": "GPT-4o-mini", "match": ["gpt-4o-mini"], "value": 60.0}],
}


def card(**changes):
    data = {**GOOD, **changes}
    return parse_card({k: v for k, v in data.items() if v is not ...}, "test-card.yaml")


def wilson(k, n, z=1.959963984540054):
    """The Wilson score interval, written out."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_shipped_cards_validate_and_cover_every_paper():
    cards = shipped_cards()
    assert len(cards) >= 6 and len({c.id for c in cards}) == len(cards)
    sources = " ".join(c.paper for c in cards)
    for paper in ("Micro-Act", "ATOMR", "ConflictScore", "Collision of Blades", "User Needs", "RAMDocs"):
        assert paper.lower() in sources.lower(), paper
    for c in cards:
        assert not any(str(v).startswith("/") for _, args in c.tasks for v in args.values()), c.id
        for r in c.results:  # a number only where the paper text gives one
            assert r.value is not None or r.note, (c.id, r.model)


def test_paper_numbers_are_the_papers():
    """Spot-check against the paper texts (Micro-Act Table 1, AtomR Table 2, ConflictScore Table 2,
    Conflict Exposure Table 1)."""
    values = {(c.id, r.model): r.value for c in shipped_cards() for r in c.results}
    assert values[("microact-kre", "GPT-4o-mini")] == 51.10
    assert values[("microact-kre", "LLaMA-3.1-8B")] == 46.60
    assert values[("atomr-hotpotqa-replay", "gpt-4o-2024-08-06")] == 71.27
    assert values[("conflictscore-macnoise-nq", "GPT-4.1")] == 0.8945
    assert values[("conflict-exposure-table1", "Llama3-8b")] == 67.23
    assert values[("user-needs-fig3-hotpotqa", "Qwen2.5-7B-Instruct")] is None


@pytest.mark.parametrize("changes, field", [
    ({"metric": ...}, "metric"),
    ({"tasks": []}, "tasks"),
    ({"tasks": [{"args": {}}]}, "tasks[0].task"),
    ({"results": [{"model": "m", "value": "high"}]}, "results[0].value"),
    ({"results": [{"model": "m"}]}, "results[0].value"),
    ({"results": [{"model": "m", "value": None}]}, "results[0].note"),
    ({"paper_n": -3}, "paper_n"),
    ({"tolerence": 2}, "tolerence"),
])
def test_a_bad_card_names_file_and_field(changes, field):
    with pytest.raises(CardError, match=rf"card test-card\.yaml: field {__import__('re').escape(field)}:"):
        card(**changes)


def test_a_bad_card_file_on_the_command_line_exits_2(tmp_path, capsys):
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump({**GOOD, "scale": "percent"}))
    assert main(["reproduce", str(path), "--model", "scripted/x"]) == 2
    err = capsys.readouterr().err
    assert "card broken.yaml: field scale:" in err
    path.write_text("paper: [unclosed\n")
    assert main(["reproduce", str(path)]) == 2
    assert f"card {path}, line 2: invalid YAML" in capsys.readouterr().err


def test_unknown_card_lists_the_cards(capsys):
    assert main(["reproduce", "no-such-card"]) == 2
    err = capsys.readouterr().err
    assert "no card 'no-such-card'" in err and "microact-kre" in err


def test_list_shows_every_card(capsys):
    assert main(["reproduce", "list"]) == 0
    out = capsys.readouterr().out
    for c in shipped_cards():
        assert c.id in out and c.source in out


def test_find_card_by_id_and_by_path(tmp_path):
    assert find_card("ramdocs-madam-rag").metric == "strict_em_authors"
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(GOOD))
    assert load_card_file(path).id == "mine" and find_card(str(path)).id == "mine"


# ---------------------------------------------------------------- verdicts

SEVEN_OF_TEN = [1.0] * 7 + [0.0] * 3  # Wilson 95%: [0.3968, 0.8922]


def test_wilson_golden_value():
    lo, hi = wilson(7, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.3968, 0.8922)


def test_paper_value_inside_the_interval_is_reproduced():
    [row] = compare(card(), "openai/gpt-4o-mini", SEVEN_OF_TEN)
    assert row.ours == pytest.approx(0.7) and row.n == 10 and row.ci_method == "wilson"
    assert row.ci == pytest.approx(wilson(7, 10), abs=1e-9)
    assert row.verdict == "reproduced"


def test_paper_value_outside_the_interval_is_not_reproduced():
    c = card(results=[{"model": "GPT-4o-mini", "match": ["gpt-4o-mini"], "value": 95.0}])
    [row] = compare(c, "openai/gpt-4o-mini", SEVEN_OF_TEN)
    assert row.verdict == "not reproduced"
    c = card(results=[{"model": "GPT-4o-mini", "match": ["gpt-4o-mini"], "value": 39.0}])  # just below 39.68
    assert compare(c, "openai/gpt-4o-mini", SEVEN_OF_TEN)[0].verdict == "not reproduced"


def test_a_stated_tolerance_is_applied_in_paper_units():
    results = [{"model": "GPT-4o-mini", "match": ["gpt-4o-mini"], "value": 95.0}]
    assert compare(card(results=results, tolerance=25.0), "openai/gpt-4o-mini",
                   SEVEN_OF_TEN)[0].verdict == "reproduced"  # |70 - 95| = 25
    assert compare(card(results=results, tolerance=24.9), "openai/gpt-4o-mini",
                   SEVEN_OF_TEN)[0].verdict == "not reproduced"


def test_different_model_n_or_missing_value_is_not_comparable():
    [row] = compare(card(), "openai/gpt-4o", SEVEN_OF_TEN)
    assert row.verdict == "not comparable" and "different model" in row.why
    [row] = compare(card(), "openai/gpt-4o-mini", SEVEN_OF_TEN[:9])
    assert row.verdict == "not comparable" and "different n (9; paper: 10)" in row.why
    c = card(results=[{"model": "GPT-4o-mini", "match": ["gpt-4o-mini"], "value": None, "note": "a plot only"}])
    [row] = compare(c, "openai/gpt-4o-mini", SEVEN_OF_TEN)
    assert (row.verdict, row.why) == ("not comparable", "a plot only")
    c = card(paper_n=None, min_n=700)
    assert "below the paper's 700" in compare(c, "openai/gpt-4o-mini", SEVEN_OF_TEN)[0].why
    [row] = compare(card(), "openai/gpt-4o-mini", [])
    assert row.verdict == "not comparable" and row.ours is None


def test_not_comparable_names_every_reason():
    c = card(results=[{"model": "GPT-4o-mini", "match": ["gpt-4o-mini"], "value": None, "note": "a plot only"}])
    [row] = compare(c, "openai/gpt-4o", SEVEN_OF_TEN[:9], data="kre.jsonl (sha256 ab)")
    assert row.why == "a plot only; different model (ours: openai/gpt-4o; paper: GPT-4o-mini); different n (9; paper: 10)"
    assert (row.ours_model, row.data) == ("openai/gpt-4o", "kre.jsonl (sha256 ab)")
    assert "ours: model openai/gpt-4o; data kre.jsonl (sha256 ab); n 9" in render_comparisons(c, [row])


def test_metric_values_match_scorer_prefixed_keys_and_filter_by_among():
    scores = [{"memorization_ratio.memory": 1.0, "memorization_ratio.counter": 0.0},
              {"memorization_ratio.memory": 0.0, "memorization_ratio.counter": 1.0},
              {"memorization_ratio.memory": 0.0, "memorization_ratio.counter": 0.0}]  # uncertain: not counted
    assert metric_values(scores, "memory", ("memory", "counter")) == [1.0, 0.0]
    assert metric_values(scores, "memory") == [1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="ambiguous"):
        metric_values([{"a.accuracy": 1.0, "b.accuracy": 0.0}], "accuracy")


def test_registry_lists_exactly_the_shipped_cards():
    from conflict_eval.components.catalog import load_registry

    listed = load_registry().get("cards") or {}
    assert set(listed) == {c.id for c in shipped_cards()}
    papers = load_registry()["papers"]
    assert all(entry["paper"] in papers for entry in listed.values())


def test_every_card_names_a_registered_task_and_arguments_it_takes():
    import inspect

    from conflict_eval.runs.registered import registered_tasks

    tasks = registered_tasks()
    for c in shipped_cards():
        for name, args in c.tasks:
            assert name in tasks, (c.id, name)
            params = inspect.signature(tasks[name]).parameters
            takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
            assert takes_any or set(args) <= set(params), (c.id, set(args) - set(params))
