"""The core's one reader of its own JSON/YAML files (records.config_files): the
JSON-or-YAML rule, state files read as JSON-or-None, a byte-order mark."""

import pytest

from conflict_eval.records.config_files import ConfigFileError, json_or_none, read_config, read_json


def test_json_or_none_tells_missing_from_broken(tmp_path):
    assert json_or_none(tmp_path / "absent.json") is None
    cut = tmp_path / "cut.json"
    cut.write_text('{"heartbeat": 1', encoding="utf-8")  # cut short by a full disk
    assert json_or_none(cut) is None and json_or_none(cut, unreadable=False) is False
    good = tmp_path / "good.json"
    good.write_text('{"a": [1, 2]}', encoding="utf-8")
    assert json_or_none(good) == {"a": [1, 2]}


def test_read_config_picks_json_by_content_and_names_the_file(tmp_path):
    f = tmp_path / "batch.yaml"
    f.write_text('{"size": 10}', encoding="utf-8")
    assert read_config(f, "--batch x") == {"size": 10}
    f.write_text("size: 10\nsize: 20\n", encoding="utf-8")
    with pytest.raises(ConfigFileError, match=r"--batch x, line 2: .*size"):
        read_config(f, "--batch x")
    with pytest.raises(ConfigFileError, match=r"^cost: no such file$"):
        read_config(tmp_path / "nope.yaml", "cost")


def test_a_byte_order_mark_is_not_an_error(tmp_path):
    """A plan or stop file saved by an editor that writes a UTF-8 BOM reads as its JSON
    (before: 'invalid JSON' at line 1, column 1)."""
    f = tmp_path / "plan.json"
    f.write_bytes(b"\xef\xbb\xbf" + b'{"suite": "s"}')
    assert read_json(f) == {"suite": "s"}
