"""A dataset declares its metric (``conflict_eval.components.compose.declares_metric``) and
``conflict_eval/run`` scores with it unless ``-T scorer=`` says otherwise; the
scripted test model coerces Inspect's YAML-read ``-M`` values to text."""

import json

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval import compose_task, register_plugin, unregister_plugin
from conflict_eval.components.markers import hookimpl
from conflict_eval.components.compose import declared_metrics, declares_metric
from conflict_eval.components.manager import get_dataset
from conflict_eval.testing import scripted_model


def test_builtin_datasets_declare_their_metric():
    assert declared_metrics(get_dataset("polluted_kb")) == ("yes_no_accuracy", "knowledge_recall")
    for name in ("user_needs_hotpotqa", "user_needs_kre_ecqa", "user_needs_kre_ecare",
                 "user_needs_disentqa", "user_needs_uraq"):
        assert declared_metrics(get_dataset(name)) == ("user_need_accuracy",)
    assert declared_metrics(get_dataset("demo")) is None


def test_run_on_user_needs_uses_user_need_accuracy(shared_data, log_dir):
    # the case: "<output>walked</output>" scored 0.0 by token_f1 against the target "walked"
    path = shared_data / "kre_ecqa" / "sample.jsonl"
    rows = [json.loads(l) for l in path.open()][:1]
    gold = rows[0]["choices"]["ABCDE".index(rows[0]["answer"])]
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "user_need_prompt", "dataset": "user_needs_kre_ecqa",
                                    "path": str(path), "limit": 1, "n_contexts": "1",
                                    "user_need": "context_first", "setting": "matching"},
                         model=scripted_model([f"<output>{gold}</output>"]), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    assert log.eval.metadata["scorers"] == ["user_need_accuracy"]
    assert log.eval.metadata["scorer_source"] == "declared"
    [sample] = log.samples
    assert sample.scores["user_need_accuracy"].value["correct"] == 1


def test_run_on_polluted_kb_uses_acc_and_krc(small_kb, log_dir):
    # standard RAG with a correct "Yes it is": ACC 1 (token_f1 would give 0.5)
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "standard_rag", "dataset": "polluted_kb",
                                    "path": str(small_kb), "retriever": "bm25"},
                         model=scripted_model(lambda p: "Yes it is"), limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    assert log.eval.metadata["scorers"] == ["yes_no_accuracy", "knowledge_recall"]
    [sample] = log.samples
    assert sample.scores["yes_no_accuracy"].value == {"accuracy": 1, "parse_failure": 0}
    assert "knowledge_recall" in sample.scores


def test_given_scorer_overrides_the_declaration(small_kb):
    task = compose_task("standard_rag", "polluted_kb", "exact_match", path=str(small_kb), retriever="bm25")
    assert task.metadata["scorers"] == ["exact_match"] and task.metadata["scorer_source"] == "given"


def test_declared_unregistered_metric_is_an_error():
    @declares_metric("no_such_metric")
    def odd_dataset(path=None):
        raise AssertionError("must not load: the declaration is checked first")

    class Plugin:
        @hookimpl
        def conflict_eval_register_datasets(self):
            return {"odd_dataset": odd_dataset}

    register_plugin(Plugin(), name="odd")
    try:
        with pytest.raises(ValueError, match=r"dataset 'odd_dataset' \(plugin 'odd'\) declares metric "
                                             r"'no_such_metric'.*-T scorer="):
            compose_task("end_to_end", "odd_dataset")
    finally:
        unregister_plugin("odd")


def test_choice_accuracy_on_samples_without_options_is_an_error(small_kb):
    with pytest.raises(ValueError, match=r"'choice_accuracy' \(given\) cannot score dataset 'polluted_kb'"):
        compose_task("standard_rag", "polluted_kb", "choice_accuracy", path=str(small_kb), retriever="bm25")


def test_declares_metric_needs_names():
    with pytest.raises(ValueError):
        declares_metric()


@pytest.mark.parametrize(("model_args", "expected"), [
    ({"reply": True}, "Yes"),                       # -M reply=Yes
    ({"reply": False}, "No"),                       # -M reply=no
    ({"reply": 1999}, "1999"),                      # -M reply=1999
    ({"reply": ["Yes", " it is"]}, "Yes, it is"),   # -M "reply=Yes, it is"
    ({"replies": [True, "B"]}, "Yes"),              # -M replies=[yes, B]
    ({"replies": "only"}, "only"),
])
def test_scripted_model_coerces_cli_values(model_args, expected, log_dir):
    [log] = inspect_eval("conflict_eval/run", task_args={"dataset": "demo", "scorer": "exact_match"},
                         model="scripted/x", model_args=model_args, limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    assert log.samples[0].output.completion.endswith(expected)


def test_scripted_model_rejects_a_mapping(log_dir):
    # -M reply=Answer: yes reads as {"Answer": True}: an error before any sample runs
    with pytest.raises(ValueError, match="quote the reply"):
        inspect_eval("conflict_eval/run", task_args={"dataset": "demo"}, model="scripted/x",
                     model_args={"reply": {"Answer": True}}, limit=1, log_dir=log_dir, display="none")
