"""The example plugin's own tests (run by the README's test command: pytest's
testpaths include ``examples/plugin/tests``; the package is installed there with
``pip install -e examples/plugin``). Expected values are worked out by hand from
the shipped file ``data/capital_swaps.jsonl`` and the definitions in each module."""

import math

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval import components
from conflict_eval.answers import parse_choice
from conflict_eval_example.dataset import capital_swaps
from conflict_eval_example.metric import summarise, supported_option
from conflict_eval_example.parse import read_verdict


def test_registered_through_the_entry_point_hooks():
    found = components()
    for kind, name in (("dataset", "capital_swaps"), ("method", "verdict_first"), ("metric", "evidence_following")):
        assert found[kind][name].plugin == "example", (kind, name)


@pytest.mark.parametrize("reply, letter, failure", [
    ("VERDICT: B\nREASON: the passage says so.", "B", None),
    ("verdict: (c)\nreason: ...", "C", None),
    ("**VERDICT:** A\nREASON: x", "A", None),
    ("Let me think.\nVERDICT: A\nREASON: wait\nVERDICT: B\nREASON: the passage", "B", None),  # the last verdict
    ("The answer is B.", None, "no VERDICT: line"),
    ("VERDICT:\nREASON: none", None, "empty VERDICT: line"),
    ("VERDICT: A or B", None, ""),  # two letters: a counted failure, never a guess
])
def test_the_reader(reply, letter, failure):
    parsed = read_verdict(reply, "ABC")
    assert parsed.letter == letter
    if failure is not None:
        assert not parsed.ok and failure in parsed.reason


def test_a_refusal_without_a_verdict_is_a_refusal():
    reply = "I cannot determine the answer from the passage."
    assert parse_choice(reply, "ABC").refused  # the toolkit's one refusal recogniser agrees
    assert read_verdict(reply, "ABC").refused


def test_the_reader_is_linear_on_long_replies():
    import time

    def cost(n):
        reply = ("VERDICT " * n) + "\n" * n + "VERDICT: B"
        start = time.thread_time()
        read_verdict(reply, "AB")
        return time.thread_time() - start

    assert read_verdict(("x" * 20_000) + "\nVERDICT: B", "AB").letter == "B"
    assert cost(20_000) <= 50 * max(cost(2_000), 1e-4)


def test_the_dataset_maps_every_field():
    records = list(capital_swaps())
    assert len(records) == 6
    conflict = [s for s in records if s.metadata["setting"] == "conflict"]
    assert [s.id for s in conflict] == ["cs-2", "cs-4", "cs-6"]  # passage_answer differs from answer
    two = conflict[0].metadata
    assert (two["gold_option"], two["conflict_option"], two["conflict_answer"]) == ("B", "A", "Toronto")
    assert two["evidence"][0]["label"] == "conflicting" and two["conflict_type"] == "counterfactual"
    one = records[0].metadata
    assert one["evidence"][0]["label"] == "supporting" and one["conflict_option"] is None
    assert len(list(capital_swaps(setting="matching"))) == 3


def test_a_bad_record_names_the_file_record_and_field(tmp_path):
    from conflict_eval import DatasetError

    path = tmp_path / "mine.jsonl"
    path.write_text('{"id": "x-1", "question": "Q?", "options": ["a", "b"], "answer": "C", '
                    '"passage": "p", "passage_answer": "A"}\n')
    with pytest.raises(DatasetError) as err:
        capital_swaps(path=str(path))
    text = str(err.value)
    assert "mine.jsonl" in text and "x-1" in text and "answer" in text


def test_the_metric_by_hand():
    assert summarise([{"followed": 1, "parse_failure": 0, "refusal": 0},
                      {"followed": 0, "parse_failure": 0, "refusal": 0},
                      {"followed": float("nan"), "parse_failure": 0, "refusal": 1},
                      {"followed": float("nan"), "parse_failure": 1, "refusal": 0}]) == {
        "evidence_following": 0.5, "parse_failure_rate": 0.25, "refusal_rate": 0.25}
    # no readable reply: the rate is undefined, never 0
    assert math.isnan(summarise([{"followed": float("nan"), "parse_failure": 1, "refusal": 0}])["evidence_following"])


def test_one_eval_through_the_hooks_with_a_scripted_model(tmp_path):
    """conflict_eval/run picks the metric the dataset declares. The scripted model always
    says VERDICT: A: by hand, the passage supports A in cs-2, cs-3, cs-4 and cs-6
    (supported = conflict_option for a conflicting passage, else gold) -> 4 of 6."""
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "verdict_first", "dataset": "capital_swaps"},
                         model="scripted/x", model_args={"reply": "VERDICT: A\nREASON: the passage."},
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    [score] = log.results.scores
    assert score.name == "evidence_following"
    assert score.metrics["evidence_following"].value == pytest.approx(4 / 6)
    assert score.metrics["parse_failure_rate"].value == 0.0
    assert {s.id: supported_option(__import__("conflict_eval").ConflictQA(**s.metadata)) for s in log.samples} == {
        "cs-1": "B", "cs-2": "A", "cs-3": "A", "cs-4": "A", "cs-5": "C", "cs-6": "A"}


@pytest.mark.slow
def test_one_eval_with_the_offline_model(tmp_path):
    """The offline model runs the plugin's task end to end (one sample, a short reply):
    whatever it says, the sample is scored or counted as unread, never dropped."""
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "verdict_first", "dataset": "capital_swaps"},
                         model="conflict_eval/smollm2", limit=1, max_tokens=12, log_dir=str(tmp_path),
                         display="none")
    assert log.status == "success", log.error
    [sample] = log.samples
    value = sample.scores["evidence_following"].value
    assert value["parse_failure"] + value["refusal"] == 1 or value["followed"] in (0, 1)


def test_the_reader_is_declared_for_conflict_evals_checks():
    """The hook conflict_eval_reply_readers puts the reader in conflict-eval's fuzz list and its
    chain and labelled shapes in the read-as-meant corpus (tests/test_parser_robustness.py,
    tests/test_reply_corpus.py and benchmarks/reply_reading.py run them with the built-ins')."""
    import json

    from conflict_eval.answers.fuzz import adversarial_inputs, check_total
    from conflict_eval.components.manager import reply_readers

    found = reply_readers()
    entry = next(p for p in found.parsers if p.name == "example.read_verdict")
    for text in adversarial_inputs(2_000).values():
        check_total(entry, text)
    chain = next(c for c in found.chains if c.name == "example.read_verdict")
    [shapes] = [s for s in found.shapes if s.parent.parent.name == "conflict_eval_example"]
    rows = [json.loads(line) for line in shapes.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 10 and {r["kind"] for r in rows} == set(chain.kinds)
    for row in rows:  # what each labelled reply means, read by hand
        reading = chain.read(row)
        meaning = row["meaning"]
        if "choice" in meaning:
            assert (reading.status, reading.value) == ("value", meaning["choice"].lower()), row["id"]
        else:
            assert reading.status == ("refusal" if meaning.get("refusal") else "failure"), row["id"]
