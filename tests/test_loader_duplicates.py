"""Every loader rejects a repeated record and an id a log cannot store, naming
the file, the line and the id (``records.build.convert_rows`` and the
``ConflictQA`` id check do it once for all loaders). Fixtures: the hand-made
upstream-format files in tests/fixtures/, with one row repeated."""

import json
from pathlib import Path

import pytest

from conflict_eval.records import DatasetError

FIXTURES = Path(__file__).parent / "fixtures"


def _repeat_first_row(src: Path, dst: Path) -> Path:
    lines = [ln for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip()]
    dst.write_text("\n".join(lines + lines[:1]) + "\n", encoding="utf-8")
    return dst


@pytest.mark.parametrize("loader,fixture", [
    ("conflict_eval.plugins.ramdocs.dataset:load_ramdocs", "ramdocs/mini.jsonl"),
    ("conflict_eval.plugins.conflictqa.dataset:load_conflictqa", "conflictqa/mini.jsonl"),
])
def test_a_repeated_row_is_rejected_naming_file_line_and_id(tmp_path, loader, fixture):
    import importlib

    module, name = loader.split(":")
    load = getattr(importlib.import_module(module), name)
    src = FIXTURES / fixture
    n = len([ln for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip()])
    path = _repeat_first_row(src, tmp_path / "dup.jsonl")
    assert load(src)  # the fixture itself loads
    with pytest.raises(DatasetError) as err:
        load(path)
    text = str(err.value)
    assert str(path) in text and f"line {n + 1}" in text and "duplicate record" in text and "line 1" in text
    assert "-2" in text  # the id the copy would have had


@pytest.mark.parametrize("bad", ["q\x001", "q\x1b1", "q\n1"])
def test_an_id_with_a_control_character_is_rejected(tmp_path, bad):
    from conflict_eval.plugins.atomr.dataset import atomr_hotpotqa

    from .test_loader_errors import ircot_row, write_jsonl

    path = write_jsonl(tmp_path / "hp.jsonl", [ircot_row("q0"), ircot_row(bad)])
    with pytest.raises(DatasetError) as err:
        atomr_hotpotqa(path=str(path))
    text = str(err.value)
    assert str(path) in text and "line 2" in text and repr(bad)[1:-1] in text and "cannot be stored" in text


def test_same_question_with_different_content_still_loads(tmp_path):
    """RAMDocs numbers a repeated question ``-2`` when the rows differ: not a duplicate."""
    from conflict_eval.plugins.ramdocs.dataset import load_ramdocs

    rows = [json.loads(ln) for ln in (FIXTURES / "ramdocs/mini.jsonl").read_text().splitlines() if ln.strip()]
    other = {**rows[0], "gold_answers": rows[0]["gold_answers"] + ["another answer"]}
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [*rows, other]) + "\n")
    ids = [r.id for r in load_ramdocs(path)]
    assert len(ids) == len(rows) + 1 and ids[-1] == ids[0] + "-2"
