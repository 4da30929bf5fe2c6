"""Errors that advise a task argument other than ``path`` (``scorer``, ``user_need``,
``distractors``, ``dataset``, ``text_corpus``, ``kg_triples``, ``web_pages``) go
as ``records.errors.ArgumentError``, the argument as data (``TaskArgument``), and are
rendered by ``runs.arguments`` as the data-file advice is (tests/suite/test_data_needed.py):
``-T name=VALUE`` for ``inspect eval`` / ``conflict-eval run``, ``name: VALUE`` in
the task's ``args:`` for suite commands. One raised inside a running sample reaches
the user through the eval log, past the command, so it says both."""

import json
import pickle
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.solver import TaskState

from conflict_eval.cli import main
from conflict_eval.records import ArgumentError, ConflictQA, TaskArgument
from conflict_eval.records.errors import argument_error
from conflict_eval.runs.arguments import render
from conflict_eval.records.schema import to_sample
from conflict_eval.retrieval.servers import SourceError
from conflict_eval.testing import scripted_model

NOTE = " (a copy of the suite file; suite commands take no -T)"
FREE_FORM = ('{"id": "f1", "question": "Capital of France?", "answers": ["Paris"], '
             '"evidence": [{"text": "Paris is the capital of France."}]}\n')


def test_any_argument_renders_per_command():
    err = ArgumentError("run it on ", TaskArgument("dataset", "polluted_kb"), " ", TaskArgument("path", "KB"))
    assert (err.argument, err.value) == ("dataset", "polluted_kb")
    assert render(err, "task") == str(err) == "run it on -T dataset=polluted_kb -T path=KB"
    assert render(err, "suite") == (
        f"run it on `dataset: polluted_kb` in that task's `args:`{NOTE} `path: KB` in that task's `args:`")
    assert render(err, "any") == (
        "run it on -T dataset=polluted_kb -T path=KB (in a suite file: `dataset: polluted_kb`, `path: KB` in "
        "that task's `args:`)")
    assert render(ArgumentError("no argument here"), "any") == "no argument here"
    assert str(TaskArgument("paths", "{a: FILE}")) == "-T paths='{a: FILE}'"  # a value with a space is quoted
    with pytest.raises(ValueError, match="unknown context 'shell'"):
        render(err, "shell")


def _raised(make) -> BaseException:
    with pytest.raises(ValueError) as got:
        make()
    return got.value


def _compose_unregistered_metric():
    from conflict_eval.components.compose import compose_task, declares_metric
    from conflict_eval.components.manager import register_plugin, unregister_plugin
    from conflict_eval.components.markers import hookimpl

    @declares_metric("no_such_metric")
    def odd_dataset(path=None):
        raise AssertionError("must not load")

    class Plugin:
        @hookimpl
        def conflict_eval_register_datasets(self):
            return {"odd_dataset": odd_dataset}

    register_plugin(Plugin(), name="odd_advice")
    try:
        compose_task("end_to_end", "odd_dataset")
    finally:
        unregister_plugin("odd_advice")


def _compose_unfit_scorer(tmp_path):
    from conflict_eval.components.compose import compose_task

    (tmp_path / "ff.jsonl").write_text(FREE_FORM)
    compose_task("end_to_end", "demo", "choice_accuracy", path=str(tmp_path / "ff.jsonl"))


def _too_few_distractors(tmp_path):
    from conflict_eval.plugins.user_needs.dataset import user_needs_uraq

    (tmp_path / "u.jsonl").write_text("".join(json.dumps(
        {"id": f"u{i}", "question": "Q?", "original_answer": "x", "manipulated_answer": "y",
         "original_knowledge": f"o{i}", "manipulated_knowledge": f"m{i}"}) + "\n" for i in range(3)))
    user_needs_uraq(path=str(tmp_path / "u.jsonl"), n_contexts="uraq")


def _state(record: ConflictQA) -> TaskState:
    sample = to_sample(record)
    return TaskState(model="scripted/x", sample_id=sample.id, epoch=1, input=sample.input, messages=[],
                     metadata=sample.metadata)


def _kb_record():
    from conflict_eval.kb.rag import kb_record

    kb_record(_state(ConflictQA(id="q1", dataset="demo", question="Q?", answers=["a"])))


def _given_documents():
    from conflict_eval.kb.documents import given_documents

    given_documents(ConflictQA(id="q1", dataset="demo", question="Q?", answers=["a"]), "standard_rag")


def _source(name):
    from conflict_eval.retrieval import servers, sources

    return {"text": sources.text_source, "kg": sources.kg_source, "web": sources.web_source,
            "server": lambda: servers.open_search_server("sparql+http://127.0.0.1:9/sparql")}[name]


# each site: how to raise it, str() (its default rendering), the suite rendering;
# the literal texts are the messages as written before, with each argument in its form
CASES = {
    "compose declared metric": (
        lambda tmp: _compose_unregistered_metric(), ArgumentError,
        "install its plugin or pass -T scorer=NAME",
        f"install its plugin or pass `scorer: NAME` in that task's `args:`{NOTE}"),
    "compose unfit scorer": (
        _compose_unfit_scorer, ArgumentError,
        "its samples have no answer options (sample 'f1'); pass another -T scorer=NAME",
        f"its samples have no answer options (sample 'f1'); pass another `scorer: NAME` in that task's `args:`{NOTE}"),
    "user_needs distractors": (
        _too_few_distractors, ArgumentError,
        "(use fewer contexts, more questions, or an external pool with -T distractors=FILE)",
        f"(use fewer contexts, more questions, or an external pool with `distractors: FILE` in that task's "
        f"`args:`{NOTE})"),
    "kb record": (
        lambda tmp: _kb_record(), ArgumentError,
        "sample q1: extra.kb_path is missing; this method runs on the polluted_kb dataset (-T dataset=polluted_kb "
        "-T path=KB_FILE) (in a suite file: `dataset: polluted_kb`, `path: KB_FILE` in that task's `args:`)",
        f"this method runs on the polluted_kb dataset (`dataset: polluted_kb` in that task's `args:`{NOTE} "
        "`path: KB_FILE` in that task's `args:`)"),
    "kb documents": (
        lambda tmp: _given_documents(), ArgumentError,
        "standard_rag: sample 'q1' (dataset 'demo') has neither a knowledge base (extra.kb_path: -T "
        "dataset=polluted_kb) nor documents of its own (in a suite file: `dataset: polluted_kb` in that task's "
        "`args:`)",
        f"has neither a knowledge base (extra.kb_path: `dataset: polluted_kb` in that task's `args:`{NOTE}) nor "
        "documents of its own"),
    "text source": (
        lambda tmp: _source("text")(), SourceError,
        "text source needs a corpus: pass -T text_corpus=FILE|INDEX_DIR|es+URL|colbert+URL (in a suite file: "
        "`text_corpus: FILE|INDEX_DIR|es+URL|colbert+URL` in that task's `args:`)",
        f"text source needs a corpus: pass `text_corpus: FILE|INDEX_DIR|es+URL|colbert+URL` in that task's "
        f"`args:`{NOTE}"),
    "kg source": (
        lambda tmp: _source("kg")(), SourceError,
        "kg source needs triples: pass -T kg_triples=FILE or -T kg_triples=sparql+URL (in a suite file: "
        "`kg_triples: FILE`, `kg_triples: sparql+URL` in that task's `args:`)",
        f"kg source needs triples: pass `kg_triples: FILE` in that task's `args:`{NOTE} or `kg_triples: "
        "sparql+URL` in that task's `args:`"),
    "web source": (
        lambda tmp: _source("web")(), SourceError,
        "web source needs pre-fetched pages (-T web_pages=FILE) or the search API (-T web_api=true with "
        "CONFLICT_EVAL_WEB_SEARCH_KEY set); or run without it: -T sources=text with -T "
        "text_corpus=FILE|INDEX_DIR|es+URL|colbert+URL (in a suite file: `web_pages: FILE`, `web_api: true`, "
        "`sources: text`, `text_corpus: FILE|INDEX_DIR|es+URL|colbert+URL` in that task's `args:`)",
        f"web source needs pre-fetched pages (`web_pages: FILE` in that task's `args:`{NOTE}) or the search API "
        "(`web_api: true` in that task's `args:` with CONFLICT_EVAL_WEB_SEARCH_KEY set); or run without it: "
        "`sources: text` in that task's `args:` with `text_corpus: FILE|INDEX_DIR|es+URL|colbert+URL` in that "
        "task's `args:`"),
    "search server": (
        lambda tmp: _source("server")(), SourceError,
        "'sparql+http://127.0.0.1:9/sparql': a sparql endpoint is not a passage corpus (use it as -T "
        "kg_triples=sparql+http://127.0.0.1:9/sparql) (in a suite file: `kg_triples: "
        "sparql+http://127.0.0.1:9/sparql` in that task's `args:`)",
        "a sparql endpoint is not a passage corpus (use it as `kg_triples: sparql+http://127.0.0.1:9/sparql` in "
        f"that task's `args:`{NOTE})"),
    # the sites that wrote -T by hand before issue 47
    "ramdocs breakdown": (
        lambda tmp: _ramdocs_groups(), ArgumentError,
        "strict_em: sample 's1' has no extra.ambiguous; the breakdowns need RAMDocs records (-T dataset=ramdocs) "
        "(in a suite file: `dataset: ramdocs` in that task's `args:`)",
        f"the breakdowns need RAMDocs records (`dataset: ramdocs` in that task's `args:`{NOTE})"),
    "conflictbench subset path": (
        lambda tmp: _conflictbench(subsets="ambigdocs"), ArgumentError,
        "conflictbench subset 'ambigdocs' needs a path (-T paths='{ambigdocs: FILE}')",
        f"conflictbench subset 'ambigdocs' needs a path (`paths: {{ambigdocs: FILE}}` in that task's `args:`{NOTE})"),
    "conflictbench one path": (
        lambda tmp: _conflictbench(subsets="ambigdocs,conflictingqa", path="x.json"), ArgumentError,
        "conflictbench: -T path=FILE is for one subset; use -T paths='{subset: FILE}'",
        f"conflictbench: `path: FILE` in that task's `args:`{NOTE} is for one subset; use `paths: {{subset: FILE}}` "
        "in that task's `args:`"),
}


def _ramdocs_groups():
    from inspect_ai.scorer import SampleScore, Score

    from conflict_eval.scorers.ramdocs.scorer import _groups

    _groups(SampleScore(score=Score(value=1), sample_id="s1", sample_metadata={}))


def _conflictbench(**args):
    from conflict_eval.tasks.conflictbench.task import conflictbench

    conflictbench(**args)


@pytest.mark.parametrize("name", CASES)
def test_each_error_renders_its_argument_per_command(tmp_path, name):
    make, kind, shown, suite = CASES[name]
    err = _raised(lambda: make(tmp_path))
    assert isinstance(err, kind) and isinstance(err, ValueError)
    assert argument_error(err) is err and err.argument and err.value
    assert shown in str(err), str(err)
    assert suite in render(err, "suite"), render(err, "suite")
    assert "-T" not in render(err, "suite").replace(NOTE, "")
    assert "`" not in render(err, "task") and render(err, "task") in str(err)  # str() is task (+ the suite form)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is type(err) and str(again) == str(err) and render(again, "suite") == render(err, "suite")
    assert (again.argument, again.value, again.in_sample) == (err.argument, err.value, err.in_sample)


def _error(capsys) -> str:
    [line] = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error:")]
    return line


def _suite(tmp_path, args: dict) -> list[str]:
    spec = ", ".join(f"{k}: {json.dumps(v)}" for k, v in args.items())
    (tmp_path / "s.yaml").write_text(f"name: advice\nmodels: [scripted/x]\ntasks:\n  - task: conflict_eval/run\n"
                                     f"    args: {{{spec}}}\n")
    return ["suite", "run", str(tmp_path / "s.yaml"), "--log-dir", str(tmp_path / "suite_logs"), "--display", "none",
            "--limit", "1"]


def test_run_and_suite_run_tell_the_scorer_as_they_take_it(tmp_path, capsys):
    (tmp_path / "ff.jsonl").write_text(FREE_FORM)
    code = main(["run", "--method", "end_to_end", "--dataset", "demo", "--path", str(tmp_path / "ff.jsonl"),
                 "--scorer", "choice_accuracy", "--model", "scripted/x", "--display", "none",
                 "--log-dir", str(tmp_path / "logs")])
    line = _error(capsys)
    assert code == 2 and line.endswith("pass another -T scorer=NAME"), line
    code = main(_suite(tmp_path, {"method": "end_to_end", "dataset": "demo", "path": str(tmp_path / "ff.jsonl"),
                                  "scorer": "choice_accuracy"}))
    line = _error(capsys)
    assert code == 2 and line.endswith(f"pass another `scorer: NAME` in that task's `args:`{NOTE}"), line
    assert not list(tmp_path.glob("*logs/*.eval"))  # nothing ran


NEED_TASK = "has no user_need; pass one -T user_need=... (context_exclusive, context_first, memory_first)"
NEED_SUITE = "(in a suite file: `user_need: ...` in that task's `args:`)"


def test_a_sample_error_says_both_forms_in_the_log_of_a_task_run(log_dir):
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "user_need_prompt", "dataset": "demo"},
                         model=scripted_model(["x"]), limit=1, log_dir=log_dir, display="none")
    assert log.status == "error" and f"{NEED_TASK} {NEED_SUITE}" in log.error.message


def test_a_sample_error_says_both_forms_in_the_log_of_a_suite_run(tmp_path, capsys):
    assert main(_suite(tmp_path, {"method": "user_need_prompt", "dataset": "demo"})) == 1
    [path] = Path(tmp_path / "suite_logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "error" and f"{NEED_TASK} {NEED_SUITE}" in log.error.message
    # and suite run (then suite status) say it, not only the log: the message's last line, which names the cause
    [line] = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error: scripted/x x ")]
    assert NEED_TASK in line and NEED_SUITE in line and line.endswith(f"(log: {path})"), line
    assert main(["suite", "status", str(tmp_path / "suite_logs")]) == 1
    assert [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("error: scripted/x x ")] == [line]


def test_the_conflictingqa_converter_prints_both_forms(tmp_path, capsys):
    import pandas as pd

    from conflict_eval.plugins.conflictbench.convert_conflictingqa import main as convert

    fixture = Path(__file__).resolve().parents[1] / "conflictbench" / "fixtures" / "handwritten_conflictingqa.jsonl"
    pd.DataFrame([json.loads(line) for line in fixture.open()]).to_pickle(tmp_path / "data.pkl")
    out = tmp_path / "cq.jsonl"
    assert convert([str(tmp_path / "data.pkl"), str(out), "--trust-pickle"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == f"use it with: -T path={out} (in a suite file: `path: {out}` in that task's `args:`)"
