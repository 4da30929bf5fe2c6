"""A grader unreadable on every contradicting cell never flatters (issue 32).

Each ConflictScore task runs twice on the same real records with the same
scripted answers: once with a clean scripted grader, once with the same
grader made unreadable exactly where it would have said CONTRADICTS (the
failure that hides conflicts). No figure may come out better with the
unreadable grader:

* accuracies, improve rate, net improvement, detection precision / recall /
  F1 / accuracies (higher is better): unreadable <= clean;
* CS-C, CS-R, flagged, harm rate, undetermined detections (lower is
  better): unreadable >= clean.

Not compared: counts that describe the run rather than grade it (coverage,
parse failures of the answers, documents, undefined and undetermined
counts, ``orig_wrong`` / ``orig_correct``) and the *best-case* bounds
``cs_c_best`` / ``cs_r_best``, which exist to show how much lower the
scores could be. A figure defined with the clean grader stays defined.
"""

from __future__ import annotations

import math

import pytest
from inspect_ai import eval

from conflict_eval.testing import scripted_model

GARBLED = "I cannot tell from this document."  # a reply parse_label cannot read


def unreadable_where_contradicting(clean):
    def grader(prompt: str) -> str:
        reply = clean(prompt)
        return GARBLED if '"CONTRADICTS"' in reply else reply
    return grader


def figures(log) -> dict[str, float]:
    return {f"{sc.name}/{k.split('/')[-1]}": m.value for sc in log.results.scores for k, m in sc.metrics.items()}


def compare(clean: dict, unreadable: dict, higher_better: set, lower_better: set) -> list[str]:
    """The figures that came out better with the unreadable grader."""
    bad = []
    for name in sorted(higher_better | lower_better):
        c, u = clean[name], unreadable[name]
        if math.isnan(c):
            continue
        if math.isnan(u):
            bad.append(f"{name}: {c} with a clean grader, undefined with the unreadable one")
        elif name in higher_better and u > c + 1e-12:
            bad.append(f"{name}: {u} > {c}")
        elif name in lower_better and u < c - 1e-12:
            bad.append(f"{name}: {u} < {c}")
    return bad


# ---------------------------------------------------------------- truthfulqa_conflict


def tqa_grader(prompt: str) -> str:
    """A deterministic mix by document length: SUPPORTS / CONTRADICTS / IRRELEVANT."""
    doc = prompt.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
    return '{"document_snippet": "x", "answer": "%s"}' % ("SUPPORTS", "CONTRADICTS", "IRRELEVANT")[len(doc) % 3]


def tqa_model(prompt: str) -> str:
    if prompt.startswith("You are being asked"):  # the regeneration switches to B
        return "B – the other option\nJustification: (Docs 1)"
    return "(A)"


def test_truthfulqa_conflict(shared_data, tmp_path):
    from conflict_eval.tasks.truthfulqa_conflict.task import truthfulqa_conflict

    def run(grader):
        task = truthfulqa_conflict(path=str(shared_data / "truthfulqa_binary" / "sample.jsonl"),
                                   background=[str(shared_data / "crag_example" / "sample.jsonl")], k=4)
        [log] = eval(task, model=scripted_model(tqa_model), model_roles={"grader": scripted_model(grader)},
                     limit=12, display="none", log_dir=str(tmp_path))
        assert log.status == "success", log.error
        return log

    clean_log, unreadable_log = run(tqa_grader), run(unreadable_where_contradicting(tqa_grader))
    clean, unreadable = figures(clean_log), figures(unreadable_log)
    # the scenario bites: the clean grader flags answers, and the unreadable one hides every contradiction
    assert clean["flagged/mean"] > 0
    assert sum(s.scores["truthfulqa_settings"].value["claims_undetermined"] for s in unreadable_log.samples) > 0
    assert all("CONTRADICTS" not in str(s.store["RegenerationStore:conflict"]["label_matrix"])
               for s in unreadable_log.samples)
    higher = {"rag/mean", "control_rag/mean", "regenerated_rag/mean", "effect/regeneration_effect_improve_rate",
              "effect/regeneration_effect_net_improve"}
    lower = {"flagged/mean", "effect/regeneration_effect_harm_rate"}
    assert not compare(clean, unreadable, higher, lower)
    assert unreadable["claims_undetermined/total"] > 0 and unreadable["flagged_undetermined/total"] > 0
    assert unreadable["effect/regeneration_effect_flagged_undetermined"] == unreadable["flagged_undetermined/total"]
    # every answer the clean grader flags is regenerated with the unreadable one too (as undetermined)
    flagged = {s.id for s in clean_log.samples if s.scores["truthfulqa_settings"].metadata["flagged"]}
    assert flagged <= {s.id for s in unreadable_log.samples if s.scores["truthfulqa_settings"].metadata["flagged"]}


def test_the_truthfulqa_figures_before_issue_32_would_have_failed_this_check():
    """The comparison is not vacuous: the pre-issue-32 behaviour (flagging on the
    labelled cells only) turned flagged 1.0 into 0.0 and skipped regeneration."""
    assert compare({"flagged/mean": 1.0, "regenerated_rag/mean": 0.0}, {"flagged/mean": 0.0, "regenerated_rag/mean": 1.0},
                   {"regenerated_rag/mean"}, {"flagged/mean"}) == ["flagged/mean: 0.0 < 1.0", "regenerated_rag/mean: 1.0 > 0.0"]


# ---------------------------------------------------------------- conflictscore_report


def report_grader(prompt: str) -> str:
    if prompt.startswith("Instruction: Break down"):
        report = prompt.split("Report: ")[1].split("\n\nPlease identify")[0]
        return "\n".join(f"Claims: {s.strip()}." for s in report.split(".") if s.strip())
    claim = prompt.split("Claim to evaluate")[1].split("Document to evaluate against")[0]
    doc = prompt.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
    words = [w for w in claim.split() if len(w) > 5]
    hits = sum(w in doc for w in words)
    label = "SUPPORTS" if hits >= 2 else "CONTRADICTS" if hits == 1 or len(doc) % 2 else "IRRELEVANT"
    return '{"answer": "%s"}' % label


def test_conflictscore_report(shared_data, tmp_path):
    from conflict_eval.tasks.conflictscore_report.task import conflictscore_report

    def writer(prompt):
        docs = prompt.split("Document 1: ", 1)[1]
        return docs.split("\n\nDocument 2:")[0][:300] + ". " + docs.split("Document 3: ", 1)[-1][:200]

    def run(grader):
        task = conflictscore_report(path=str(shared_data / "macnoise_fewshot" / "sample.jsonl"))
        [log] = eval(task, model=scripted_model(writer), model_roles={"grader": scripted_model(grader)},
                     limit=6, display="none", log_dir=str(tmp_path))
        assert log.status == "success", log.error
        return log

    clean_log, unreadable_log = run(report_grader), run(unreadable_where_contradicting(report_grader))
    clean, unreadable = figures(clean_log), figures(unreadable_log)
    assert clean["cs_c/defined_mean"] > 0 and unreadable["claims_undetermined/total"] > 0
    lower = {k for k in clean if k.startswith(("cs_c/", "cs_r/"))}
    assert not compare(clean, unreadable, set(), lower)
    # the best case is what hides: it is allowed (and here expected) to drop
    assert unreadable["cs_c_best/defined_mean"] <= clean["cs_c_best/defined_mean"]


# ---------------------------------------------------------------- conflictbench


def bench_labeller(prompt: str) -> str:
    doc = prompt.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
    return '{"answer": "%s"}' % ("CONTRADICTS" if doc.count(" ") > 8 else "SUPPORTS")


def test_conflictbench(shared_data, tmp_path):
    from conflict_eval.tasks.conflictbench.task import conflictbench

    def run(labeller):
        task = conflictbench(subsets="kre_ecqa,macnoise_nq",
                             paths={"kre_ecqa": str(shared_data / "kre_ecqa" / "sample.jsonl"),
                                    "macnoise_nq": str(shared_data / "macnoise_fewshot" / "sample.jsonl")})
        [log] = eval(task, model=scripted_model(labeller), limit=12, display="none", log_dir=str(tmp_path))
        assert log.status == "success", log.error
        return log

    clean, unreadable = figures(run(bench_labeller)), figures(run(unreadable_where_contradicting(bench_labeller)))
    higher = {k for k in clean if k.split("/")[-1] in ("precision", "recall", "f1", "accuracy", "acc_conf", "acc_noconf")}
    lower = {k for k in clean if k.split("/")[-1] == "undetermined"}
    assert higher and lower
    assert not compare(clean, unreadable, higher, lower)
    assert clean != unreadable  # the unreadable grader changed something


@pytest.mark.parametrize("figure", ["cs_c", "cs_r"])
def test_an_all_unreadable_sample_counts_at_its_worst_case(figure):
    from conflict_eval.scorers.conflictscore import metrics

    # clean: every document contradicts (CS-R 1); unreadable on those cells: no label at all
    clean = [["CONTRADICTS", "CONTRADICTS"]]
    unreadable = [[None, None]]
    worst = getattr(metrics, figure)
    assert worst(unreadable) >= worst(clean)
