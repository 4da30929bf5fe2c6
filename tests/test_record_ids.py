"""A runaway record id is rejected at load, naming the record (issue 23, item 5)."""

import json

import pytest

from conflict_eval.plugins.demo.dataset import DEMO_FILE, demo
from conflict_eval.records import MAX_ID_CHARS, ConflictQA, DatasetError, as_id, BadField


def _demo_rows():
    return [json.loads(line) for line in DEMO_FILE.read_text().splitlines() if line.strip()]


def test_a_20_mb_id_is_rejected_naming_line_and_field(tmp_path):
    rows = _demo_rows()[:3]
    rows[1]["id"] = "x" * 20_000_000
    path = tmp_path / "big_id.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DatasetError) as err:
        demo(path=str(path))
    message = str(err.value)
    assert len(message) < 600  # the id itself is not repeated into the message
    assert f"1 bad record(s) in dataset 'demo' (file {path})" in message
    assert (f"record at line 2 field 'id': id is 20,000,000 characters long (starts '{'x' * 40}'); "
            f"record ids may be at most {MAX_ID_CHARS} characters") in message


def test_the_limit_is_inclusive(tmp_path):
    rows = _demo_rows()[:2]
    rows[0]["id"] = "a" * MAX_ID_CHARS
    rows[1]["id"] = "b" * (MAX_ID_CHARS + 1)
    path = tmp_path / "ids.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DatasetError) as err:
        demo(path=str(path))
    [problem] = err.value.problems
    assert problem.locator == "line 2" and problem.field == "id"


def test_converter_made_ids_are_checked_too():
    with pytest.raises(ValueError, match=f"record ids may be at most {MAX_ID_CHARS} characters"):
        ConflictQA(id="q" * (MAX_ID_CHARS + 1), dataset="d", question="Q?", answers=["a"])
    with pytest.raises(BadField, match="id is 1,001 characters long"):
        as_id("z" * 1001, "id")
    assert as_id(12, "id") == "12"
