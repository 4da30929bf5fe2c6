"""Conversions into the three context settings: real HotpotQA and KRE rows,
a hand-written DisentQA CSV, and located errors for bad records."""

import json

import pytest

from conflict_eval.records.download import DownloadError
from conflict_eval.plugins.user_needs.dataset import (
    disentqa_items, hotpotqa_items, kre_items, read_csv, user_needs_disentqa, user_needs_hotpotqa,
    user_needs_kre_ecare)
from conflict_eval.records import DatasetError, read_jsonl

FIXTURE = "tests/fixtures/user_needs/disentqa_handwritten.csv"


def test_hotpotqa_conversion_on_real_rows(shared_data):
    path = shared_data / "hotpotqa_ircot" / "sample.jsonl"
    raw = [json.loads(l) for l in path.open()]
    items = hotpotqa_items(read_jsonl(path), file=str(path))
    yes_no = [r for r in raw if r["answers_objects"][0]["spans"][0].lower() in ("yes", "no")]
    assert 0 < len(items) <= len(raw) - len(yes_no)
    first = raw[0]
    item = next(i for i in items if i.id == first["question_id"])
    assert item.question == first["question_text"] and item.answers == ("Animorphs",)
    supporting = [c for c in first["contexts"] if c["is_supporting"]]
    assert item.match_context == " ".join(f"{c['title']}: {c['paragraph_text'].strip()}" for c in supporting)
    sub = item.manipulated_answers[0]
    assert sub != "Animorphs" and "Animorphs" not in item.conflict_context and sub in item.conflict_context
    assert item.conflict_context == item.match_context.replace("Animorphs", sub)
    assert item.keys == {c["title"] for c in first["contexts"]}
    # seeded substitution
    assert hotpotqa_items(read_jsonl(path))[0].manipulated_answers == items[0].manipulated_answers


def test_hotpotqa_grid_never_uses_related_passages(shared_data):
    path = shared_data / "hotpotqa_ircot" / "sample.jsonl"
    items = {i.id: i for i in hotpotqa_items(read_jsonl(path))}
    owner = {}
    for i in items.values():
        owner[i.match_context] = owner[i.conflict_context] = i
    ds = user_needs_hotpotqa(path=str(path), limit=3, n_contexts="4", setting="irrelevant",
                             user_need="context_exclusive")
    assert len(ds) == 3
    for s in ds:
        assert s.target == ["I don't know"]
        me = items[s.metadata["extra"]["question_id"]]
        for p in s.metadata["evidence"]:
            assert p["label"] == "irrelevant"
            other = owner[p["text"]]  # every distractor is another question's (manipulated) knowledge
            assert other.id != me.id and not (other.keys & me.keys)


def test_kre_conversion_on_real_rows(shared_data):
    path = shared_data / "kre_ecqa" / "sample.jsonl"
    [item, *_] = kre_items("kre_ecqa", read_jsonl(path), file=str(path))
    assert item.id == "kre_ecqa-1"
    assert item.question == ("Where would you find magazines along side many other printed works? "
                             "Options: doctor; bookstore; market; train station; mortuary.")
    assert item.answers == ("bookstore",) and item.manipulated_answers == ("doctor",)
    assert item.match_context == "magazine available in bookstore"
    assert item.conflict_context.startswith("Doctors' offices often provide magazines")


def test_kre_ecare_grid_on_real_rows(shared_data):
    ds = user_needs_kre_ecare(path=str(shared_data / "kre_ecare" / "sample.jsonl"), limit=1, n_contexts="2")
    by_id = {s.id: s for s in ds}
    assert len(by_id) == 9
    assert by_id["kre_ecare-1|n=2|matching|memory_first"].target == ["The woman gave birth to a child."]
    assert by_id["kre_ecare-1|n=2|conflict|context_first"].target == [
        "The baby feels the awareness through physical sensations."]


def test_bad_kre_rows_name_file_record_and_field(tmp_path):
    good = {"question": "q?", "answer": "A", "negative_answer": "y", "candidate": "B",
            " golden_context": "g", "negative_context": "n", "choices": ["x", "y"]}
    bad1 = {k: v for k, v in good.items() if k != " golden_context"}
    bad2 = {**good, "negative_answer": "z"}
    path = tmp_path / "kre.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (good, bad1, bad2)) + "\n")
    with pytest.raises(DatasetError) as err:
        kre_items("kre_ecqa", read_jsonl(path), file=str(path))
    msg = str(err.value)
    assert str(path) in msg and "2 bad record" in msg
    assert "record at line 2 field ' golden_context'" in msg and "record at line 3 field 'negative_answer'" in msg


def test_disentqa_pairs_factual_and_counterfactual_rows():
    items = disentqa_items(read_csv(FIXTURE), file=FIXTURE)
    # the Mars question has no counterfactual row -> skipped
    assert [(i.question, i.answers, i.manipulated_answers) for i in items] == [
        ("who wrote the novel moby dick", ("Herman Melville",), ("Mark Twain",)),
        ("what is the capital of australia", ("Canberra",), ("Sydney",))]
    assert items[1].conflict_context == "Sydney is the capital city of Australia."
    ds = user_needs_disentqa(path=FIXTURE, n_contexts="1,2")
    assert len(ds) == 2 * 2 * 9


def test_disentqa_without_path_says_where_the_data_lives():
    with pytest.raises(ValueError, match="docs.google.com"):
        user_needs_disentqa()


def test_disentqa_missing_column(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("question,context,type\nq,c,factual\n")
    with pytest.raises(DatasetError, match="parametric_answer"):
        disentqa_items(read_csv(path), file=str(path))


def test_download_is_refused_offline_with_path_hint():
    with pytest.raises(DownloadError, match="-T path="):
        user_needs_hotpotqa()


def test_bad_options_fail_fast(shared_data):
    path = str(shared_data / "kre_ecare" / "sample.jsonl")
    with pytest.raises(ValueError, match="setting must be one of"):
        user_needs_kre_ecare(path=path, setting="conflicting")
    with pytest.raises(ValueError, match="n_contexts"):
        user_needs_kre_ecare(path=path, n_contexts="one,two")
    with pytest.raises(ValueError, match="limit"):
        user_needs_kre_ecare(path=path, limit=0)
