"""KRE loaders on the real records in ../shared/data (every record must load)."""

import json
import shutil

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.records.download import DownloadError
from conflict_eval.plugins.kre.dataset import KRE_COMMIT, kre_ecare, kre_ecqa, kre_musique, load_kre
from conflict_eval.components.manager import get_dataset
from conflict_eval.records import ConflictQA, DatasetError
from conflict_eval.testing import scripted_model


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name,factory,n_options", [("kre_ecqa", kre_ecqa, 5), ("kre_ecare", kre_ecare, 2)])
@pytest.mark.parametrize("setting", ["conflict", "conflict_free"])
def test_every_real_record_loads(shared_data, name, factory, n_options, setting):
    path = shared_data / name / "sample.jsonl"
    rows = _rows(path)
    dataset = factory(path=str(path), setting=setting)
    assert len(dataset) == len(rows) == 400
    assert len({s.id for s in dataset}) == 400
    for sample, row in zip(dataset, rows):
        record = ConflictQA.model_validate(sample.metadata)
        assert record.question == row["question"] and record.options == row["choices"]
        assert len(record.options) == n_options
        assert sample.target == row["answer"] == record.gold_option
        [passage] = record.evidence
        if setting == "conflict":
            assert passage.text == row["negative_context"] and passage.label == "conflicting"
            assert record.conflict_option == row["candidate"]
            assert record.conflict_answer == row["negative_answer"]
            assert record.conflict_type == "counterfactual"
        else:
            assert passage.text == row[" golden_context"] and passage.label == "supporting"
            assert record.conflict_option is None and record.conflict_type == "none"
        assert record.setting == setting


def test_first_ecqa_record_by_hand(shared_data):
    # line 1 of kre_ecqa/sample.jsonl, read by eye
    first = kre_ecqa(path=str(shared_data / "kre_ecqa" / "sample.jsonl"), limit=1)[0]
    record = ConflictQA.model_validate(first.metadata)
    assert record.question == "Where would you find magazines along side many other printed works?"
    assert record.gold_option == "B" and record.answers == ["bookstore"]
    assert record.conflict_option == "A" and record.conflict_answer == "doctor"
    assert record.evidence[0].text.startswith("Doctors' offices often provide magazines")


def test_upstream_json_array_and_unspaced_key(shared_data, tmp_path):
    rows = _rows(shared_data / "kre_ecare" / "sample.jsonl")[:3]
    array = tmp_path / "ecare.json"
    array.write_text(json.dumps(rows))
    ids_array = [s.id for s in kre_ecare(path=str(array))]
    ids_jsonl = [s.id for s in kre_ecare(path=str(shared_data / "kre_ecare" / "sample.jsonl"), limit=3)]
    assert ids_array == ids_jsonl
    # the authors' README spells the key without the leading space
    renamed = [{("golden_context" if k == " golden_context" else k): v for k, v in r.items()} for r in rows]
    array.write_text(json.dumps(renamed))
    records = load_kre("kre_ecare", array, "conflict_free")
    assert [r.evidence[0].text for r in records] == [r[" golden_context"] for r in rows]


def test_repeated_question_is_rejected_like_every_duplicate(shared_data, tmp_path):
    rows = _rows(shared_data / "kre_ecare" / "sample.jsonl")[:3]
    path = tmp_path / "dupe.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [rows[0], rows[1], rows[2], rows[0]]))
    with pytest.raises(DatasetError) as err:
        kre_ecare(path=str(path))
    [problem] = err.value.problems
    assert problem.field == "id" and problem.message == "duplicate id (2 records: line 1, line 4)"
    assert f"1 bad record(s) in dataset 'kre_ecare' (file {path})" in str(err.value)
    assert problem.record_id.startswith("kre_ecare-")


def test_bad_records_are_all_reported_with_file_record_and_field(shared_data, tmp_path):
    rows = _rows(shared_data / "kre_ecqa" / "sample.jsonl")[:4]
    rows[0]["answer"] = "F"  # only A-E exist
    del rows[1]["negative_context"]
    rows[2]["negative_answer"] = "not an option"
    rows[3]["candidate"] = rows[3]["answer"]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(DatasetError) as err:
        kre_ecqa(path=str(path))
    message = str(err.value)
    assert "kre_ecqa" in message and str(path) in message
    fields = [(p.locator, p.field) for p in err.value.problems]
    assert fields == [("line 1", "answer"), ("line 2", "negative_context"),
                      ("line 3", "negative_answer"), ("line 4", "candidate")]


def test_bad_options_fail_before_loading(tmp_path):
    with pytest.raises(ValueError, match="unknown setting 'matching'"):
        kre_ecqa(path=str(tmp_path / "x.json"), setting="matching")
    with pytest.raises(FileNotFoundError, match="kre_ecqa: no such file"):
        kre_ecqa(path=str(tmp_path / "missing.json"))


def test_default_source_is_the_pinned_upstream_file(shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("CONFLICT_EVAL_CACHE", str(tmp_path))
    with pytest.raises(DownloadError, match="KRE/fb170442ea942439c01cf8d105d935a4b80facc3/dataset/musique.json"):
        kre_musique()
    # a cached copy of the pinned file is used without the network
    cached = tmp_path / "data" / "github" / "yingjiahao14" / "KRE" / KRE_COMMIT / "dataset" / "ecare.json"
    cached.parent.mkdir(parents=True)
    shutil.copy(shared_data / "kre_ecare" / "sample.jsonl", cached)
    assert len(kre_ecare()) == 400


def test_registered_and_runs_through_conflict_eval_run(shared_data, log_dir):
    assert get_dataset("kre_ecqa").plugin == "kre"
    path = str(shared_data / "kre_ecqa" / "sample.jsonl")
    model = scripted_model(["A</a>", "B</a>"])
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "kre_ecqa",
                                                         "path": path}, model=model, limit=2,
                         log_dir=log_dir, display="none")
    assert log.status == "success"
    prompt = model.script.calls[0][-1].text
    assert "Evidence: Doctors' offices often provide magazines" in prompt
    assert "A. doctor\nB. bookstore\nC. market\nD. train station\nE. mortuary" in prompt
    # first item: gold B, reply A = the misleading candidate; second: gold C, reply B = candidate
    by_key = {s.name: s for s in log.results.scores}
    assert by_key["accuracy"].metrics["accuracy"].value == 0.0
    assert by_key["misled"].metrics["mean"].value == 1.0
