"""Loaders on malformed input: a located error (file, record, field) or correct
records, never a traceback from deep inside a converter.

Every fixture is hand-written here in the upstream format of its dataset
(IRCoT HotpotQA, official MuSiQue, AtomR 2Wiki/CRAG, KRE, DisentQA CSV as
pandas writes it, URAQ generator output, AmbigDocs, MacNoise, the polluted
KB file); none is real data.
"""

import csv
import json
import sys

import pytest

from conflict_eval.records import DataFileError, DatasetError

# ---------------------------------------------------------------- fixtures


def ircot_row(qid="q1", spans=("Paris",), **over):
    row = {"question_id": qid, "question_text": "What is the capital of France?",
           "answers_objects": [{"number": "", "date": {"day": "", "month": "", "year": ""},
                                "spans": list(spans)}],
           "contexts": [{"id": "0", "title": "France", "is_supporting": True,
                         "paragraph_text": "Paris is the capital of France."},
                        {"id": "1", "title": "Lyon", "is_supporting": False,
                         "paragraph_text": "Lyon is a city in France."}]}
    return {**row, **over}


def musique_row(**over):
    row = {"id": "2hop__1_2", "question": "Who founded the company that made X?",
           "answer": "Ada", "answer_aliases": ["Ada L."], "answerable": True,
           "paragraphs": [{"idx": 0, "title": "X", "paragraph_text": "X was made by Y Corp.",
                           "is_supporting": True},
                          {"idx": 1, "title": "Y Corp", "paragraph_text": "Y Corp was founded by Ada.",
                           "is_supporting": True}]}
    return {**row, **over}


def kre_row(**over):
    row = {"question": "Where do fish live?", "choices": ["water", "desert", "sky"],
           "answer": "A", "candidate": "B", "negative_answer": "desert",
           " golden_context": "Fish live in water.", "negative_context": "Fish live in the desert."}
    return {**row, **over}


def write_jsonl(path, rows, bom=False):
    text = "".join(json.dumps(r) + "\n" for r in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


DISENTQA_HEADER = ["", "question", "context", "parametric_answer", "contextual_answer", "answerable",
                   "type", "input", "output"]


def disentqa_rows(context="Moby-Dick is an 1851 novel by American writer Herman Melville."):
    q = "who wrote the novel moby dick"
    return [
        [0, q, context, "Herman Melville", "Herman Melville", True, "factual",
         f"question: {q}?\ncontext: {context}", "contextual: Herman Melville\nparametric: Herman Melville"],
        [1, q, "Moby-Dick is an 1851 novel by American writer Mark Twain.", "Herman Melville", "Mark Twain",
         True, "counterfactual", f"question: {q}?\ncontext: ...", "contextual: Mark Twain\nparametric: Herman Melville"],
        [2, q, "", "Herman Melville", "unanswerable", False, "closed_book",
         f"question: {q}?\ncontext: ", "contextual: unanswerable\nparametric: Herman Melville"],
    ]


def two_disentqa_questions():
    q = "what is the capital of australia"
    return disentqa_rows() + [
        [3, q, "Canberra is the capital city of Australia.", "Canberra", "Canberra", True, "factual", q, "o"],
        [4, q, "Sydney is the capital city of Australia.", "Canberra", "Sydney", True, "counterfactual", q, "o"]]


def write_csv(path, rows, bom=False):
    with open(path, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(DISENTQA_HEADER)
        w.writerows(rows)
    return path


def kb_data():
    meta = {"source": "hotpot.jsonl", "source_sha256": "0" * 64, "model": "scripted", "seed": 0,
            "types": ["I"], "limit": None, "n_source_records": 2, "n_duplicate_paragraphs": 0,
            "generate": {}}
    docs = [{"id": "d0", "title": "France", "text": "Paris is the capital of France.", "origin": "clean"},
            {"id": "d1", "title": "Italy", "text": "Rome is the capital of Italy.", "origin": "clean"},
            {"id": "d2", "title": "France", "text": "Lyon is the capital of France.", "origin": "I",
             "question_id": "q1", "derived_from": "d0"}]
    questions = [{"id": "q1", "question": "What is the capital of France?", "answers": ["Paris"],
                  "supporting_ids": ["d0"], "target": "Lyon", "injected": {"I": ["d2"]}},
                 {"id": "q2", "question": "What is the capital of Italy?", "answers": ["Rome"],
                  "supporting_ids": ["d1"], "target": "Milan"}]
    return {"format": "conflict_eval.polluted_kb/1", "meta": meta, "documents": docs, "questions": questions}


def problems(err):
    return [(p.record_id, p.locator, p.field) for p in err.value.problems]


# ---------------------------------------------------------------- AtomR loaders


def test_hotpotqa_non_object_answer_is_located(tmp_path):
    from conflict_eval.plugins.atomr.dataset import atomr_hotpotqa

    path = write_jsonl(tmp_path / "hp.jsonl", [ircot_row(), ircot_row("q2", answers_objects=[1])])
    with pytest.raises(DatasetError) as err:
        atomr_hotpotqa(path=str(path))
    assert problems(err) == [("q2", "line 2", "answers_objects[0]")]
    assert str(path) in str(err.value) and "expected an object, got int 1" in str(err.value)


def test_hotpotqa_spans_as_a_string_is_an_error_not_letters(tmp_path):
    from conflict_eval.plugins.atomr.dataset import atomr_hotpotqa

    row = ircot_row("q2")
    row["answers_objects"][0]["spans"] = "Paris"
    path = write_jsonl(tmp_path / "hp.jsonl", [ircot_row(), row])
    with pytest.raises(DatasetError) as err:
        atomr_hotpotqa(path=str(path))
    assert problems(err) == [("q2", "line 2", "answers_objects[0].spans")]
    assert "expected a list of strings, got a string 'Paris'" in str(err.value)


def test_null_id_is_an_error_not_the_string_none(tmp_path):
    from conflict_eval.plugins.atomr.dataset import atomr_2wiki, atomr_hotpotqa

    path = write_jsonl(tmp_path / "hp.jsonl", [ircot_row(), ircot_row(None)])
    with pytest.raises(DatasetError) as err:
        atomr_hotpotqa(path=str(path))
    assert problems(err) == [("line 2", "line 2", "question_id")]
    assert "record at line 2 field 'question_id': expected a non-empty string or integer id, got None" \
        in str(err.value)
    wiki = write_jsonl(tmp_path / "2wiki.jsonl", [
        {"question_id": None, "question": "Who?", "answers": ["Ada"], "type": "comparison"}])
    with pytest.raises(DatasetError, match="field 'question_id'.*got None"):
        atomr_2wiki(path=str(wiki))


def test_hotpotqa_context_without_id_keeps_a_position_id_not_none(tmp_path):
    from conflict_eval.plugins.atomr.dataset import atomr_hotpotqa

    row = ircot_row()
    del row["contexts"][1]["id"]
    [sample] = atomr_hotpotqa(path=str(write_jsonl(tmp_path / "hp.jsonl", [row])))
    assert [p["id"] for p in sample.metadata["evidence"]] == ["0", "1"]
    assert sample.target == ["Paris"]


def test_duplicate_question_ids_name_both_lines(tmp_path):
    from conflict_eval.plugins.atomr.dataset import atomr_hotpotqa

    path = write_jsonl(tmp_path / "hp.jsonl", [ircot_row("q1"), ircot_row("q2"), ircot_row("q1")])
    with pytest.raises(DatasetError) as err:
        atomr_hotpotqa(path=str(path))
    assert problems(err) == [("q1", "line 1", "id")]
    assert "duplicate id (2 records: line 1, line 3)" in str(err.value)


def test_musique_paragraph_without_text_is_located(tmp_path):
    from conflict_eval.plugins.atomr.dataset import atomr_musique

    row = musique_row()
    del row["paragraphs"][1]["paragraph_text"]
    path = write_jsonl(tmp_path / "musique.jsonl", [row])
    with pytest.raises(DatasetError) as err:
        atomr_musique(path=str(path))
    assert problems(err) == [("2hop__1_2", "line 1", "paragraphs[1].paragraph_text")]
    assert "field is missing" in str(err.value) and str(path) in str(err.value)


def test_musique_aliases_as_a_string_is_an_error(tmp_path):
    from conflict_eval.plugins.atomr.dataset import atomr_musique

    path = write_jsonl(tmp_path / "musique.jsonl", [musique_row(answer_aliases="Ada L.")])
    with pytest.raises(DatasetError) as err:
        atomr_musique(path=str(path))
    assert problems(err) == [("2hop__1_2", "line 1", "answer_aliases")]
    # a well-formed record: gold answers are the answer and its aliases, whole
    [sample] = atomr_musique(path=str(write_jsonl(tmp_path / "ok.jsonl", [musique_row()])))
    assert sample.target == ["Ada", "Ada L."]


def test_atomr_answers_must_be_a_list_of_strings(tmp_path):
    from conflict_eval.plugins.atomr.dataset import atomr_2wiki, atomr_crag

    wiki = write_jsonl(tmp_path / "2wiki.jsonl", [
        {"question_id": "w1", "question": "Who?", "answers": "Ada", "type": "comparison"},
        {"question_id": "w2", "question": "Who?", "answers": ["Ada", 7], "type": "comparison"}])
    with pytest.raises(DatasetError) as err:
        atomr_2wiki(path=str(wiki))
    assert problems(err) == [("w1", "line 1", "answers"), ("w2", "line 2", "answers[1]")]
    crag = write_jsonl(tmp_path / "crag.jsonl", [
        {"interaction_id": "c1", "query": "Q?", "answer": "A", "alternative_answers": "B",
         "question_type": "simple", "search_results": []}])
    with pytest.raises(DatasetError, match="record 'c1'.*field 'alternative_answers': not a JSON list"):
        atomr_crag(path=str(crag))


# ---------------------------------------------------------------- user needs


def test_disentqa_field_over_the_csv_default_limit_loads(tmp_path):
    from conflict_eval.plugins.user_needs.dataset import disentqa_items, read_csv

    assert csv.field_size_limit() == 131072
    long_context = "Moby-Dick is an 1851 novel by American writer Herman Melville. " + "x" * 200_000
    path = write_csv(tmp_path / "disentqa.csv", disentqa_rows(long_context))
    [item] = disentqa_items(read_csv(path), file=str(path))
    assert item.match_context == long_context and item.manipulated_answers == ("Mark Twain",)
    assert csv.field_size_limit() == 131072  # restored


def test_disentqa_unknown_type_names_the_row(tmp_path):
    from conflict_eval.plugins.user_needs.dataset import user_needs_disentqa

    rows = disentqa_rows()
    rows[2][6] = "closedbook"
    path = write_csv(tmp_path / "disentqa.csv", rows)
    with pytest.raises(DatasetError) as err:
        user_needs_disentqa(path=str(path))
    # header = line 1; each row spans three lines (its input and output cells hold
    # one newline each), so the third row starts on line 8
    assert problems(err) == [("line 8", "line 8", "type")]
    assert "unknown DisentQA row type 'closedbook'" in str(err.value) and str(path) in str(err.value)


def test_disentqa_known_unused_types_are_counted_in_the_log(tmp_path, caplog):
    from conflict_eval.plugins.user_needs.dataset import disentqa_items, read_csv

    path = write_csv(tmp_path / "disentqa.csv", disentqa_rows())
    with caplog.at_level("WARNING"):
        assert len(disentqa_items(read_csv(path), file=str(path))) == 1
    assert "1 closed_book" in caplog.text


def test_disentqa_malformed_csv_names_file_and_line(tmp_path):
    from conflict_eval.plugins.user_needs.dataset import user_needs_disentqa

    path = tmp_path / "disentqa.csv"
    path.write_text(",".join(DISENTQA_HEADER) + "\n0,q,c,a,a,True,factual,i,o,EXTRA\n")
    with pytest.raises(DataFileError, match=r"disentqa.csv: line 2: more fields than the header"):
        user_needs_disentqa(path=str(path))


def test_user_needs_kre_accepts_both_golden_context_keys(tmp_path):
    from conflict_eval.plugins.user_needs.dataset import user_needs_kre_ecqa

    rows = [kre_row(question=f"Where do fish of kind {i} live?", **{" golden_context": f"Fish {i} live in water.",
                    "negative_context": f"Fish {i} live in the desert."}) for i in range(3)]
    spaced = write_jsonl(tmp_path / "spaced.jsonl", rows)
    plain = write_jsonl(tmp_path / "plain.jsonl", [
        {("golden_context" if k == " golden_context" else k): v for k, v in row.items()} for row in rows])
    a = user_needs_kre_ecqa(path=str(spaced), n_contexts="1", setting="matching", max_context_tokens=None)
    b = user_needs_kre_ecqa(path=str(plain), n_contexts="1", setting="matching", max_context_tokens=None)
    assert [s.input for s in a] == [s.input for s in b]
    assert any(p["text"] == "Fish 0 live in water." for s in a for p in s.metadata["evidence"])


def test_uraq_null_id_and_the_generate_command_in_the_error(tmp_path):
    from conflict_eval.plugins.user_needs.dataset import user_needs_uraq

    row = {"id": None, "question": "Q?", "original_answer": "A", "manipulated_answer": "B",
           "original_knowledge": "K says A.", "manipulated_knowledge": "K says B."}
    with pytest.raises(DatasetError, match="record at line 1 field 'id'.*got None"):
        user_needs_uraq(path=str(write_jsonl(tmp_path / "uraq.jsonl", [row])))
    with pytest.raises(ValueError) as err:
        user_needs_uraq()
    assert "conflict-eval user-needs generate" in str(err.value) and "uraq generate" not in str(err.value)


def test_user_needs_hotpotqa_spans_as_a_string_is_an_error(tmp_path):
    from conflict_eval.plugins.user_needs.dataset import user_needs_hotpotqa

    row = ircot_row("q9")
    row["answers_objects"][0]["spans"] = "Paris"
    with pytest.raises(DatasetError) as err:
        user_needs_hotpotqa(path=str(write_jsonl(tmp_path / "hp.jsonl", [row])))
    assert problems(err) == [("q9", "line 1", "answers_objects[0].spans")]


# ---------------------------------------------------------------- ConflictBench, polluted KB


def test_ambigdocs_null_qid_is_an_error(tmp_path):
    from conflict_eval.plugins.conflictbench.dataset import conflictbench_ambigdocs

    docs = [{"title": "Cleveland, Wisconsin", "text": "Population 1,485.", "pid": 1, "answer": "1,485"}]
    rows = [{"qid": f"a{i}", "question": "What is the population of Cleveland?", "ambiguous_entity": "Cleveland",
             "documents": docs} for i in range(3)] + [
            {"qid": None, "question": "Q?", "ambiguous_entity": "E", "documents": docs}]
    path = tmp_path / "test.json"
    path.write_text(json.dumps(rows))
    with pytest.raises(DatasetError) as err:
        conflictbench_ambigdocs(path=str(path))
    assert problems(err) == [("index 3", "index 3", "qid")]


def test_macnoise_passage_without_id_has_no_id_not_none(tmp_path):
    from conflict_eval.plugins.conflictbench.dataset import macnoise_records

    rows = [{"question": f"who wrote book {i}?", "answers": [f"Author {i}"],
             "ctxs": [{"title": "Book", "text": f"Book {i} was written by Author {i}.",
                       "text_pert": f"Book {i} was written by Someone {i}."}]} for i in range(3)]
    records = macnoise_records(write_jsonl(tmp_path / "macnoise.jsonl", rows))
    assert {p.id for r in records for p in r.evidence} == {None}
    rows[0]["answers"] = "Author 0"
    with pytest.raises(DatasetError, match="record at line 1 field 'answers': expected a list of strings"):
        macnoise_records(write_jsonl(tmp_path / "bad.jsonl", rows))


def test_polluted_kb_duplicate_question_ids(tmp_path):
    from conflict_eval.kb.format import read_kb

    data = kb_data()
    data["questions"].append({**data["questions"][0], "question": "Capital of France?"})
    path = tmp_path / "kb.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DatasetError) as err:
        read_kb(path)
    assert problems(err) == [("q1", "questions[0]", "id")]
    assert "duplicate question id (2 questions: questions[0], questions[2])" in str(err.value)
    assert str(path) in str(err.value)


# ---------------------------------------------------------------- BOM, empty and missing files


def _same(a, b):
    return [(s.id, s.input, s.target, s.metadata) for s in a] == [(s.id, s.input, s.target, s.metadata) for s in b]


def test_a_utf8_bom_file_loads_identically(tmp_path):
    from conflict_eval.plugins.atomr.dataset import atomr_hotpotqa
    from conflict_eval.plugins.demo.dataset import DEMO_FILE, demo
    from conflict_eval.plugins.kre.dataset import kre_ecqa
    from conflict_eval.plugins.polluted_kb.dataset import polluted_kb
    from conflict_eval.plugins.user_needs.dataset import user_needs_disentqa

    def both(name, write, load):
        """Load the plain file, then the same path rewritten with a BOM."""
        path = tmp_path / name
        write(path, False)
        plain = load(str(path))
        write(path, True)
        assert path.read_bytes().startswith(b"\xef\xbb\xbf")
        bom = load(str(path))
        assert len(plain) > 0 and _same(plain, bom), name

    both("hp.jsonl", lambda p, b: write_jsonl(p, [ircot_row("q1"), ircot_row("q2")], bom=b), atomr_hotpotqa)
    # a JSON array (KRE's upstream shape)
    both("kre.json", lambda p, b: p.write_text(json.dumps([kre_row()]), encoding="utf-8-sig" if b else "utf-8"),
         kre_ecqa)
    # the canonical format
    text = DEMO_FILE.read_text(encoding="utf-8")
    both("demo.jsonl", lambda p, b: p.write_text(text, encoding="utf-8-sig" if b else "utf-8"), demo)
    # CSV
    both("disentqa.csv", lambda p, b: write_csv(p, two_disentqa_questions(), bom=b),
         lambda p: user_needs_disentqa(path=p, n_contexts="1", setting="matching", max_context_tokens=None))
    # the polluted KB (cached per file and mtime: two files; extra.kb_path differs, compare the rest)
    (tmp_path / "kb.json").write_text(json.dumps(kb_data()), encoding="utf-8")
    (tmp_path / "kb_bom.json").write_text(json.dumps(kb_data()), encoding="utf-8-sig")
    a, b = polluted_kb(path=str(tmp_path / "kb.json")), polluted_kb(path=str(tmp_path / "kb_bom.json"))
    assert [(s.id, s.input, s.target) for s in a] == [(s.id, s.input, s.target) for s in b] and len(a) == 2


@pytest.mark.parametrize("content", [b"", b"\n  \n", b"\xef\xbb\xbf", b"\xef\xbb\xbf\n"])
def test_an_empty_file_is_an_error_naming_it(tmp_path, content):
    from conflict_eval.plugins.atomr.dataset import atomr_hotpotqa
    from conflict_eval.plugins.conflictbank.dataset import conflictbank
    from conflict_eval.plugins.demo.dataset import demo
    from conflict_eval.plugins.kre.dataset import kre_ecqa
    from conflict_eval.plugins.polluted_kb.dataset import polluted_kb
    from conflict_eval.plugins.user_needs.dataset import user_needs_disentqa, user_needs_uraq

    cases = [(atomr_hotpotqa, "hp.jsonl", "atomr_hotpotqa"), (kre_ecqa, "kre.json", "kre_ecqa"),
             (demo, "demo.jsonl", "demo"), (conflictbank, "QA_dataset.json", "conflictbank"),
             (user_needs_uraq, "uraq.jsonl", "user_needs_uraq"),
             (user_needs_disentqa, "disentqa.csv", "user_needs_disentqa"),
             (polluted_kb, "kb.json", "polluted_kb")]
    for factory, name, dataset in cases:
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(DataFileError) as err:
            factory(path=str(path))
        assert str(err.value).startswith(f"dataset {dataset!r}: file {path}: ")
        assert "empty" in str(err.value) and "\n" not in str(err.value)


def test_a_file_without_records_is_an_error_naming_it(tmp_path):
    from conflict_eval.plugins.kre.dataset import kre_ecqa
    from conflict_eval.plugins.user_needs.dataset import user_needs_disentqa

    (tmp_path / "kre.json").write_text("[]")
    with pytest.raises(DataFileError, match=rf"dataset 'kre_ecqa': file {tmp_path / 'kre.json'}: no records"):
        kre_ecqa(path=str(tmp_path / "kre.json"))
    write_csv(tmp_path / "d.csv", [])  # header only
    with pytest.raises(DataFileError, match="'user_needs_disentqa'.*d.csv: no records"):
        user_needs_disentqa(path=str(tmp_path / "d.csv"))


def test_not_utf8_is_an_error_naming_the_file(tmp_path):
    from conflict_eval.plugins.atomr.dataset import atomr_hotpotqa

    path = tmp_path / "hp.jsonl"
    path.write_bytes(json.dumps(ircot_row()).encode() + b"\n" + "é".encode("latin-1") + b"\n")
    with pytest.raises(DataFileError, match=rf"'atomr_hotpotqa': file {path}: line 2: not UTF-8 text .*at byte"):
        atomr_hotpotqa(path=str(path))


def test_a_missing_file_is_a_one_line_error_naming_it(tmp_path):
    from conflict_eval.components.manager import get_dataset

    missing = tmp_path / "missing.jsonl"
    for name in ["demo", "kre_ecqa", "conflictbank", "atomr_hotpotqa", "atomr_musique", "atomr_2wiki",
                 "atomr_crag", "atomr_blendqa", "conflictbench_kre", "conflictbench_macnoise",
                 "conflictbench_ambigdocs", "conflictbench_conflictingqa", "user_needs_hotpotqa",
                 "user_needs_kre_ecqa", "user_needs_disentqa", "user_needs_uraq", "polluted_kb"]:
        with pytest.raises(FileNotFoundError) as err:
            get_dataset(name).factory(path=str(missing))
        msg = str(err.value)
        assert str(missing) in msg and "\n" not in msg, (name, msg)
        assert name in msg or "knowledge base" in msg, (name, msg)


# ---------------------------------------------------------------- the CLI


def _run(argv, capsys):
    from conflict_eval.cli import main

    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.err


@pytest.fixture
def bad_files(tmp_path):
    bad = write_jsonl(tmp_path / "bad.jsonl", [ircot_row(), ircot_row("q2", answers_objects=[1])])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    return {"bad": bad, "empty": empty, "missing": tmp_path / "missing.jsonl"}


@pytest.mark.parametrize("case, args, expected", [
    ("unknown option", ["-T", "nope=1"], "unknown option(s) nope"),
    ("bad option value", ["-T", "limit=abc"], "limit must be a positive integer, got 'abc'"),
    ("option without =", ["-T", "limit"], "-T expects name=value"),
    ("unknown dataset", ["--dataset", "nope"], "unknown dataset 'nope'"),
    ("unknown method", ["--method", "nope"], "unknown method 'nope'"),
    ("missing file", ["--dataset", "atomr_hotpotqa", "--path", "{missing}"], "atomr_hotpotqa: no such file {missing}"),
    ("empty file", ["--dataset", "atomr_hotpotqa", "--path", "{empty}"], "file {empty}: the file is empty"),
    ("bad record", ["--dataset", "atomr_hotpotqa", "--path", "{bad}"],
     "record 'q2' (line 2) field 'answers_objects[0]'"),
    ("no network", ["--dataset", "kre_ecqa"], "give a local copy as -T path=FILE"),
])
def test_cli_errors_are_short_with_exit_code_2(case, args, expected, bad_files, capsys):
    args = [a.format(**bad_files) for a in args]
    code, err = _run(["run", "--model", "scripted/x", "--display", "none", *args], capsys)
    assert code == 2, case
    assert err.startswith("error: ") and expected.format(**bad_files) in err, (case, err)
    assert "Traceback" not in err and len(err.splitlines()) <= 5, (case, err)


def test_cli_debug_shows_the_exception(bad_files, capsys):
    from conflict_eval.cli import main

    with pytest.raises(DatasetError):
        main(["--debug", "run", "--dataset", "atomr_hotpotqa", "--path", str(bad_files["bad"]),
              "--model", "scripted/x"])
    with pytest.raises(FileNotFoundError):  # also accepted after the subcommand
        main(["run", "--dataset", "demo", "--path", str(bad_files["missing"]), "--debug"])


def test_cli_internal_errors_are_one_line_with_exit_1(monkeypatch, capsys):
    from conflict_eval.cli import run as cli

    def boom(args):
        raise KeyError("oops")

    monkeypatch.setattr(cli, "cmd_list", boom)
    code, err = _run(["list"], capsys)
    assert code == 1 and "KeyError" in err and "--debug" in err and "Traceback" not in err


def test_cli_process_exit_code_and_stderr(bad_files):
    """The installed console script: exit code 2, a short stderr, and a traceback only with --debug."""
    import subprocess

    cmd = [sys.executable, "-m", "conflict_eval.cli", "run", "--model", "scripted/x",
           "--dataset", "atomr_hotpotqa", "--path", str(bad_files["bad"])]
    plain = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    assert plain.stderr.startswith("error: 1 bad record(s) in dataset 'atomr_hotpotqa'")
    debug = subprocess.run(cmd + ["--debug"], capture_output=True, text=True, timeout=300)
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "DatasetError" in debug.stderr


# ---------------------------------------------------------------- records helpers


def test_an_unchecked_value_shape_is_still_reported_against_its_record():
    from conflict_eval.records import ConflictQA, convert_rows

    def convert(row):  # forgets to check that q is a string
        return ConflictQA(id=row["id"], dataset="d", question=row["q"].strip(), answers=["a"])

    with pytest.raises(DatasetError) as err:
        convert_rows("d", [("line 1", {"id": "ok", "q": "fine?"}), ("line 2", {"id": "r2", "q": 5})], convert,
                     file="f.jsonl")
    assert problems(err) == [("r2", "line 2", "-")]
    assert "unexpected value (AttributeError: 'int' object has no attribute 'strip')" in str(err.value)


def test_common_dataset_options_are_validated():
    from conflict_eval.records import ConflictQA, build_dataset

    recs = [ConflictQA(id="1", dataset="d", question="q", answers=["a"])]
    for bad, msg in [({"limit": "abc"}, "limit must be a positive integer"), ({"limit": 0}, "limit"),
                     ({"shuffle": "maybe"}, "shuffle must be true or false"), ({"seed": "x"}, "seed must be")]:
        with pytest.raises(ValueError, match=msg):
            build_dataset("d", recs, **bad)
    with pytest.raises(DataFileError, match="dataset 'd': file x.jsonl: no records to evaluate"):
        build_dataset("d", [], location="x.jsonl")
    with pytest.raises(DatasetError, match="duplicate id"):
        build_dataset("d", recs + recs)


def test_json_that_is_not_a_list_of_records(tmp_path):
    from conflict_eval.plugins.kre.dataset import kre_ecqa

    (tmp_path / "kre.json").write_text('{"question": "q"}')
    with pytest.raises(DataFileError, match="'kre_ecqa'.*kre.json: expected a JSON list of records, got a dict"):
        kre_ecqa(path=str(tmp_path / "kre.json"))
    (tmp_path / "kre.json").write_text('[{"question": "q"},\n{"question": ')
    with pytest.raises(DataFileError, match="'kre_ecqa'.*kre.json: line 2: invalid JSON"):
        kre_ecqa(path=str(tmp_path / "kre.json"))


# ---------------------------------------------------------------- hostile JSON


def test_lone_surrogates_deep_nesting_and_huge_integers_are_located(tmp_path):
    from conflict_eval.plugins.kre.dataset import kre_ecqa

    path = tmp_path / "kre.jsonl"
    path.write_text(json.dumps(kre_row()) + "\n"
                    + json.dumps(kre_row(choices=["water", "des\ud800ert", "sky"])) + "\n"
                    + "[" * 100_000 + "\n"
                    + '{"question": ' + "1" * 5000 + "}\n")
    with pytest.raises(DatasetError) as err:
        kre_ecqa(path=str(path))
    assert problems(err) == [("line 2", "line 2", "choices[1]"), ("line 3", "line 3", "-"),
                             ("line 4", "line 4", "-")]
    msg = str(err.value)
    assert "unpaired surrogate" in msg and "nested too deeply" in msg and "4300 digits" in msg
    msg.encode("utf-8")  # the message itself is printable
    (tmp_path / "deep.json").write_text("[" * 100_000)
    with pytest.raises(DataFileError, match="deep.json: invalid JSON .nested too deeply"):
        kre_ecqa(path=str(tmp_path / "deep.json"))


LOADER_CASES = {
    "atomr_hotpotqa": ("hp.jsonl", lambda: [ircot_row("q1"), ircot_row("q2")]),
    "atomr_musique": ("mu.jsonl", lambda: [musique_row(), musique_row(id="3hop__4_5_6")]),
    "kre_ecqa": ("kre.jsonl", lambda: [kre_row(), kre_row(question="Where do birds live?")]),
    "user_needs_kre_ecqa": ("kre.jsonl", lambda: [
        kre_row(question=f"Where do fish {i} live?", **{" golden_context": f"Fish {i} live in water."})
        for i in range(3)]),
    "user_needs_hotpotqa": ("hp.jsonl", lambda: [ircot_row("q1"), ircot_row("q2", spans=("Lyon",))]),
}


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


def test_loaders_give_records_or_located_errors_for_any_mutated_field(tmp_path_factory):
    """Property test: replace or delete any field at any depth of an upstream row
    with any JSON value; the loader returns records or raises a dataset error."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from conflict_eval.components.manager import get_dataset

    leaves = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
              | st.sampled_from(["", " ", "None", "\ud800", "abc"]))
    values = st.recursive(leaves, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c,
                                                                                        max_size=3), max_leaves=6)
    folder = tmp_path_factory.mktemp("mutated")

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data):
        name = data.draw(st.sampled_from(sorted(LOADER_CASES)))
        file, make = LOADER_CASES[name]
        rows = make()
        row = rows[data.draw(st.integers(0, len(rows) - 1))]
        where = data.draw(st.sampled_from([p for p in _paths(row) if p]))
        parent = row
        for key in where[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[where[-1]]
        else:
            parent[where[-1]] = data.draw(values)
        path = folder / file
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        options = {"n_contexts": "1", "max_context_tokens": None} if name.startswith("user_needs") else {}
        try:
            get_dataset(name).factory(path=str(path), **options)
        except DatasetError as exc:
            str(exc).encode("utf-8")
        except ValueError as exc:  # the user-need grid: too few usable questions (advice names -T distractors=)
            from conflict_eval.records import ArgumentError

            assert name.startswith("user_needs") and type(exc) in (ValueError, ArgumentError), (name, where, exc)

    check()
