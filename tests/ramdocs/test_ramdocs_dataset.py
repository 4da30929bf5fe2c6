"""RAMDocs loader: every shared sample record loads with its documents, types
and counts; bad records are reported with file, line and field; no network."""

import json
from pathlib import Path

import pytest

from conflict_eval.records.download import DownloadError
from conflict_eval.plugins.ramdocs.dataset import load_ramdocs, ramdocs
from conflict_eval.components.manager import get_dataset, get_metric
from conflict_eval.records import ConflictQA, DatasetError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ramdocs"
LABELS = {"correct": "supporting", "misinfo": "conflicting", "noise": "irrelevant"}


def test_every_real_record_loads_with_types_and_counts(shared_data):
    path = shared_data / "ramdocs" / "sample.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    dataset = ramdocs(path=str(path))
    assert len(dataset) == len(rows) == 334
    assert len({s.id for s in dataset}) == 334
    for sample, row in zip(dataset, rows):
        record = ConflictQA.model_validate(sample.metadata)
        assert sample.input == row["question"] and sample.target == [a.strip() for a in row["gold_answers"]]  # stripped
        assert [p.text for p in record.evidence] == [d["text"] for d in row["documents"]]
        assert [p.label for p in record.evidence] == [LABELS[d["type"]] for d in row["documents"]]
        types = [d["type"] for d in row["documents"]]
        extra = record.extra
        assert extra["doc_types"] == types
        assert extra["doc_answers"] == [d["answer"] for d in row["documents"]]
        assert (extra["n_correct_docs"], extra["n_misinfo_docs"], extra["n_noise_docs"]) == (
            types.count("correct"), types.count("misinfo"), types.count("noise"))
        assert extra["n_gold"] == len(row["gold_answers"])
        assert extra["ambiguous"] == (len(row["gold_answers"]) >= 2)
        assert extra["wrong_answers"] == [a.strip() for a in row["wrong_answers"]]
        assert record.setting == ("ambiguous" if extra["ambiguous"] else "single_answer")
        assert record.conflict_type == ("misinformation" if "misinfo" in types else "none")
    # the sample's strata (PROVENANCE.md): 267 ambiguous, 67 single-answer
    assert sum(s.metadata["extra"]["ambiguous"] for s in dataset) == 267


def test_registered_and_ids_stable_in_a_subset(shared_data):
    full = ramdocs(path=str(shared_data / "ramdocs" / "sample.jsonl"))
    mini = get_dataset("ramdocs").factory(path=str(FIXTURES / "mini.jsonl"))
    assert [s.id for s in mini] == [full[0].id, full[68].id]  # same question, same id
    assert get_metric("strict_em").name == "strict_em"


def test_bad_records_name_file_line_and_field():
    with pytest.raises(DatasetError) as err:
        load_ramdocs(FIXTURES / "bad.jsonl")
    text = str(err.value)
    assert "bad.jsonl" in text and "line 3" in text
    assert "documents[1].type" in text and "rumour" in text


def test_missing_gold_answers_named():
    row = json.loads((FIXTURES / "mini.jsonl").read_text().splitlines()[0])
    del row["gold_answers"]
    from conflict_eval.records import convert_rows

    from conflict_eval.plugins.ramdocs.dataset import converter
    with pytest.raises(DatasetError, match="gold_answers"):
        convert_rows("ramdocs", [("line 1", row)], converter())


def test_without_path_the_pinned_file_is_wanted_and_offline_says_how():
    with pytest.raises(DownloadError) as err:
        ramdocs()
    assert "d44454c9ebb0bf513d8236a03decc9fb58704cad/RAMDocs_test.jsonl" in str(err.value)
    assert "-T path=" in str(err.value)
