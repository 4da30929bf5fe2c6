"""JSON Lines are read and written with the ``jsonlines`` package, through one
shared reader (``conflict_eval.records.read_jsonl``) that keeps the located
messages (file, line, field) and the BOM / CRLF / JSON-array handling
(issue 23, item 5)."""

import json

import jsonlines
import pytest

from conflict_eval.cli import main
from conflict_eval.plugins.demo.dataset import DEMO_FILE, demo
from conflict_eval.records import DataFileError, DatasetError, read_json_or_jsonl, read_jsonl, write_jsonl

ROWS = [json.loads(line) for line in DEMO_FILE.read_text().splitlines() if line.strip()][:3]


def test_the_reader_is_jsonlines(tmp_path, monkeypatch):
    made = []

    class Counting(jsonlines.Reader):
        def __init__(self, *args, **kwargs):
            made.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(jsonlines, "Reader", Counting)
    path = tmp_path / "d.jsonl"
    write_jsonl(path, ROWS)
    assert [r["id"] for r in (row for _, row in read_jsonl(path))] == [r["id"] for r in ROWS]
    assert len(made) == 1


def test_write_then_read_round_trip_keeps_non_ascii(tmp_path):
    rows = [{"id": "é1", "text": "Aschenbrödel – “quoted”"}, {"id": 2, "list": [1, None, True]}]
    path = tmp_path / "rt.jsonl"
    assert write_jsonl(path, rows) == 2
    raw = path.read_text(encoding="utf-8")
    assert "Aschenbrödel" in raw and raw.count("\n") == 2  # UTF-8 as is, one row per line
    assert [row for _, row in read_jsonl(path)] == rows


def test_bom_crlf_and_blank_lines(tmp_path):
    path = tmp_path / "win.jsonl"
    body = "\r\n".join(json.dumps(r) for r in ROWS) + "\r\n\r\n   \r\n"
    path.write_bytes(b"\xef\xbb\xbf" + ("\r\n" + body).encode("utf-8"))
    got = list(read_jsonl(path))
    assert [where for where, _ in got] == ["line 2", "line 3", "line 4"]  # a blank first line is skipped
    assert [row for _, row in got] == ROWS
    assert [s.id for s in demo(path=str(path))] == [r["id"] for r in ROWS]


def test_malformed_lines_are_all_named_with_file_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    bad_field = dict(ROWS[1], question="")
    path.write_text(json.dumps(ROWS[0]) + "\n{not json\nnull\n" + json.dumps(bad_field) + "\n[1, 2]\n")
    with pytest.raises(DatasetError) as err:
        demo(path=str(path))
    message = str(err.value)
    assert message.startswith(f"4 bad record(s) in dataset 'demo' (file {path}):")
    assert ("record at line 2 field '-': invalid JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1)") in message
    assert "record at line 3 field '-': expected an object, got NoneType" in message
    assert f"record {ROWS[1]['id']!r} (line 4) field 'question'" in message
    assert "record at line 5 field '-': expected an object, got list" in message


def test_json_array_and_jsonl_with_json_name(tmp_path):
    array = tmp_path / "rows.json"
    array.write_text(json.dumps(ROWS, indent=2))
    assert [(w, r["id"]) for w, r in read_json_or_jsonl(array)] == [(f"index {i}", r["id"]) for i, r in enumerate(ROWS)]
    lines = tmp_path / "lines.json"
    write_jsonl(lines, ROWS)
    assert [w for w, _ in read_json_or_jsonl(lines)] == ["line 1", "line 2", "line 3"]


def test_empty_and_not_utf8_files_are_named(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    with pytest.raises(DataFileError, match="empty.jsonl: the file is empty"):
        list(read_jsonl(empty))
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(json.dumps(ROWS[0]).encode() + b'\n{"q": "caf\xe9"}\n')
    with pytest.raises(DataFileError, match=r"latin.jsonl: line 2: not UTF-8 text"):
        list(read_jsonl(latin))


def test_score_command_reads_predictions_with_the_shared_reader(tmp_path, capsys):
    preds = tmp_path / "preds.jsonl"
    preds.write_bytes(b"\xef\xbb\xbf" + b'{"predicted": "Paris", "gold": ["Paris"]}\r\n{oops\r\n{"gold": "x"}\r\n')
    assert main(["score", "--metric", "token_f1", str(preds)]) == 2
    err = capsys.readouterr().err
    assert f"error: 2 problem(s) in {preds}:" in err
    assert "line 2: invalid JSON (Expecting property name enclosed in double quotes)" in err
    assert "line 3: field 'predicted' is missing" in err
