"""A loader that cannot get its data raises ``records.DataNeeded`` (dataset, file,
record, field, kind); each command tells the fix as it takes the file: ``-T path=FILE``
for ``inspect eval`` / ``conflict-eval run``, ``path: FILE`` in the task's ``args:``
for suite commands. No message is rewritten after the fact."""

import pickle

import pytest

from conflict_eval.cli import main
from conflict_eval.records import DataNeeded
from conflict_eval.records.download import DownloadError, github_file

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
    assert str(err) == "conflictbench_ambigdocs needs -T path=FILE: test.json of yoonsanglee/AmbigDocs"
    assert err.render("suite") == ("conflictbench_ambigdocs needs `path: FILE` in that task's `args:` (a copy of "
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
    assert "-T" not in err.render("suite").replace("suite commands take no -T", "")
    assert isinstance(pickle.loads(pickle.dumps(err)), DownloadError)


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
