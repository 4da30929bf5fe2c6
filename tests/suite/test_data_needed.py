"""A loader that cannot get its data raises ``records.DataNeeded`` (dataset, file,
record, field, kind); each command tells the fix as it takes the file: ``-T path=FILE``
for ``inspect eval`` / ``conflict-eval run``, ``path: FILE`` in the task's ``args:``
for suite commands. No message is rewritten after the fact."""

import json
import pickle

import pytest

from conflict_eval.cli import main
from conflict_eval.records import DataNeeded, TaskArgument
from conflict_eval.records.download import DownloadError, github_file
from conflict_eval.runs.arguments import render

SUITE = """name: needs
models: [scripted/x]
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: conflictbench_ambigdocs}
"""


def test_the_error_carries_what_is_missing_and_renders_per_command():
    err = DataNeeded("conflictbench_ambigdocs", "required", "test.json of yoonsanglee/AmbigDocs")
    assert (err.dataset, err.kind, err.field, err.file, err.record) == (
        "conflictbench_ambigdocs", "required", "path", None, None)
    assert (err.argument, err.value) == ("path", "FILE") and err.arguments == [TaskArgument("path")]
    assert str(err) == "conflictbench_ambigdocs needs -T path=FILE: test.json of yoonsanglee/AmbigDocs"
    assert render(err, "suite") == ("conflictbench_ambigdocs needs `path: FILE` in that task's `args:` (a copy of "
                                   "the suite file; suite commands take no -T): test.json of yoonsanglee/AmbigDocs")
    assert str(pickle.loads(pickle.dumps(err))) == str(err)
    with pytest.raises(ValueError, match="unknown missing-data kind"):
        DataNeeded("x", "lost")


def test_a_download_offline_is_data_needed(monkeypatch):
    monkeypatch.setenv("CONFLICT_EVAL_OFFLINE", "1")
    with pytest.raises(DownloadError) as got:
        github_file("o/r", "0" * 40, "d.json")
    err = got.value
    assert isinstance(err, DataNeeded) and err.kind == "offline" and err.file == f"github/o/r/{'0' * 40}/d.json"
    assert str(err).endswith("give a local copy as -T path=FILE")
    assert "-T" not in render(err, "suite").replace("suite commands take no -T", "")
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, DownloadError) and str(again) == str(err) and again.kind == "offline"


def _error(capsys) -> str:
    [line] = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error:")]
    return line


def test_suite_run_tells_the_suite_fix(tmp_path, capsys):
    (tmp_path / "s.yaml").write_text(SUITE)
    code = main(["suite", "run", str(tmp_path / "s.yaml"), "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    line = _error(capsys)
    assert code == 2 and "conflictbench_ambigdocs needs `path: FILE` in that task's `args:`" in line
    assert "-T path" not in line


def test_run_tells_the_task_argument(capsys):
    code = main(["run", "--dataset", "conflictbench_ambigdocs", "--model", "scripted/x", "--display", "none"])
    line = _error(capsys)
    assert code == 2 and "conflictbench_ambigdocs needs -T path=FILE: test.json" in line


# Loader errors that advise a data file (not a missing one) render per command too.

def test_an_unknown_memory_model_advises_the_path_argument_per_command():
    from conflict_eval.plugins.conflictqa.dataset import conflictqa
    from conflict_eval.records.errors import argument_error

    with pytest.raises(ValueError, match="unknown memory_model 'gpt5'") as got:
        conflictqa(memory_model="gpt5")
    err = argument_error(got.value)
    assert err is got.value
    assert str(err).endswith("(or pass any upstream per-model file as -T path=FILE)")
    assert render(err, "suite").endswith("(or pass any upstream per-model file as `path: FILE` in that task's "
                                        "`args:` (a copy of the suite file; suite commands take no -T))")
    assert str(pickle.loads(pickle.dumps(err))) == str(err)


def test_a_pickle_advises_the_converted_file_per_command(tmp_path):
    from conflict_eval.plugins.conflictbench.dataset import conflictingqa_records
    from conflict_eval.records import DataFileError

    (tmp_path / "data.pkl").write_bytes(b"\x80\x04K\x01.")  # a pickle of 1
    with pytest.raises(DataFileError) as got:
        conflictingqa_records(tmp_path / "data.pkl")
    err = got.value
    assert str(err).endswith("then pass it as -T path=conflictingqa.jsonl")
    assert "then pass it as `path: conflictingqa.jsonl` in that task's `args:`" in render(err, "suite")
    assert "-T path" not in render(err, "suite")
    [problem] = err.problems
    assert str(problem).endswith("then pass it as -T path=conflictingqa.jsonl")
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and render(again, "suite") == render(err, "suite")


@pytest.mark.parametrize("args, task_form, suite_form", [
    ({"dataset": "conflictqa", "memory_model": "gpt5"},
     "file as -T path=FILE)", "file as `path: FILE` in that task's `args:`"),
    ({"dataset": "conflictbench_conflictingqa", "path": "{tmp}/data.pkl"},
     "then pass it as -T path=conflictingqa.jsonl", "then pass it as `path: conflictingqa.jsonl` in that task's `args:`"),
], ids=["conflictqa", "conflictbench"])
def test_run_and_suite_run_tell_the_advice_as_they_take_the_file(tmp_path, capsys, args, task_form, suite_form):
    (tmp_path / "data.pkl").write_bytes(b"\x80\x04K\x01.")
    args = {k: v.replace("{tmp}", str(tmp_path)) for k, v in args.items()}
    options = [x for k, v in args.items() if k != "dataset" for x in ("-T", f"{k}={v}")]
    code = main(["run", "--dataset", args["dataset"], *options, "--model", "scripted/x", "--display", "none"])
    line = _error(capsys)
    assert code == 2 and task_form in line, line
    spec = ", ".join(f"{k}: {json.dumps(v)}" for k, v in {"method": "end_to_end", **args}.items())
    (tmp_path / "s.yaml").write_text(f"name: advice\nmodels: [scripted/x]\ntasks:\n  - task: conflict_eval/run\n"
                                     f"    args: {{{spec}}}\n")
    code = main(["suite", "run", str(tmp_path / "s.yaml"), "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    line = _error(capsys)
    assert code == 2 and suite_form in line and "-T path" not in line, line
