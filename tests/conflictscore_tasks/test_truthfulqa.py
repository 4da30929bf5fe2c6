"""conflict_eval/truthfulqa_conflict and the reusable regeneration wrapper."""

import math
import json
import random
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import generate

from conflict_eval.plugins.conflictscore.regenerate import conflict_regenerate
from conflict_eval.plugins.truthfulqa.dataset import build_corpus, truthfulqa_records
from conflict_eval.scorers.conflictscore.truthfulqa import improve_harm
from conflict_eval.tasks.truthfulqa_conflict.task import truthfulqa_conflict
from conflict_eval.testing import scripted_model


def test_records_randomise_ab_with_a_fixed_seed(shared_data):
    path = shared_data / "truthfulqa_binary" / "sample.jsonl"
    rows = [json.loads(line) for line in path.open()]
    records = truthfulqa_records(path)
    assert len(records) == len(rows) == 396
    for i, (r, row) in enumerate(zip(records, rows)):
        first = random.Random(f"0|{i}").random() < 0.5
        assert r.gold_option == ("A" if first else "B")
        assert r.options[ord(r.gold_option) - 65] == row["Best Answer"]
        assert r.options[ord(r.conflict_option) - 65] == row["Best Incorrect Answer"]
    golds = [r.gold_option for r in records]
    assert 150 < golds.count("A") < 246  # both orders occur
    assert [r.gold_option for r in truthfulqa_records(path, seed=3)] != golds


def test_truthfulqa_binary_is_a_registered_dataset_the_task_looks_up(shared_data, log_dir, monkeypatch, tmp_path):
    """The loader is the dataset plugin ``truthfulqa_binary`` (plugins/truthfulqa): any method runs
    on it through conflict_eval/run, and conflict_eval/truthfulqa_conflict takes its samples from
    the registry (a factory put in its place is the one called)."""
    from conflict_eval.components import manager

    lines = (shared_data / "truthfulqa_binary" / "sample.jsonl").read_text(encoding="utf-8").splitlines()[:12]
    path = str(tmp_path / "truthfulqa.jsonl")  # 12 real rows: retrieval over the whole file is not the point
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    component = manager.get_dataset("truthfulqa_binary")
    assert (component.plugin, component.origin) == ("truthfulqa", "built-in")
    model = scripted_model(lambda prompt: "<a>A</a>")
    [log] = eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "truthfulqa_binary",
                                                 "path": path, "k": 2, "limit": 3},
                 model=model, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    assert log.results.total_samples == 3
    records = truthfulqa_records(path)[:3]
    # the first sample's prompt holds its question and its 2 retrieved documents
    assert records[0].question in model.script.calls[0][-1].text
    provenance = log.eval.metadata["dataset_provenance"]
    assert provenance["retrieval"]["answer_key_statements"] == "others"
    assert provenance["dropped_total"] == 0
    expected = sum(r.gold_option == "A" for r in records) / 3
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(expected)

    calls = []

    def factory(**options):
        calls.append(options)
        return component.factory(**options)

    import conflict_eval.tasks.truthfulqa_conflict.task as task_module

    def get_dataset(name):  # the task's own lookup, replaced (robust to other tests' plugin managers)
        assert name == "truthfulqa_binary"
        return manager.Component("dataset", "truthfulqa_binary", factory, "truthfulqa", None)

    monkeypatch.setattr(task_module, "get_dataset", get_dataset)
    task = truthfulqa_conflict(path=path, k=2, seed=3)
    assert calls and calls[0]["path"] == path and calls[0]["k"] == 2 and calls[0]["seed"] == 3
    assert len(task.dataset) == 12 and task.metadata["dropped_total"] == 0


def test_corpus_has_statements_and_background(shared_data):
    tqa = shared_data / "truthfulqa_binary" / "sample.jsonl"
    corpus = build_corpus(tqa, [str(shared_data / "hotpotqa_ircot" / "sample.jsonl"),
                                str(shared_data / "crag_example" / "sample.jsonl")])
    sources = {d["source"] for d in corpus}
    assert sources == {"truthfulqa_statement", "wikipedia", "web"}
    texts = {d["text"] for d in corpus}
    assert "You grow watermelons in your stomach" in texts
    assert len(texts) == len(corpus)  # deduplicated


def test_improve_harm_arithmetic_matches_table_5():
    # gpt-4.1-mini row: 43 originally wrong, 207 originally correct.
    # improve 37.21% = 16/43; harm 3.86% = 8/207; net 3.20% = (16 - 8) / 250
    items = [(False, True)] * 16 + [(False, False)] * 27 + [(True, False)] * 8 + [(True, True)] * 199
    m = improve_harm(items)
    assert (m["orig_wrong"], m["orig_correct"]) == (43, 207)
    assert m["improve_rate"] == pytest.approx(0.3721, abs=5e-5)
    assert m["harm_rate"] == pytest.approx(0.0386, abs=5e-5)
    assert m["net_improve"] == pytest.approx(0.032)
    empty = improve_harm([])
    assert empty["orig_wrong"] == 0 and empty["orig_correct"] == 0
    assert all(math.isnan(empty[k]) for k in ("improve_rate", "harm_rate", "net_improve"))
    # issue 27 Scoring 5: nothing was wrong -> improve rate undefined (NaN), never 0
    nothing_wrong = improve_harm([(True, True), (True, False)])
    assert math.isnan(nothing_wrong["improve_rate"]) and nothing_wrong["harm_rate"] == 0.5


DOCS = ["Cats sleep 16 hours a day.", "Cats never sleep.", "Paris is in France."]


def judge(prompt):
    doc = prompt.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
    claim = prompt.split("Claim to evaluate")[1].split("Document to evaluate against")[0]
    if "Paris" in doc:
        return '{"answer": "IRRELEVANT"}'
    agrees = ("never" in doc) == ("never" in claim)
    return '{"document_snippet": "%s", "answer": "%s"}' % (doc.strip()[11:], "SUPPORTS" if agrees else "CONTRADICTS")


def _mc_task():
    sample = Sample(id="q", input="Do cats sleep?", choices=["Cats sleep a lot", "Cats never sleep"], target="A",
                    metadata={"documents": DOCS})
    return Task(dataset=MemoryDataset([sample]), solver=conflict_regenerate(generate()))


def test_wrapper_regenerates_a_flagged_answer():
    model = scripted_model(["(B)", "A – Cats sleep a lot\nJustification: (Docs 1)"])
    grader = scripted_model(judge)
    log = eval(_mc_task(), model=model, model_roles={"grader": grader}, display="none")[0]
    assert log.status == "success", log.error
    # the answer B = "Cats never sleep": doc 1 contradicts, doc 2 supports -> conflicted
    assert len(grader.script.calls) == 3  # whole answer x 3 documents
    assert len(model.script.calls) == 2   # answer + regeneration
    prompt = model.script.calls[1][-1].text
    assert prompt.startswith("You are being asked to reconsider and improve your previous binary choice response")
    assert "YOUR ORIGINAL RESPONSE:\n(B)" in prompt
    assert "YOUR MAIN CLAIM THAT HAD CONFLICTS:\nCats never sleep\n" in prompt
    assert "SUPPORTING DOCUMENTS: Doc 2" in prompt and "CONTRADICTING DOCUMENTS: Doc 1" in prompt
    assert "- A – Cats sleep a lot\n- B – Cats never sleep" in prompt
    assert "Document 1: Cats sleep 16 hours a day." in prompt
    store = log.samples[0].store
    assert store["RegenerationStore:flagged"] is True
    assert store["RegenerationStore:regenerated_letter"] == "A"
    assert log.samples[0].output.completion.startswith("A – ")


def test_wrapper_with_a_judge_panel_regenerates_only_on_a_majority_conflict():
    """Answer B ("Cats never sleep"); judge 1 labels doc 1 CONTRADICTS, doc 2 SUPPORTS, doc 3
    IRRELEVANT (flagged when it judges alone, test above); judge 2 says IRRELEVANT for doc 1. Two
    judges, a tie on doc 1: undetermined, so the claim is conflicted in the worst case
    (CS-C = 1) though not on its determined cells. An undetermined cell never hides a conflict
    (issue 32): the answer is flagged as possibly conflicted and regenerated."""
    def judge_2(prompt):
        doc = prompt.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
        return '{"answer": "IRRELEVANT"}' if "16 hours" in doc else judge(prompt)

    model = scripted_model(["(B)", "A – Cats sleep a lot\nJustification: (Docs 2)"])
    roles = {"grader": scripted_model(judge), "grader_2": scripted_model(judge_2)}
    log = eval(_mc_task(), model=model, model_roles=roles, display="none")[0]
    assert log.status == "success", log.error
    store = log.samples[0].store
    conflict = store["RegenerationStore:conflict"]
    assert conflict["label_matrix"] == [[None, "SUPPORTS", "IRRELEVANT"]]
    assert store["RegenerationStore:cs_c"] == 1.0
    assert store["RegenerationStore:flagged"] is True and store["RegenerationStore:flag_undetermined"] is True
    assert conflict["judges"]["judges"] == ["grader=mockllm/model", "grader_2=mockllm/model"]
    assert [u["votes"] for u in conflict["judges"]["units"]][0] == [["CONTRADICTS"], ["IRRELEVANT"]]
    assert len(model.script.calls) == 2  # answer + regeneration of the possibly conflicted answer


def test_wrapper_keeps_an_unflagged_answer_and_records_unparseable_ones():
    # a grader that never contradicts: nothing is flagged
    grader = scripted_model(lambda p: '{"answer": "SUPPORTS"}')
    model = scripted_model(["(A)"])
    log = eval(_mc_task(), model=model, model_roles={"grader": grader}, display="none")[0]
    assert len(model.script.calls) == 1 and len(grader.script.calls) == 3
    assert log.samples[0].store["RegenerationStore:flagged"] is False
    assert log.samples[0].output.completion == "(A)"

    grader = scripted_model(lambda p: '{"answer": "SUPPORTS"}')
    model = scripted_model(["I am not sure."])
    log = eval(_mc_task(), model=model, model_roles={"grader": grader}, display="none")[0]
    assert len(grader.script.calls) == 0  # nothing to score
    assert log.samples[0].store["RegenerationStore:not_scored_reason"].startswith("original choice unparseable")


def tqa_model(prompt):
    if prompt.startswith("Document-Claim"):
        return '{"answer": "SUPPORTS"}' if "Document 1" not in prompt else '{"answer": "CONTRADICTS"}'
    if prompt.startswith("You are being asked"):
        return "garbled"  # unparseable regenerated answer: counted, scored wrong
    return "(A)"


def test_truthfulqa_task_end_to_end_with_scripted_models(shared_data):
    task = truthfulqa_conflict(path=str(shared_data / "truthfulqa_binary" / "sample.jsonl"),
                               background=[str(shared_data / "crag_example" / "sample.jsonl")], k=4)
    def by_length(p):  # a deterministic mix of labels: parity of the document's length
        doc = p.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
        return '{"answer": "%s"}' % ("SUPPORTS" if len(doc) % 2 else "CONTRADICTS")

    grader = scripted_model(by_length)
    model = scripted_model(tqa_model)
    log = eval(task, model=model, model_roles={"grader": grader}, limit=3, display="none")[0]
    assert log.status == "success", log.error
    samples = log.samples
    assert all(len(s.metadata["evidence"]) == 4 for s in samples)
    assert len(grader.script.calls) == 3 * 4  # whole answer x 4 documents per sample
    flagged = [s.scores["truthfulqa_settings"].metadata["flagged"] for s in samples]
    # RAG + Control-RAG per sample, + one regeneration per flagged sample
    assert len(model.script.calls) == 2 * 3 + sum(flagged)
    for s in samples:
        v = s.scores["truthfulqa_settings"].value
        assert v["rag"] == int(s.target == "A") == v["control_rag"]
        if s.scores["truthfulqa_settings"].metadata["flagged"]:
            assert v["regenerated_rag"] == 0 and v["regenerated_parse_failure"] == 1
        else:
            assert v["regenerated_rag"] == v["rag"]
    metrics = {k: m.value for sc in log.results.scores for k, m in sc.metrics.items() if sc.name == "effect"}
    items = [(bool(s.scores["truthfulqa_settings"].value["rag"]), False) for s in samples
             if s.scores["truthfulqa_settings"].metadata["flagged"]]
    expected = improve_harm(items)
    got = metrics["conflict_eval/regeneration_effect_harm_rate"]
    assert got == expected["harm_rate"] or (math.isnan(got) and math.isnan(expected["harm_rate"]))
    assert any(flagged)


@pytest.mark.parametrize("reply, letter", [
    ("Sure! Here is my reconsidered answer:\n\n**a — Cats sleep a lot**\nJustification: (Docs 1)", "A"),
    ("A: cats sleep a lot\nJustification: Document 1 gives 16 hours (Docs 1).", "A"),
    ("B – Cats never sleep", "B"),
    ("[" * 10_000, None),              # pathological: a recorded parse failure, the run succeeds
    ("<a>" * 20_000, None),
    ("Justification:" + " " * 50_000, None),
], ids=["preamble-bold-emdash", "colon-lowercase", "endash", "brackets", "tags", "whitespace"])
def test_wrapper_reads_table14_replies(reply, letter):
    model = scripted_model(["(B)", reply])
    log = eval(_mc_task(), model=model, model_roles={"grader": scripted_model(judge)}, display="none")[0]
    assert log.status == "success", log.error
    store = log.samples[0].store
    assert store["RegenerationStore:flagged"] is True
    assert store["RegenerationStore:regenerated_letter"] == letter
    assert (store["RegenerationStore:regeneration_parse_failure"] is None) == (letter is not None)


def test_wrapper_with_a_grader_that_never_labels_regenerates_as_undetermined():
    # no label parsed -> ConflictScore undefined, but with 3 unreadable documents the claim
    # could be conflicted: it is regenerated, flagged as undetermined (issue 32)
    model = scripted_model(["(B)", "A – Cats sleep a lot\nJustification: (Docs 1)"])
    log = eval(_mc_task(), model=model, model_roles={"grader": scripted_model(lambda p: "[" * 5000)}, display="none")[0]
    assert log.status == "success", log.error
    store = log.samples[0].store
    assert store["RegenerationStore:flagged"] is True and store["RegenerationStore:flag_undetermined"] is True
    assert store["RegenerationStore:claims_undetermined"] == 1 and store["RegenerationStore:cs_c"] == 1.0  # worst case
    assert store["RegenerationStore:conflict"]["undefined_reason"] == "no label parsed"
    assert store["RegenerationStore:conflict"]["label_coverage"] == 0.0
    prompt = model.script.calls[1][-1].text
    assert "UNDETERMINED DOCUMENTS (no readable label): Doc 1, Doc 2, Doc 3" in prompt
    assert "SUPPORTING DOCUMENTS: \n" in prompt and "CONTRADICTING DOCUMENTS: \n" in prompt


def test_truthfulqa_counts_undefined_conflictscores(shared_data):
    task = truthfulqa_conflict(path=str(shared_data / "truthfulqa_binary" / "sample.jsonl"),
                               background=[str(shared_data / "crag_example" / "sample.jsonl")], k=4)
    grader = scripted_model(lambda p: "I am not sure about this one.")  # never a label
    log = eval(task, model=scripted_model(lambda p: "(A)"), model_roles={"grader": grader}, limit=2, display="none")[0]
    assert log.status == "success", log.error
    for s in log.samples:
        v = s.scores["truthfulqa_settings"].value
        assert v["cs_undefined"] == 1 and v["label_coverage"] == 0.0
        # 4 unreadable documents could make the answer conflicted: flagged, as undetermined
        assert v["flagged"] == 1 and v["flagged_undetermined"] == 1 and v["claims_undetermined"] == 1
        assert s.scores["truthfulqa_settings"].metadata["cs_undefined_reason"] == "no label parsed"
    by = {sc.name: {k.split("/")[-1]: m.value for k, m in sc.metrics.items()} for sc in log.results.scores}
    assert by["cs_undefined"]["total"] == 2 and by["label_coverage"]["pooled_coverage"] == 0.0
    assert by["claims_undetermined"]["total"] == 2 and by["effect"]["regeneration_effect_flagged_undetermined"] == 2


@pytest.mark.parametrize("reply", ["<a>" * 20_000, "[" * 10_000, "Answer:" + " " * 50_000, "\ud800" * 5000],
                         ids=["tags", "brackets", "whitespace", "surrogates"])
def test_pathological_answers_are_parse_failures_and_the_run_succeeds(reply):
    model = scripted_model([reply])
    log = eval(_mc_task(), model=model, model_roles={"grader": scripted_model(judge)}, display="none")[0]
    assert log.status == "success", log.error
    assert log.samples[0].store["RegenerationStore:not_scored_reason"].startswith("original choice unparseable")


# --------------------------------------------------------------------------- issue 27 Fidelity 5 and 7

WATERMELON = "What happens to you if you eat watermelon seeds?"


def _search_file(tmp_path, records) -> str:
    path = tmp_path / "search.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return str(path)


@pytest.mark.parametrize("statements, phrase", [
    (None, "OTHER questions"), ("others", "OTHER questions"), ("all", "OWN statements included"),
    ("none", "no answer-key statements"),
])
def test_the_log_note_matches_the_statements_setting(shared_data, statements, phrase):
    tqa = str(shared_data / "truthfulqa_binary" / "sample.jsonl")
    bg = [str(shared_data / "hotpotqa_ircot" / "sample.jsonl")]
    task = truthfulqa_conflict(path=tqa, background=bg, statements=statements, k=3)
    note = task.metadata["retrieval"]["note"]
    assert phrase in note and "gold paragraphs" not in note
    assert "top 10 Google Search results" in note and "NOT that setting" in note
    counts = task.metadata["retrieval"]["key_entity_mentions"]
    # at most k=3 each: BM25 returns only passages sharing a term with the question
    assert 0 < counts["documents"] <= 3 * counts["questions"]
    assert 0 <= counts["mentioning_key_entity"] <= counts["documents"]


def test_per_question_search_results_from_a_file(shared_data, tmp_path):
    tqa = shared_data / "truthfulqa_binary" / "sample.jsonl"
    rows = [json.loads(line) for line in tqa.open()]
    assert rows[0]["Question"] == WATERMELON
    # what a user saves from a search API (SerpAPI's organic_results shape, and our own "results")
    search = _search_file(tmp_path, [
        {"question": WATERMELON, "organic_results": [
            {"title": "Watermelon seeds: safe to eat?", "link": "https://a.example/w",
             "snippet": "Eating watermelon seeds is safe; they pass through the digestive system."},
            {"title": "Myth", "link": "https://b.example/m",
             "snippet": "A watermelon will grow in your stomach if you swallow the seeds."},
            {"title": "Gardening", "link": "https://c.example/g", "snippet": "Plant seeds in spring."}]},
        {"question": rows[2]["Question"], "results": [
            {"title": "Ten percent myth", "url": "https://d.example/b",
             "text": "People use virtually all of their brain."}]},
        {"question": "A question that is not in the file?", "results": []},
    ])
    task = truthfulqa_conflict(path=str(tqa), documents=search)
    samples = list(task.dataset)
    assert [s.metadata["question"] for s in samples] == [WATERMELON, rows[2]["Question"]]
    by_q = {s.metadata["question"]: s.metadata["evidence"] for s in samples}
    assert [d["text"] for d in by_q[WATERMELON]][0].startswith("Eating watermelon seeds is safe")
    assert by_q[WATERMELON][0]["title"] == "Watermelon seeds: safe to eat?"
    md = task.metadata
    assert md["dropped_records"] == {"no record in the documents file": len(rows) - 2}
    assert md["retrieval"]["unmatched_records"] == 1
    assert "saved search results" in md["retrieval"]["note"]
    # key entities: "watermelon" (2 of its 3 documents mention it; "Plant seeds in spring." does not) and
    # "percentage" for "What percentage of the brain ...?" (its one document says "percent": no)
    counts = md["retrieval"]["key_entity_mentions"]
    assert counts["documents"] == 4 and counts["questions"] == 2
    assert counts["mentioning_key_entity"] == 2 and counts["questions_with_no_document_mentioning_it"] == 1

    # and per evaluated sample in the scores
    def grader_fn(prompt):
        return '{"answer": "IRRELEVANT"}'
    log = eval(task, model=scripted_model(lambda p: "(A)"), model_roles={"grader": scripted_model(grader_fn)},
               display="none")[0]
    assert log.status == "success", log.error
    by = {s.metadata["question"]: s.scores["truthfulqa_settings"] for s in log.samples}
    assert by[WATERMELON].metadata["key_entity"] == "watermelon"
    assert by[WATERMELON].value["documents_mentioning_key_entity"] == 2 and by[WATERMELON].value["documents"] == 3
    totals = {sc.name: {k.split("/")[-1]: m.value for k, m in sc.metrics.items()} for sc in log.results.scores}
    assert totals["documents_mentioning_key_entity"]["total"] == 2 and totals["documents"]["total"] == 4


@pytest.mark.parametrize("record, field", [
    ({"results": []}, "'question'"),
    ({"question": WATERMELON}, "'results'"),
    ({"question": WATERMELON, "results": [{"title": "t", "url": "u"}]}, "'results[0]'"),
    ({"question": WATERMELON, "results": ["just a string"]}, "'results[0]'"),
    ({"question": WATERMELON, "results": {"title": "t"}}, "'results'"),
], ids=["no-question", "no-results", "no-text", "not-an-object", "not-a-list"])
def test_a_bad_search_results_file_names_file_record_and_field(shared_data, tmp_path, record, field):
    from conflict_eval.records import DatasetError

    search = _search_file(tmp_path, [{"question": "Fine?", "results": [{"snippet": "ok"}]}, record])
    with pytest.raises(DatasetError) as err:
        truthfulqa_conflict(path=str(shared_data / "truthfulqa_binary" / "sample.jsonl"), documents=search)
    msg = str(err.value)
    assert "search.jsonl" in msg and "line 2" in msg and field in msg


def test_documents_file_cannot_be_combined_with_a_corpus(shared_data, tmp_path):
    with pytest.raises(ValueError, match="cannot be combined"):
        truthfulqa_conflict(path=str(shared_data / "truthfulqa_binary" / "sample.jsonl"),
                            documents=str(tmp_path / "x.jsonl"), statements="all")
