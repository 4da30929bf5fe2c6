"""docs/plugins.md lists every value of ``Passage.label`` and every field of a record,
so a plugin author need not guess (a guess used to fail with an error naming no record)."""

import re
import typing
from pathlib import Path

from conflict_eval import ConflictQA, Passage

DOC = (Path(__file__).resolve().parents[1] / "docs" / "plugins.md").read_text(encoding="utf-8")


def test_every_passage_label_is_listed():
    labels = typing.get_args(Passage.model_fields["label"].annotation)
    assert labels and all(f"| `{label}` |" in DOC for label in labels), labels


def test_every_record_field_is_listed_and_the_required_ones_say_so():
    rows = dict(re.findall(r"^\| `(\w+)` \| (yes|no|with `options`) \|", DOC, flags=re.M))
    assert set(rows) == set(ConflictQA.model_fields)
    required = {name for name, f in ConflictQA.model_fields.items() if f.is_required()}
    assert {name for name, req in rows.items() if req == "yes"} == required
