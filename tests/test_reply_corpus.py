"""Every reader reads the labelled reply corpus as meant (issue 32, Deliver 3).

The corpus (``tests/data/reply_corpus/``, see its README) labels, by reading
them, the real replies kept in ``../shared/replies/`` (read there in place;
those tests skip only where that folder is absent) and hand-written replies in
the shapes of issue 32 (with the shapes files units declare). The reading
rules and reader chains are ``benchmarks/reply_reading.py``'s
(``reader_chains()``: every unit's declaration, hook
``conflict_eval_reply_readers``), so the test and the
benchmark's table count the same thing: every reader at 100% read as meant,
0 misread, 0 refused, 0 crashed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("reply_reading", REPO / "benchmarks" / "reply_reading.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("reply_reading", bench)
_spec.loader.exec_module(bench)

REPLIES = REPO.parent / "shared" / "replies"
SECOND = bench.SECOND  # ../shared/replies-2026-11-26 (issue 42, Deliver 6), read in place
# ce_user_needs_2/replies/<run>/ holds byte-identical copies of ce_user_needs_2/<run>/replies/ for these runs
COPIED_RUNS = ("ce-ar", "ce-def", "ce-rr", "ce-sr", "kb")


def _labels(name: str) -> list[dict]:
    with (bench.CORPUS / bench.FILES[name]).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


REAL = _labels("real")
SHAPES = bench.load_corpus("shapes")  # shapes.jsonl and the shapes files units declare
CHAINS = bench.reader_chains()
READ_KINDS = {k for r in CHAINS for k in r.kinds}
FREE_TEXT_KINDS = {"conflictscore.report", "astuterag.internal", "astuterag.consolidate", "polluted_kb.poison"}


def _readers_of(rows: list[dict]) -> list:
    return [r for r in CHAINS if bench.rows_for(r, [dict(row, corpus="x") for row in rows])]


@pytest.fixture(scope="module")
def real_rows(require_shared) -> list[dict]:
    require_shared(REPLIES, "shared replies folder")
    return bench.load_corpus("real", REPLIES)


@pytest.fixture(scope="module")
def second_rows(require_shared) -> list[dict]:
    require_shared(SECOND, "second shared replies folder")
    return bench.load_corpus("second")


def _not_meant(reader, rows: list[dict]) -> list[str]:
    out = []
    for row in bench.rows_for(reader, rows):
        result, reading, error = bench.outcome(reader, row)
        if result != "meant":
            got = error or (reading.reason if reading.status == "failure" else reading.value)
            out.append(f"{result}: {row['id']}: meant {reader.meaning(row)}, read {reading and reading.status} {got!r}")
    return out


# --------------------------------------------------------------------------
# the corpus files


@pytest.mark.parametrize("name", ["real", "shapes"])
def test_corpus_rows_are_well_formed(name):
    rows = SHAPES if name == "shapes" else _labels(name)  # shapes: with every unit's declared shapes
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for r in rows:
        assert r["kind"] in READ_KINDS | FREE_TEXT_KINDS, r["id"]
        keys = [k for k in bench.MEANING_KEYS if k in r["meaning"]]
        assert keys, r["id"]
        if keys[0] == "answer":  # user needs: the answer and, where options are known, the option it names
            assert set(r["meaning"]) <= {"answer", "option"}, r["id"]
        else:
            assert len(r["meaning"]) == 1, r["id"]
        assert ("reply" in r) == (name == "shapes"), r["id"]
        if r["kind"] in FREE_TEXT_KINDS:
            assert r["meaning"] == {"free_text": True}, r["id"]


def test_real_rows_name_replies_relative_to_the_replies_folder():
    for r in REAL:
        assert not Path(r["source"]).is_absolute() and ".." not in Path(r["source"]).parts, r["id"]
        assert r["source"].endswith(".txt") and "/replies/" in "/" + r["source"], r["id"]


def test_every_real_reply_is_labelled_once(real_rows):
    files = {str(p.relative_to(REPLIES)) for p in REPLIES.glob("*/*/*/replies/*.txt")}
    files |= {str(p.relative_to(REPLIES)) for p in REPLIES.glob("*/ce_user_needs_2/replies/*/*.txt")}
    copies = {f for f in files if f.split("/")[1:3] == ["ce_user_needs_2", "replies"] and f.split("/")[3] in COPIED_RUNS}
    for f in copies:  # a copy is labelled under the folder that keeps its prompt
        run, name = f.split("/")[3], f.split("/")[4]
        twin = f"{f.split('/')[0]}/ce_user_needs_2/{run}/replies/{name}"
        assert (REPLIES / f).read_bytes() == (REPLIES / twin).read_bytes(), f
    assert sorted(r["source"] for r in real_rows) == sorted(files - copies)


# --------------------------------------------------------------------------
# the judging rules (hand cases)


def test_judge_rules():
    value, failure, refusal = bench.Reading("value", "b"), bench.Reading("failure", reason="x"), bench.Reading("refusal")
    assert bench.judge({"choice": "B"}, value, True) == "meant"
    assert bench.judge({"choice": "A"}, value, True) == "misread"
    assert bench.judge({"choice": "B"}, failure, True) == "refused"
    assert bench.judge({"choice": "B"}, refusal, True) == "misread"
    assert bench.judge({"unreadable": True}, failure, False) == "meant"
    assert bench.judge({"unreadable": True}, value, False) == "misread"
    assert bench.judge({"refusal": True}, refusal, True) == "meant"
    assert bench.judge({"refusal": True}, failure, True) == "refused"  # a refusal is not a parse failure
    assert bench.judge({"refusal": True}, failure, False) == "meant"  # a reader without refusals: failure is right
    assert bench.judge({"refusal": True}, value, False) == "misread"
    assert bench.norm("“Wulfsige’s farm.”") == bench.norm("wulfsige's farm")
    assert bench.expected({"triplets": [["a", "r", "b"], ["c", "r", "d"]]}) == \
        bench.expected({"triplets": [["C", "r", "d"], ["A", "r", "b"]]})


# --------------------------------------------------------------------------
# every reader at 100% read as meant


@pytest.mark.parametrize("reader", _readers_of(SHAPES), ids=lambda r: r.name)
def test_reader_reads_hand_written_shapes_as_meant(reader):
    rows = [dict(r, corpus="shapes") for r in SHAPES]
    missed = _not_meant(reader, rows)
    assert not missed, f"{len(missed)} of {len(bench.rows_for(reader, rows))} shapes not read as meant:\n" + "\n".join(missed)


@pytest.mark.parametrize("reader", _readers_of(REAL), ids=lambda r: r.name)
def test_reader_reads_real_replies_as_meant(reader, real_rows):
    missed = _not_meant(reader, real_rows)
    assert not missed, f"{len(missed)} of {len(bench.rows_for(reader, real_rows))} replies not read as meant:\n" + "\n".join(missed)


# --------------------------------------------------------------------------
# the second real set (issue 42, Deliver 6): ../shared/replies-2026-11-26/labelled.jsonl, read in place


def test_second_set_rows_are_its_reply_files_and_well_formed(second_rows):
    assert len(second_rows) == 171 + 12  # labelled.jsonl's, and the 12 AtomR replies we labelled (second_added.jsonl)
    assert len({r["id"] for r in second_rows}) == len(second_rows)
    for r in second_rows:
        assert (SECOND / r["source"]).read_text(encoding="utf-8") == r["reply"], r["id"]
        assert r["kind"] in READ_KINDS, r["id"]  # every reply of this set is read by some chain
    files = {str(p.relative_to(SECOND)) for p in SECOND.glob("*/*/replies/*.txt")}
    assert {r["source"] for r in second_rows} <= files


def test_relabels_name_rows_of_the_second_set_and_say_why(second_rows):
    relabelled = [r for r in second_rows if "relabelled" in r]
    with bench.RELABELS.open(encoding="utf-8") as fh:
        assert len(relabelled) == sum(1 for line in fh if line.strip())
    for r in relabelled:
        assert r["meaning"] != r["relabelled"], r["id"]


def _second_labels() -> list[dict]:
    path = SECOND / "labelled.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for file in (path, bench.ADDED) for line in file.open(encoding="utf-8")]


@pytest.mark.parametrize("reader", _readers_of(_second_labels()) or CHAINS[:1], ids=lambda r: r.name)
def test_reader_reads_the_second_real_set_as_meant(reader, second_rows):
    missed = _not_meant(reader, second_rows)
    assert not missed, f"{len(missed)} of {len(bench.rows_for(reader, second_rows))} replies not read as meant:\n" + \
        "\n".join(missed)


# --------------------------------------------------------------------------
# refusals (issue 42, Deliver 4)

#: Answer rows whose answer is itself "it cannot be known": the refusing words
#: are the option or span the writer chose, so find_refusal finding them is right.
ANSWERS_THAT_SAY_UNKNOWN = {
    "conflictscore/run2/221428-9143cf": "IRRELEVANT: the document gives 'not enough information' on the claim",
    "beyond/r3_cqa_counter/120344-0ff75f": "chooses option C, 'Uncertain.'",
    "beyond/r1_madam/120026-d773db": "the agent's answer is 'Unknown'",
}


def test_find_refusal_recognises_every_refusal_phrasing_of_the_corpus():
    from conflict_eval.answers.refusal import find_refusal

    phrasings = [r for r in SHAPES if r["id"].startswith("shape/refusal/")]
    assert len(phrasings) >= 40
    missed = [r["reply"] for r in phrasings if find_refusal(r["reply"]) is None]
    assert not missed, missed


def test_find_refusal_has_no_false_positive_on_the_corpus_answers(real_rows, second_rows):
    from conflict_eval.answers.refusal import find_refusal

    rows = [dict(r, corpus="shapes") for r in SHAPES] + real_rows + second_rows
    answers = [r for r in rows if not {"refusal", "unreadable", "free_text"} & set(r["meaning"])]
    flagged = {r["id"] for r in answers if find_refusal(r["reply"]) is not None}
    assert flagged == set(ANSWERS_THAT_SAY_UNKNOWN), sorted(flagged ^ set(ANSWERS_THAT_SAY_UNKNOWN))
