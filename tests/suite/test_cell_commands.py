"""A cell's command reproduces the cell: the command copied from the page, run
as it stands (``python -m inspect_ai eval ...``), gives the same n, headline
value and results hash as the suite run it was copied from -- for a suite
``limit:`` and the shipped ``tiny`` suite."""

import json
import shlex
import subprocess
import sys

import pytest

from conflict_eval.report import build_leaderboard
from conflict_eval.report.commands import cell_command, reproduce_command
from conflict_eval.runs import load_suite, run_suite

LIMIT_SUITE = """
name: lim
models: [scripted/x]
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
    limit: 5
"""

def _cells(log_dir) -> dict:
    board = build_leaderboard([log_dir], bootstrap=0)
    out = {}
    for r in board["rows"]:
        c = board["provenance"]["cells"][f"{r.model}\t{r.task}"]
        out[(r.model, r.task)] = (r.n, r.metrics[r.headline].mean, c["results_sha256"], c)
    return out


def _run_command(command: str, log_dir) -> None:
    argv = shlex.split(command)
    assert argv[:2] == ["inspect", "eval"]
    res = subprocess.run([sys.executable, "-m", "inspect_ai", *argv[1:], "--log-dir", str(log_dir),
                          "--display", "none"], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr


def _check_reproduces(suite_dir, tmp_path):
    first = _cells(suite_dir)
    assert first
    for i, (key, (n, value, digest, cell)) in enumerate(first.items()):
        assert cell["command"], cell["why"]
        again = tmp_path / f"again-{i}"
        _run_command(cell["command"], again)
        (n2, value2, digest2, _), = _cells(again).values()
        assert (n2, value2, digest2) == (n, value, digest), (key, cell["command"])
    return first


@pytest.mark.parametrize("text,flag", [(LIMIT_SUITE, "--limit 5")])
def test_copied_command_gives_the_same_n_value_and_hash(tmp_path, text, flag):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    run = run_suite(load_suite(path), tmp_path / "logs", display="none")
    assert run.success
    cells = _check_reproduces(run.log_dir, tmp_path)
    (n, _, _, cell), = cells.values()
    assert flag in cell["command"]
    assert 0 < n < 8  # the cut, not the whole demo set (8 samples per conflict type)


def test_suite_limit_flag_beats_the_suite_limit_and_the_smaller_wins(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(LIMIT_SUITE)
    run = run_suite(load_suite(path), tmp_path / "logs", limit=2, display="none")
    (n, _, _, cell), = _cells(run.log_dir).values()
    assert n == 2 and cell["command"].endswith("--limit 2")


def _header(**kw):
    h = {"model": "openai/m", "task": "t", "task_registry_name": "conflict_eval/run", "task_args": {},
         "metadata": {"method": "end_to_end", "dataset": "demo", "options": {}}, "config": {}, "epochs": 1,
         "sample_ids": ["a", "b"]}
    h.update(kw)
    return h


def test_cells_one_command_cannot_reproduce_say_why():
    seeds = cell_command([_header(config={"seed": 0}), _header(config={"seed": 1})])
    assert seeds["command"] is None and "different settings" in seeds["why"] and len(seeds["commands"]) == 2
    suite = {"task": "conflict_eval/run", "args": {"method": "end_to_end", "dataset": "demo"},
             "selection": {"limit": None, "shard": [1, 2]}}
    comma = cell_command([_header(metadata={"suite": suite}, sample_ids=["x,y", "z"])])
    assert comma["command"] is None and "x,y" in comma["why"]
    # fnmatch characters in an id match only that id
    star = reproduce_command(_header(metadata={"suite": suite}, sample_ids=["q*1", "r?"]))
    assert "--sample-id 'q[*]1,r[?]'" in star


def test_plain_inspect_selection_flags_are_kept():
    cmd = reproduce_command(_header(limit=[2, 5], sample_shuffle=7))
    assert cmd.endswith("--limit 3-5 --sample-shuffle 7")
    assert reproduce_command(_header(sample_id=["a", "b"])).endswith("--sample-id a,b")


@pytest.mark.slow
def test_shipped_tiny_suite_cell_command_reproduces(tmp_path):
    """The shipped suite with the offline model, one task, one sample (a busy CPU)."""
    suite = load_suite("tiny")
    suite = type(suite)(**{**suite.__dict__, "tasks": suite.tasks[:1]})
    run = run_suite(suite, tmp_path / "logs", limit=1, display="none")
    assert run.success
    (n, _, _, cell), = _check_reproduces(run.log_dir, tmp_path).values()
    assert n == 1 and "--limit 1" in cell["command"] and "--max-tokens 16" in cell["command"]
    json.dumps(cell)
