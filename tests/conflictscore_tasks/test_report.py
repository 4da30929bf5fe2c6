"""conflict_eval/conflictscore_report: data, prompts (Tables 9-11), per-strategy scores."""

import json

import pytest
from inspect_ai import eval

from conflict_eval.plugins.conflictscore.prompts import BALANCED, RAG, SUPER_BALANCED, report_prompt
from conflict_eval.tasks.conflictscore_report.task import conflictscore_report, report_items
from conflict_eval.testing import scripted_model


def test_report_items_from_real_macnoise_rows(shared_data):
    path = shared_data / "macnoise_fewshot" / "sample.jsonl"
    rows = [json.loads(line) for line in path.open()]
    items = report_items(path)
    assert [it["main_entity"] for it in items] == ["Super Bowl", "I Will Always Love You", "Vero Beach, Florida"]  # 3 of 5 titles
    for it, row in zip(items, rows):
        flags = row["pert_lbls_50"]
        expected = [c["text_pert"] if f else c["text"] for c, f in zip(row["ctxs"], flags)]
        assert it["documents"] == expected
        assert any(f and c["text_pert"] != c["text"] for c, f in zip(row["ctxs"], flags))


def test_report_prompts_are_the_papers():
    p = report_prompt("rag", "Super Bowl", ["one {x}", "two"])
    assert p.startswith("Instruction: Write a report about Super Bowl given the following documents.")
    assert p.endswith("Documents:\n\nDocument 1: one {x}\n\nDocument 2: two")
    assert "Please be cautious and hedge accordingly." in BALANCED
    assert "You are a careful and balanced reporting assistant." in SUPER_BALANCED
    assert RAG.count("{Documents}") == BALANCED.count("{Documents}") == 1


def judge(prompt: str) -> str:
    if prompt.startswith("Instruction: Break down"):
        return "Claims: " + prompt.split("Report: ")[1].split("\n\nPlease identify")[0]
    if prompt.startswith("Document-Claim"):
        claim = prompt.split("Claim to evaluate")[1].split("Document to evaluate against")[0]
        doc = prompt.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
        hedged = "Some sources" in claim  # a hedged claim is supported by both sides
        return '{"answer": "%s"}' % ("CONTRADICTS" if "Dallas Cowboys" in doc and not hedged else
                                     "SUPPORTS" if "Steelers" in doc else "IRRELEVANT")
    raise AssertionError(prompt[:80])


def test_report_task_scores_each_strategy(shared_data):
    task = conflictscore_report(path=str(shared_data / "macnoise_fewshot" / "sample.jsonl"),
                                strategies="rag,super_balanced")
    writer = scripted_model(lambda p: "Some sources say the Steelers won the most." if "balanced" in p
                            else "The Steelers have won six Super Bowls.")
    grader = scripted_model(judge)
    log = eval(task, model=writer, model_roles={"grader": grader}, limit=2, display="none")[0]
    assert log.status == "success", log.error
    prompts = [c[-1].text for c in writer.script.calls]
    assert len(prompts) == 2 and prompts[0].startswith("Instruction: Write a report about Super Bowl")
    assert prompts[1].startswith("Instruction: You are a careful and balanced reporting assistant.")
    assert len(grader.script.calls) == 2 * (1 + 5)  # decomposition + 1 claim x 5 documents, per sample
    # CS-R recomputed by hand from each sample's label matrix
    for s in log.samples:
        row = s.scores["conflictscore"].metadata["label_matrix"][0]
        plus, minus = row.count("SUPPORTS"), row.count("CONTRADICTS")
        assert s.scores["conflictscore"].value["cs_r"] == pytest.approx(minus / (plus + minus) if plus + minus else 0)
    by_id = {s.id: s.scores["conflictscore"].value["cs_c"] for s in log.samples}
    groups = {k: m.value for sc in log.results.scores if sc.name == "cs_c" for k, m in sc.metrics.items()}
    # Super Bowl docs at pert_lbls_50: doc 1 names the Steelers, doc 3 names the
    # Steelers and the Dallas Cowboys, doc 4 (the rewrite) the Dallas Cowboys.
    # RAG claim: D+={1}, D-={3,4} -> CS-C 1, CS-R 2/3; hedged claim:
    # D+={1,3}, D-={} -> CS-C 0, CS-R 0
    assert by_id == {"macnoise-0-rag": 1.0, "macnoise-0-super_balanced": 0.0}
    cs_r = {s.id: s.scores["conflictscore"].value["cs_r"] for s in log.samples}
    assert cs_r["macnoise-0-rag"] == pytest.approx(2 / 3) and cs_r["macnoise-0-super_balanced"] == 0.0
    assert groups["conflict_eval/by_group_rag"] == 1.0
    assert groups["conflict_eval/by_group_super_balanced"] == 0.0
    # the declared headline is the paper's CS-C (Table 3), and one record's strategies cluster on its id
    from inspect_ai.log import headline_metric

    from conflict_eval.report.logs import metadata_value

    assert (headline_metric(log).score.scorer, headline_metric(log).score.name) == ("conflictscore", "cs_c")
    assert {metadata_value(s.metadata, log.eval.metadata["cluster"]) for s in log.samples} == {"macnoise-0"}


def test_report_task_validates():
    with pytest.raises(ValueError, match="needs -T path"):
        conflictscore_report()
    with pytest.raises(ValueError, match="expected some of"):
        conflictscore_report(path="x", strategies="rag,neutral")


def test_report_task_scores_unlabelled_samples_by_their_worst_case_and_counts_them(shared_data):
    task = conflictscore_report(path=str(shared_data / "macnoise_fewshot" / "sample.jsonl"),
                                strategies="rag,super_balanced")
    writer = scripted_model(lambda p: "Some sources say the Steelers won the most." if "balanced" in p
                            else "The Steelers have won six Super Bowls.")

    def grader_fn(prompt):
        # the hedged report's labels are all unreadable: no best case, its worst case counts (never 0)
        if prompt.startswith("Document-Claim") and "Some sources" in prompt.split("Claim to evaluate")[1][:200]:
            return "{" * 3000
        return judge(prompt)

    log = eval(task, model=writer, model_roles={"grader": scripted_model(grader_fn)}, limit=2, display="none")[0]
    assert log.status == "success", log.error
    by = {sc.name: {k.split("/")[-1]: m.value for k, m in sc.metrics.items()} for sc in log.results.scores}
    # the RAG sample: CS-C 1, CS-R 2/3 (see above); the super-balanced one (1 claim x 5 unreadable
    # documents) at its worst case, CS-C 1 and CS-R 1, and counted as undefined (no best case)
    assert by["cs_c"]["defined_mean"] == 1.0 and by["cs_r"]["defined_mean"] == pytest.approx((2 / 3 + 1) / 2)
    assert by["cs_r"]["by_group_super_balanced"] == 1.0
    assert by["cs_c_best"]["defined_mean"] == 1.0  # the RAG sample's only
    assert by["undefined"]["total"] == 1
    assert by["label_coverage"]["pooled_coverage"] == pytest.approx(5 / 10)


def test_a_record_whose_50_percent_flags_are_all_zero_uses_pert_lbls_and_drops_are_logged(shared_data, tmp_path):
    # issue 27 Scoring 6: the real Super Bowl record of ../shared/data/macnoise_fewshot with its
    # pert_lbls_50 all zeros (as in the upstream records that the 50% setting leaves untouched);
    # pert_lbls [1, 0, 1, 1, 0] still marks three perturbed passages, so the record is used
    rows = [json.loads(line) for line in (shared_data / "macnoise_fewshot" / "sample.jsonl").open()]
    super_bowl = dict(rows[0], pert_lbls_50=[0] * 5)
    assert super_bowl["pert_lbls"] == [1, 0, 1, 1, 0]
    untouched = dict(rows[1], pert_lbls_50=[0] * 5, pert_lbls=[0] * 5)  # nothing perturbed: dropped, counted
    path = tmp_path / "macnoise.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (super_bowl, untouched, rows[2])) + "\n")
    dropped: dict[str, int] = {}
    items = report_items(path, dropped)
    assert [it["main_entity"] for it in items] == ["Super Bowl", "Vero Beach, Florida"]
    assert items[0]["flags"] == "pert_lbls" and items[1]["flags"] == "pert_lbls_50"
    assert items[0]["documents"] == [c["text_pert"] if f else c["text"]
                                     for c, f in zip(super_bowl["ctxs"], super_bowl["pert_lbls"])]
    assert dropped == {"no perturbed passage (neither pert_lbls_50 nor pert_lbls marks a passage whose "
                       "text_pert differs)": 1}
    task = conflictscore_report(path=str(path), strategies="rag")
    assert task.metadata["records_used"] == 2 and task.metadata["dropped_total"] == 1
    assert task.metadata["dropped_records"] == dropped
    log = eval(task, model=scripted_model(lambda p: "The Steelers have won six Super Bowls."),
               model_roles={"grader": scripted_model(judge)}, limit=1, display="none")[0]
    assert log.status == "success", log.error
    assert log.eval.metadata["dropped_records"] == dropped  # the count and its reason are in the log


def test_a_macnoise_file_without_flags_names_the_field(tmp_path):
    from conflict_eval.records import DatasetError

    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"question": "q", "answers": ["a"], "ctxs": [{"text": "t", "title": "T"}]}) + "\n")
    with pytest.raises(DatasetError, match=r"(?s)bad.jsonl.*line 1.*pert_lbls_50"):
        report_items(path)
