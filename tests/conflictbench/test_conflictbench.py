"""ConflictBench-style datasets (Appendix A recipe) and conflict detection."""

import math
import json

import pytest
from inspect_ai import eval

from conflict_eval.plugins.conflictbench.dataset import (
    kre_records,
    macnoise_records,
    make_claim,
)
from conflict_eval.records import DatasetError
from conflict_eval.scorers.conflictscore.detection import CONFLICT, NO_CONFLICT, UNDETERMINED, decide, detection_metrics
from conflict_eval.testing import scripted_model


@pytest.mark.parametrize("subset", ["kre_ecqa", "kre_ecare"])
def test_kre_derived_split_follows_the_recipe(shared_data, subset):
    path = shared_data / subset / "sample.jsonl"
    rows = [json.loads(line) for line in path.open()]
    records = kre_records(path, subset=f"{subset}_derived")
    assert len(records) == len(rows)
    conflict = [r for r in records if r.extra["conflict"]]
    assert len(conflict) == (len(rows) + 1) // 2  # half, rounded up
    goldens = {r[" golden_context"] for r in rows}
    for r, row in zip(records, rows):
        gold_text = row["choices"]["ABCDE".index(row["answer"])]
        assert r.question == make_claim(row["question"], gold_text)
        labels = sorted(p.label for p in r.evidence)
        texts = {p.text for p in r.evidence}
        assert row[" golden_context"] in texts
        if r.extra["conflict"]:
            assert r.answers == [CONFLICT] and labels == ["conflicting", "supporting"]
            assert row["negative_context"] in texts
        else:
            assert r.answers == [NO_CONFLICT] and labels == ["irrelevant", "irrelevant", "supporting"]
            others = [p.text for p in r.evidence if p.label == "irrelevant"]
            assert all(t in goldens for t in others)  # documents of other questions
    assert kre_records(path)[5] == kre_records(path)[5]  # deterministic for a seed
    assert [r.extra["conflict"] for r in kre_records(path, seed=1)] != [r.extra["conflict"] for r in records]


def test_macnoise_records_on_real_rows(shared_data):
    path = shared_data / "macnoise_fewshot" / "sample.jsonl"
    rows = [json.loads(line) for line in path.open()]
    records = macnoise_records(path)
    assert len(records) == 3
    for r, row in zip(records, rows):
        sup = [p for p in r.evidence if p.label == "supporting"][0]
        assert any(a.lower() in sup.text.lower() for a in row["answers"])
        if r.extra["conflict"]:
            con = [p for p in r.evidence if p.label == "conflicting"][0]
            assert con.text in {c["text_pert"] for c in row["ctxs"]}
            assert not any(a.lower() in con.text.lower() for a in row["answers"])


def test_bad_kre_record_names_file_record_and_field(tmp_path):
    bad = tmp_path / "kre.jsonl"
    bad.write_text(json.dumps({"question": "q", "answer": "F", "choices": ["a", "b"],
                               " golden_context": "g", "negative_context": "n"}) + "\n"
                   + json.dumps({"question": "q2", "answer": "A", "choices": ["a"], " golden_context": "g"}) + "\n")
    with pytest.raises(DatasetError) as err:
        kre_records(bad)
    msg = str(err.value)
    assert "kre.jsonl" in msg and "line 1" in msg and "'answer'" in msg
    assert "line 2" in msg and "'negative_context'" in msg


def test_detection_metrics_on_a_fixed_confusion_matrix():
    # TP=6, FN=2 (one of them undetermined), FP=1, TN=3
    pairs = ([(True, CONFLICT)] * 6 + [(True, NO_CONFLICT), (True, UNDETERMINED)]
             + [(False, CONFLICT)] + [(False, NO_CONFLICT)] * 3)
    m = detection_metrics(pairs)
    assert m["precision"] == pytest.approx(6 / 7)          # TP/(TP+FP) = 6/7
    assert m["recall"] == m["acc_conf"] == pytest.approx(6 / 8)  # TP/(TP+FN) = 0.75
    # F1 = 2PR/(P+R) = 2*(6/7)*(3/4)/((6/7)+(3/4)) = (9/7)/(45/28) = 0.8
    assert m["f1"] == pytest.approx(0.8)
    assert m["accuracy"] == pytest.approx(9 / 12)          # (6+3)/12
    assert m["acc_noconf"] == pytest.approx(3 / 4)         # TN/(TN+FP)
    assert m["undetermined"] == pytest.approx(1 / 12)
    assert math.isnan(detection_metrics([])["f1"]) and math.isnan(detection_metrics([])["accuracy"])


def test_a_perfect_run_without_conflict_items_has_undefined_precision_recall_f1(shared_data):
    # issue 27 Scoring 5: TP = FP = FN = 0 -> precision, recall, F1 undefined (NaN), never 0
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset

    from conflict_eval.plugins.conflictbench.detect import detect_conflict
    from conflict_eval.scorers.conflictscore.detection import conflict_detection
    from conflict_eval.tasks.conflictbench.task import conflictbench

    full = conflictbench(subsets="kre_ecqa", path=str(shared_data / "kre_ecqa" / "sample.jsonl"))
    no_conflict = [s for s in full.dataset if s.target in (NO_CONFLICT, [NO_CONFLICT])][:3]
    assert len(no_conflict) == 3
    task = Task(dataset=MemoryDataset(no_conflict), solver=detect_conflict(), scorer=conflict_detection())
    log = eval(task, model=scripted_model(lambda p: '{"answer": "SUPPORTS"}'), display="none")[0]
    assert log.status == "success", log.error
    assert {s.output.completion for s in log.samples} == {NO_CONFLICT}
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert metrics["accuracy"] == 1.0 and metrics["acc_noconf"] == 1.0
    assert all(math.isnan(metrics[k]) for k in ("precision", "recall", "f1", "acc_conf"))


def test_decide_never_guesses_from_failures():
    assert decide(["SUPPORTS", "CONTRADICTS", None]) == CONFLICT
    assert decide(["SUPPORTS", "IRRELEVANT", "IRRELEVANT"]) == NO_CONFLICT
    assert decide(["SUPPORTS", None, "IRRELEVANT"]) == UNDETERMINED


def labeller(prompt: str) -> str:
    """Labels each document by its gold role (ECQA golden contexts are short;
    the negative contexts are LLM-written full sentences)."""
    doc = prompt.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
    return '{"answer": "%s"}' % ("CONTRADICTS" if doc.count(" ") > 8 else "SUPPORTS")


def test_conflictbench_task_with_a_scripted_labeller(shared_data):
    from conflict_eval.tasks.conflictbench.task import conflictbench

    task = conflictbench(subsets="kre_ecqa,macnoise_nq",
                         paths={"kre_ecqa": str(shared_data / "kre_ecqa" / "sample.jsonl"),
                                "macnoise_nq": str(shared_data / "macnoise_fewshot" / "sample.jsonl")})
    samples = list(task.dataset)
    assert len(samples) == 403
    model = scripted_model(labeller)
    log = eval(task, model=model, limit=8, display="none")[0]
    assert log.status == "success", log.error
    n_docs = sum(len(s.metadata["evidence"]) for s in samples[:8])
    assert len(model.script.calls) == n_docs  # one Table 8 call per document, no decomposition
    pairs = [(s.target == [CONFLICT], s.output.completion) for s in log.samples]
    assert {p for _, p in pairs} <= {CONFLICT, NO_CONFLICT}
    expected = detection_metrics(pairs)
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert metrics["accuracy"] == pytest.approx(expected["accuracy"])
    assert metrics["f1"] == pytest.approx(expected["f1"])
    assert any(k.startswith("kre_ecqa_derived/") for k in metrics)


def test_conflictbench_task_validates_options():
    from conflict_eval.tasks.conflictbench.task import conflictbench

    with pytest.raises(ValueError, match="expected some of"):
        conflictbench(subsets="contraqa")
    with pytest.raises(ValueError, match="needs a path"):
        conflictbench(subsets="macnoise_tqa")


FIXTURES = __import__("pathlib").Path(__file__).parent / "fixtures"


def test_ambigdocs_recipe_on_handwritten_upstream_rows():
    from conflict_eval.plugins.conflictbench.dataset import ambigdocs_records

    records = {r.source_ids[0]: r for r in ambigdocs_records(FIXTURES / "handwritten_ambigdocs.json")}
    assert len(records) == 4
    q1 = records["q1"]
    assert q1.question == 'The answer to the question "What is the population of Cleveland, Wisconsin?" is: 1,485.'
    for r in records.values():
        sup = [p for p in r.evidence if p.label == "supporting"]
        assert len(sup) == 1
        if r.extra["conflict"]:
            # the contradicting document is another entity with a different answer
            con = [p for p in r.evidence if p.label == "conflicting"]
            assert len(con) == 1 and con[0].title != sup[0].title
        else:
            assert sorted(p.label for p in r.evidence) == ["irrelevant", "irrelevant", "supporting"]
    # q3 has one document and q4's documents share one answer: never conflict items
    assert not records["q3"].extra["conflict"] and not records["q4"].extra["conflict"]


def test_conflictingqa_groups_documents_by_query():
    from conflict_eval.plugins.conflictbench.dataset import conflictingqa_records

    records = conflictingqa_records(FIXTURES / "handwritten_conflictingqa.jsonl")
    assert [r.answers for r in records] == [[CONFLICT], [NO_CONFLICT]]  # yes+no stances vs yes only
    assert [len(r.evidence) for r in records] == [3, 1]
    assert [p.label for p in records[0].evidence] == ["supporting", "conflicting", "supporting"]
    assert records[1].question == 'The answer to the question "Is pled a correct past tense of plead?" is: yes.'


def test_conflictingqa_refuses_pickles_and_names_the_conversion(tmp_path):
    import hashlib

    import pandas as pd

    from conflict_eval.plugins.conflictbench.dataset import conflictingqa_records
    from conflict_eval.records import DataFileError

    rows = [json.loads(line) for line in (FIXTURES / "handwritten_conflictingqa.jsonl").open()]
    pd.DataFrame(rows).to_pickle(tmp_path / "data.pkl")
    digest = hashlib.sha256((tmp_path / "data.pkl").read_bytes()).hexdigest()
    with pytest.raises(DataFileError) as err:
        conflictingqa_records(tmp_path / "data.pkl")
    msg = str(err.value)
    assert str(tmp_path / "data.pkl") in msg and f"sha256 {digest}" in msg
    assert "python -m conflict_eval.plugins.conflictbench.convert_conflictingqa" in msg and "--trust-pickle" in msg
    # a pickle under another name is recognised by its first byte (protocol >= 2)
    (tmp_path / "data.bin").write_bytes((tmp_path / "data.pkl").read_bytes())
    with pytest.raises(DataFileError, match="Python pickle"):
        conflictingqa_records(tmp_path / "data.bin")


def test_conflictingqa_pickle_converts_once_to_jsonl(tmp_path, capsys):
    import pandas as pd

    from conflict_eval.plugins.conflictbench.convert_conflictingqa import main as convert
    from conflict_eval.plugins.conflictbench.dataset import conflictingqa_records

    rows = [json.loads(line) for line in (FIXTURES / "handwritten_conflictingqa.jsonl").open()]
    frame = pd.DataFrame(rows)
    frame.loc[0, "title"] = float("nan")  # pandas' missing value must become null, not "nan"
    frame.to_pickle(tmp_path / "data.pkl")
    out = tmp_path / "cq.jsonl"
    assert convert([str(tmp_path / "data.pkl"), str(out)]) == 2  # refused without --trust-pickle
    assert not out.exists() and "--trust-pickle" in capsys.readouterr().err
    assert convert([str(tmp_path / "data.pkl"), str(out), "--trust-pickle"]) == 0
    assert "sha256" in capsys.readouterr().out
    converted = conflictingqa_records(out)
    direct = conflictingqa_records(FIXTURES / "handwritten_conflictingqa.jsonl")
    assert [r.answers for r in converted] == [r.answers for r in direct]
    assert converted[0].evidence[0].title is None
    assert [p.text for r in converted for p in r.evidence] == [p.text for r in direct for p in r.evidence]
    # bad stances are reported by row from the converted file
    frame.loc[1, "stance"] = "maybe"
    frame.to_pickle(tmp_path / "bad.pkl")
    assert convert([str(tmp_path / "bad.pkl"), str(tmp_path / "bad.jsonl"), "--trust-pickle"]) == 0
    with pytest.raises(DatasetError, match=r"line 2.*'stance'.*maybe"):
        conflictingqa_records(tmp_path / "bad.jsonl")


@pytest.mark.parametrize("reply", ["[" * 10_000, "<output>" * 20_000, "Answer:" + " " * 30_000,
                                   '{"claim": "x", "document_snippet": "cut at the token li'],
                         ids=["brackets", "tags", "whitespace", "truncated"])
def test_conflictbench_labeller_that_never_labels_is_undetermined_not_no_conflict(shared_data, reply):
    from conflict_eval.tasks.conflictbench.task import conflictbench

    task = conflictbench(subsets="kre_ecqa", path=str(shared_data / "kre_ecqa" / "sample.jsonl"))
    log = eval(task, model=scripted_model(lambda p: reply), limit=3, display="none")[0]
    assert log.status == "success", log.error
    assert {s.output.completion for s in log.samples} == {UNDETERMINED}
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert metrics["undetermined"] == 1.0 and metrics["accuracy"] == 0.0  # undetermined counts wrong
    assert metrics["pooled_coverage"] == 0.0


def test_conflictbench_reports_label_coverage(shared_data):
    from conflict_eval.tasks.conflictbench.task import conflictbench

    task = conflictbench(subsets="kre_ecqa", path=str(shared_data / "kre_ecqa" / "sample.jsonl"))
    # every second labelling call is unreadable
    n = {"calls": 0}

    def half(prompt):
        n["calls"] += 1
        return labeller(prompt) if n["calls"] % 2 else "Let me think about the document first"

    log = eval(task, model=scripted_model(half), limit=2, display="none", max_samples=1)[0]
    assert log.status == "success", log.error
    cells = [c for s in log.samples for c in s.metadata["detection"]["cells"]]
    labelled = sum(c["label"] is not None for c in cells)
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert 0 < labelled < len(cells)
    assert metrics["pooled_coverage"] == pytest.approx(labelled / len(cells))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_limit_sees_both_labels(shared_data, seed):
    # issue 27 Scoring 6: the docstring promises that --limit sees both labels; a plain shuffle does not
    from conflict_eval.tasks.conflictbench.task import conflictbench

    task = conflictbench(subsets="kre_ecqa,macnoise_nq", seed=seed,
                         paths={"kre_ecqa": str(shared_data / "kre_ecqa" / "sample.jsonl"),
                                "macnoise_nq": str(shared_data / "macnoise_fewshot" / "sample.jsonl")})
    samples = list(task.dataset)
    for n in range(2, 12):
        assert {s.target[0] if isinstance(s.target, list) else s.target for s in samples[:n]} == {CONFLICT, NO_CONFLICT}
    assert task.metadata["order"].startswith("seeded shuffle")


def test_dropped_macnoise_records_are_counted_in_the_log(shared_data, tmp_path):
    from conflict_eval.plugins.conflictbench.dataset import SKIP_NO_SUPPORT
    from conflict_eval.tasks.conflictbench.task import conflictbench

    rows = [json.loads(line) for line in (shared_data / "macnoise_fewshot" / "sample.jsonl").open()]
    # a real record whose gold answer no passage contains: Appendix A has no supporting document
    no_support = dict(rows[0], answers=["an answer no passage contains"])
    path = tmp_path / "macnoise.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows + [no_support]) + "\n")
    task = conflictbench(subsets="macnoise_nq", path=str(path))
    assert len(list(task.dataset)) == 3
    assert task.metadata["dropped_records"] == {f"macnoise_nq: {SKIP_NO_SUPPORT}": 1}
    log = eval(task, model=scripted_model(lambda p: '{"answer": "SUPPORTS"}'), limit=1, display="none")[0]
    assert log.status == "success", log.error
    assert log.eval.metadata["dropped_total"] == 1


def test_verdict_first_replies_explaining_with_the_answer_is_are_read_as_the_verdict(shared_data):
    # issue 27 Scoring 2: ConflictBench claims read 'The answer to the question ... is: X', so graders
    # write "the answer is" while explaining; the verdict standing at the start of the reply wins
    from conflict_eval.tasks.conflictbench.task import conflictbench

    reply = ("IRRELEVANT\n\nThe document does not say whether the answer is living room; if it named it, "
             "the label would be SUPPORTS.")
    task = conflictbench(subsets="kre_ecqa", path=str(shared_data / "kre_ecqa" / "sample.jsonl"))
    log = eval(task, model=scripted_model(lambda p: reply), limit=2, display="none")[0]
    assert log.status == "success", log.error
    for s in log.samples:
        assert s.output.completion == NO_CONFLICT and s.scores["conflict_detection"].metadata["label_failures"] == []
        assert set(s.metadata["detection"]["label_matrix"][0]) == {"IRRELEVANT"}
