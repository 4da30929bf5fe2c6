"""ConflictBank loader on hand-written records in the upstream schema
(tests/fixtures/conflictbank/, labelled there; no real records are available offline)."""

import json

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.records.download import DownloadError
from conflict_eval.plugins.conflictbank.dataset import conflictbank
from conflict_eval.records import ConflictQA, DatasetError
from conflict_eval.testing import scripted_model

FIXTURE = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "conflictbank" / "qa_dataset_handwritten.jsonl"


def _rows():
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()]


def _records(**kw):
    return [ConflictQA.model_validate(s.metadata) for s in conflictbank(path=str(FIXTURE), **kw)]


@pytest.mark.parametrize("conflict_type,key", [
    ("misinformation", "misinformation_conflict_evidence_evidence"),
    ("temporal", "temporal_conflict_evidence"),
    ("semantic", "semantic_conflict_evidence"),
    ("correct", "default_evidence"),
])
def test_each_setting_picks_its_evidence(conflict_type, key):
    rows, records = _rows(), _records(conflict_type=conflict_type)
    assert len(records) == 4
    for row, record in zip(rows, records):
        evidence = row.get(key) or row["misinformation_conflict_evidence"]  # row 4: older key
        assert record.evidence[0].text == evidence
        assert record.question == row["question"] and record.options == row["options"]
        assert record.gold_option == row["correct_option"]
        assert record.setting == conflict_type
        if conflict_type == "correct":
            assert record.conflict_type == "none" and record.conflict_option is None
            assert record.evidence[0].label == "supporting"
        else:
            assert record.conflict_type == conflict_type
            assert record.conflict_option == row["replace_option"]
            assert record.conflict_answer == row["replaced_object"]
            assert record.evidence[0].label == "conflicting"


def test_second_row_by_hand():
    # row 2 of the fixture: options [Imperial, uncertain, King's, Edinburgh], correct C, replace D
    record = _records(conflict_type="temporal")[1]
    assert record.answers == ["King's College, Cambridge"] and record.gold_option == "C"
    assert record.conflict_option == "D" and record.conflict_answer == "University of Edinburgh"
    assert record.evidence[0].source == "wikipedia"
    assert record.extra["temporal_conflict_time_span"] == ["14 June, 2029", "2 February, 2035"]
    assert record.extra["uncertain_option"] == "B"


def test_default_yields_all_four_settings_per_row():
    records = _records()
    assert len(records) == 16
    assert [r.setting for r in records[:4]] == ["misinformation", "temporal", "semantic", "correct"]
    assert len({r.id for r in records}) == 16
    assert records[0].id.endswith("-misinformation") and records[0].source_ids == [records[3].source_ids[0]]
    types = sorted({r.conflict_type for r in records})
    assert types == ["misinformation", "none", "semantic", "temporal"]


def test_bad_records_name_file_record_and_field(tmp_path):
    rows = _rows()
    rows[0]["correct_option"] = "E"
    del rows[1]["temporal_conflict_evidence"]
    rows[2]["replace_option"] = rows[2]["correct_option"]
    rows[3]["options"] = "Charles Babbage"
    path = tmp_path / "QA_dataset.json"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(DatasetError) as err:
        conflictbank(path=str(path))
    assert str(path) in str(err.value) and "conflictbank" in str(err.value)
    assert [(p.locator, p.field) for p in err.value.problems] == [
        ("line 1", "correct_option"), ("line 2", "temporal_conflict_evidence"),
        ("line 3", "replace_option"), ("line 4", "options")]


def test_bad_option_and_offline_download():
    with pytest.raises(ValueError, match="unknown conflict_type 'factual'"):
        conflictbank(path=str(FIXTURE), conflict_type="factual")
    with pytest.raises(DownloadError, match="Warrieryes/CB_qa/QA_dataset.json@main.*-T path"):
        conflictbank()


def test_runs_through_conflict_eval_run(log_dir):
    model = scripted_model(lambda prompt: "C</a>")
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"dataset": "conflictbank", "path": str(FIXTURE),
                                    "conflict_type": "misinformation"},
                         model=model, log_dir=log_dir, display="none")
    assert log.status == "success" and log.results.total_samples == 4
    assert "A. Warsaw\nB. Kraków\nC. Lyon\nD. uncertain" in model.script.calls[0][-1].text
    # always "C": gold letters A, C, B, D -> 1 of 4 right; replace letters C, D, A, B -> 1 of 4 misled
    by_key = {s.name: s for s in log.results.scores}
    assert by_key["accuracy"].metrics["accuracy"].value == pytest.approx(1 / 4)
    assert by_key["misled"].metrics["mean"].value == pytest.approx(1 / 4)


def test_all_settings_in_one_run_give_the_per_type_breakdown(log_dir):
    [log] = inspect_eval("conflict_eval/run", task_args={"dataset": "conflictbank", "path": str(FIXTURE)},
                         model=scripted_model(lambda prompt: "A</a>"), log_dir=log_dir, display="none")
    assert log.results.total_samples == 16
    by_key = {s.name: {m.name: m.value for m in s.metrics.values()} for s in log.results.scores}
    # always "A"; per row gold A, C, B, D and replace C, D, A, B, in each of the 4 settings:
    # accuracy 1/4 in every group; misled 1/4 (row 3) in each conflict group, 0 in "none" (no
    # conflict option); overall accuracy 4/16 = 0.25, misled 3/16 = 0.1875
    for group in ("misinformation", "temporal", "semantic", "none"):
        assert by_key["accuracy"][group] == pytest.approx(0.25)
        assert by_key["misled"][group] == pytest.approx(0.0 if group == "none" else 0.25)
    assert by_key["accuracy"]["accuracy"] == pytest.approx(0.25)
    assert by_key["misled"]["mean"] == pytest.approx(3 / 16)
