"""conflict_eval/user_needs and conflict_eval/run with user_need_prompt, scripted
models on real KRE rows; one slow run with the offline model."""

import json

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.plugins.user_needs.prompts import SYSTEM_PROMPTS
from conflict_eval.testing import scripted_model


def _kre_rows(shared_data, n):
    rows = [json.loads(l) for l in (shared_data / "kre_ecqa" / "sample.jsonl").open()][:n]
    return {r["question"]: r for r in rows}


def context_reader(rows):
    """A model that answers only from the question's own contexts: the gold
    option if the golden context is shown, the misleading option if the
    negative context is, else "I don't know" -- a perfect Context-Exclusive model."""
    def reply(prompt):
        [row] = [r for q, r in rows.items() if f"<question>{q}" in prompt]
        if f"<info>{row[' golden_context'].strip()}</info>" in prompt:
            return f"<output>{row['choices']['ABCDE'.index(row['answer'])]}</output>"
        if f"<info>{row['negative_context'].strip()}</info>" in prompt:
            return f"<output>{row['negative_answer']}</output>"
        return "<output>I don't know</output>"
    return reply


def test_grid_task_scores_a_context_exclusive_model(shared_data, log_dir, tmp_path):
    path = str(shared_data / "kre_ecqa" / "sample.jsonl")
    model = scripted_model(context_reader(_kre_rows(shared_data, 2)))
    [log] = inspect_eval("conflict_eval/user_needs",
                         task_args={"dataset": "user_needs_kre_ecqa", "path": path, "limit": 2,
                                    "n_contexts": "1,2"},
                         model=model, log_dir=log_dir, display="none")
    assert log.status == "success"
    # 2 questions x 2 counts x 3 settings x 3 user needs, one call each
    assert log.results.total_samples == 36 and len(model.script.calls) == 36
    for call in model.script.calls:
        assert [m.role for m in call] == ["system", "user"]
        assert call[0].text in SYSTEM_PROMPTS.values()
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
    # per question and count: CE 3/3 right; CF matching+conflict right, irrelevant wrong
    # (IDK instead of the original answer); MF only matching right -> 6 of 9 cells
    assert metrics["accuracy"] == pytest.approx(6 / 9)
    by_name = {s.name: s for s in log.results.scores}
    assert by_name["refusal"].metrics["mean"].value == pytest.approx(3 / 9)   # the irrelevant cells
    assert by_name["parse_failure"].metrics["mean"].value == 0
    assert metrics["overall"] == 0
    assert metrics["case/context_exclusive"] == 1 and metrics["case/context_first"] == 0
    assert metrics["setting/context_first/conflict"] == 1        # conflict and matching right
    assert metrics["setting/memory_first/conflict"] == 0
    # the system prompt follows the sample's user need
    for s in log.samples:
        assert s.messages[0].text == SYSTEM_PROMPTS[s.metadata["extra"]["user_need"]]
    # the page: the declared headline (setting-specific accuracy), its interval clustered on the
    # question (18 cells each, 2 questions): wider than the unclustered Wilson interval of 36 cells
    from conflict_eval.report import build_leaderboard
    from conflict_eval.report.stats import interval

    (row,) = build_leaderboard([log_dir], bootstrap=0)["rows"]
    assert (row.headline, row.cluster_key) == ("correct", "extra.question_id")
    m = row.metrics["correct"]
    assert (m.mean, m.method, m.clusters) == (pytest.approx(6 / 9), "wilson-clustered", 2)
    plain, _ = interval([1.0] * 24 + [0.0] * 12)
    assert m.ci[1] - m.ci[0] > plain[1] - plain[0]
    # curves from the log, through the CLI: same values at each context count
    from conflict_eval.cli import main
    out = tmp_path / "curves"
    assert main(["user-needs", "curves", log.location, "--out", str(out), "--name", "kre"]) == 0
    table = json.loads((out / "kre_mockllm_model.json").read_text())
    got = {(r["level"], r["user_need"], r["setting"], r["n_contexts"]): r["accuracy"] for r in table}
    for n in (1, 2):
        assert got[("overall", None, None, n)] == 0
        assert got[("case", "context_exclusive", None, n)] == 1
        assert got[("setting", "context_first", "irrelevant", n)] == 0
        assert got[("setting", "memory_first", "matching", n)] == 1
    assert (out / "kre_mockllm_model.png").stat().st_size > 10_000
    assert "| setting | context_first | conflict | 2 | 1.000 |" in (out / "kre_mockllm_model.md").read_text()


def test_user_need_option_selects_a_slice(shared_data, log_dir):
    path = str(shared_data / "kre_ecqa" / "sample.jsonl")
    model = scripted_model(lambda p: "Bookstore")  # no <output> tag: parse failures
    [log] = inspect_eval("conflict_eval/user_needs",
                         task_args={"dataset": "user_needs_kre_ecqa", "path": path, "limit": 1,
                                    "n_contexts": "1", "user_need": "memory_first"},
                         model=model, log_dir=log_dir, display="none")
    assert log.results.total_samples == 3
    assert {s.metadata["extra"]["user_need"] for s in log.samples} == {"memory_first"}
    by_name = {s.name: s for s in log.results.scores}
    assert by_name["parse_failure"].metrics["mean"].value == 1
    assert by_name["correct"].metrics["accuracy"].value == 0
    assert all(s.scores["user_need_accuracy"].answer is None for s in log.samples)


def test_run_task_with_user_need_prompt_method(shared_data, log_dir):
    path = str(shared_data / "kre_ecare" / "sample.jsonl")
    model = scripted_model(lambda p: "<output>I don't know</output>")
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "user_need_prompt", "dataset": "user_needs_kre_ecare",
                                    "scorer": "user_need_accuracy", "path": path, "limit": 2,
                                    "n_contexts": "1", "user_need": "context_exclusive"},
                         model=model, log_dir=log_dir, display="none")
    assert log.results.total_samples == 6
    assert all(c[0].text == SYSTEM_PROMPTS["context_exclusive"] for c in model.script.calls)
    by_name = {s.name: s for s in log.results.scores}
    # "I don't know" is right only for Context-Exclusive x Information Irrelevant
    assert by_name["correct"].metrics["accuracy"].value == pytest.approx(1 / 3)


def test_user_need_prompt_on_a_generic_dataset_needs_one_user_need(log_dir, tmp_path):
    path = tmp_path / "ff.jsonl"
    path.write_text('{"id": "f1", "question": "Capital of France?", "answers": ["Paris"], '
                    '"evidence": [{"text": "Paris is the capital of France."}]}\n')
    model = scripted_model(lambda p: "<output>paris.</output>")
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "user_need_prompt", "dataset": "demo", "path": str(path),
                                    "scorer": "user_need_accuracy", "user_need": "memory_first"},
                         model=model, log_dir=log_dir, display="none")
    assert log.status == "success"
    assert model.script.calls[0][0].text == SYSTEM_PROMPTS["memory_first"]
    assert "<info>Paris is the capital of France.</info>" in model.script.calls[0][1].text
    by_name = {s.name: s for s in log.results.scores}
    assert by_name["correct"].metrics["accuracy"].value == 1  # no grid cells: no levels, no crash
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "user_need_prompt", "dataset": "demo", "scorer": "exact_match"},
                         model=scripted_model(["x"]), limit=1, log_dir=log_dir, display="none")
    assert log.status == "error" and "has no user_need" in log.error.message


def test_bad_user_need_fails_before_running():
    from conflict_eval.components.compose import compose_task
    with pytest.raises(ValueError, match="user_need must be one of"):
        compose_task("user_need_prompt", "demo", "exact_match", user_need="context_only")


@pytest.mark.slow
def test_offline_model_small_grid(shared_data, log_dir):
    path = str(shared_data / "kre_ecqa" / "sample.jsonl")
    [log] = inspect_eval("conflict_eval/user_needs",
                         task_args={"dataset": "user_needs_kre_ecqa", "path": path, "limit": 1,
                                    "n_contexts": "1", "setting": "matching,irrelevant",
                                    "user_need": "context_exclusive"},
                         model="conflict_eval/smollm2", max_tokens=8, log_dir=log_dir, display="none")
    assert log.status == "success" and log.results.total_samples == 2
    for s in log.samples:
        score = s.scores["user_need_accuracy"]
        assert score.metadata["reply"] == s.output.completion
        assert (score.answer is None) == (score.value["parse_failure"] == 1)
        assert s.model_usage  # tokens were counted
