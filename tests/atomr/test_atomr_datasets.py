"""AtomR dataset loaders on the real samples in ../shared/data, and their error reports."""

import json

import pytest

from conflict_eval.plugins.atomr.dataset import (
    atomr_2wiki, atomr_blendqa, atomr_crag, atomr_hotpotqa, atomr_musique, musique_hops,
)
from conflict_eval.records import ConflictQA, DatasetError


def records(ds):
    return [ConflictQA(**s.metadata) for s in ds]


def test_hotpotqa_ircot(shared_data):
    path = shared_data / "hotpotqa_ircot" / "sample.jsonl"
    ds = atomr_hotpotqa(path=str(path))
    assert len(ds) == 333
    r = records(ds)[0]
    assert r.id == "5a85ea095542994775f606a8" and r.answers == ["Animorphs"]
    assert r.question.startswith("What science fantasy young adult series")
    raw = json.loads(path.open(encoding="utf-8").readline())
    assert [p.text for p in r.evidence] == [c["paragraph_text"] for c in raw["contexts"]]
    assert {p.title for p in r.evidence if p.label == "supporting"} == {"The Hork-Bajir Chronicles", "Animorphs"}
    assert r.extra["source_files"] == {"text": str(path)} and r.extra["category"] is None
    assert ds[0].target == ["Animorphs"]


def test_2wiki_atomr_with_type_categories(shared_data):
    path = str(shared_data / "2wikimultihopqa_atomr" / "sample.jsonl")
    r = records(atomr_2wiki(path=path))[0]
    assert (r.question, r.answers, r.extra["category"]) == (
        "Who is the father-in-law of Queen Hyojeong?", ["Crown Prince Hyomyeong"], "inference")
    assert r.extra["source_files"] == {}
    assert len(atomr_2wiki(path=path, category="comparison")) == 79  # PROVENANCE: 79 comparison


def test_musique_both_formats_and_hops(shared_data):
    atomr_file = str(shared_data / "musique_atomr" / "sample.jsonl")
    assert len(atomr_musique(path=atomr_file, category="3hop")) == 81 + 21  # 3hop1 + 3hop2
    official = str(shared_data / "musique_hipporag" / "sample.jsonl")
    r = records(atomr_musique(path=official))[0]
    assert r.answers == ["G. Stanley Hall", "Stanley Hall"] and r.extra["category"] == "2hop"
    assert r.extra["source_files"] == {"text": official} and len(r.evidence) == 20
    assert musique_hops("4hop3__1_2_3_4") == "4hop"


def test_crag_both_formats(shared_data):
    r = records(atomr_crag(path=str(shared_data / "crag_atomr" / "sample.jsonl")))[0]
    assert (r.answers, r.extra["category"]) == (["561.32"], "simple_w_condition")
    example = str(shared_data / "crag_example" / "sample.jsonl")
    r = records(atomr_crag(path=example))[0]
    assert r.question == "what is the other language between heaven and hell came out in originally?"
    assert r.answers == ["en"] and r.extra["source_files"] == {"web": example}


def test_blendqa_categories(shared_data):
    path = str(shared_data / "blendqa" / "sample.jsonl")
    ds = atomr_blendqa(path=path)
    assert len(ds) == 297
    r = records(ds)[0]
    assert r.id == "type1_k2w-0" and r.extra["category"] == "KG-Web"
    assert r.extra["source_files"] == {"text": [path], "kg": [path]}
    # PROVENANCE: type_t2k 109; type1_w2t 49 + type2_t2w 51
    assert len(atomr_blendqa(path=path, category="KG-Text")) == 109
    assert len(atomr_blendqa(path=path, category="Text-Web")) == 100


def test_bad_records_are_reported_with_file_record_and_field(tmp_path):
    f = tmp_path / "blend.jsonl"  # hand-written, BlendQA schema
    f.write_text('{"index": 0, "type": "type9_x", "question": "Q?", "answers": ["a"]}\n'
                 '{"index": 1, "type": "type_t2k", "question": "", "answers": ["a"]}\n'
                 '{"index": 2, "type": "type_t2k", "question": "Q?", "answers": []}\n')
    with pytest.raises(DatasetError) as exc:
        atomr_blendqa(path=str(f))
    msg = str(exc.value)
    assert "3 bad record(s) in dataset 'atomr_blendqa'" in msg and str(f) in msg
    assert "line 1) field 'type': unknown BlendQA type 'type9_x'" in msg
    assert "line 2) field 'question'" in msg and "line 3) field 'answers'" in msg
    with pytest.raises(FileNotFoundError, match="atomr_crag: no such file"):
        atomr_crag(path=str(tmp_path / "missing.jsonl"))


def test_default_download_is_refused_offline():
    from conflict_eval.records.download import DownloadError

    with pytest.raises(DownloadError, match="-T path="):
        atomr_2wiki()
