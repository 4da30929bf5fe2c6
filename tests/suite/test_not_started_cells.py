"""A leaderboard never hides a missing cell: a task a suite planned that never
started (in ``eval-set.json``, no log) is an incomplete cell, 0/N, with N from
what ``suite run`` recorded and ``?`` (never 0) when nothing recorded it; a cell
with no finished sample shows its calls and tokens as n/a, not 0; Markdown shows
a quote as a quote and still neutralises ``|``, line breaks and HTML.

One real suite (``run_suite``, scripted model, 2 tasks x 2 samples) is run per
module; a never-started task is made by removing one task's log (the manifest
Inspect wrote still lists it), a cell with no finished sample by rewriting a
log with Inspect's own writer."""

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log

from conflict_eval.cli import main
from conflict_eval.report import IncompleteLogsError, build_leaderboard, write_leaderboard
from conflict_eval.report.format import md_escape
from conflict_eval.report.manifest import CELLS_FILE, MANIFEST_FILE
from conflict_eval.runs import load_suite, run_suite
from conflict_eval.runs.status import render_status, task_statuses
from conflict_eval.runs.walltime import duration_text

SUITE = """name: two
models:
  - model: scripted/x
    args: {reply: "B</a>"}
defaults: {config: {max_tokens: 16}, limit: 2}
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
  - task: conflict_eval/run
    name: temporal-two
    args: {method: end_to_end, dataset: demo, conflict_type: temporal}
"""
NAMED = "temporal-two"  # the second task's suite name: its cell's name, logged or not


@pytest.fixture(scope="module")
def suite_logs(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("two")
    (tmp / "two.yaml").write_text(SUITE)
    run = run_suite(load_suite(tmp / "two.yaml"), tmp / "logs", display="none")
    assert run.success
    return tmp / "logs"


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _drop_log_of(log_dir: Path, label: str) -> str:
    """Remove the log of the task the leaderboard names ``label``; returns that name as the full run had it."""
    rows = build_leaderboard([log_dir], bootstrap=0)["rows"]
    (row,) = [r for r in rows if r.task == label]
    (log,) = row.status.logs
    (log_dir / log).unlink()
    return row.task


def test_a_task_that_never_started_is_an_incomplete_cell_named_as_when_logged(suite_logs, tmp_path):
    log_dir = _copy(suite_logs, tmp_path / "logs")
    assert (log_dir / MANIFEST_FILE).is_file() and (log_dir / CELLS_FILE).is_file()
    name = _drop_log_of(log_dir, NAMED)
    with pytest.raises(IncompleteLogsError) as err:
        build_leaderboard([log_dir], bootstrap=0)
    assert f"scripted/x x {name}: not started, 0/2 samples" in str(err.value)  # limit 2, one epoch
    board = build_leaderboard([log_dir], bootstrap=0, allow_incomplete=True)
    cells = {r.task: r for r in board["rows"]}
    assert set(cells) == {"end_to_end/demo", name}  # listed once, under the name its log had
    r = cells[name]
    assert (r.status.done, r.status.total, r.complete, r.n) == (0, 2, False, 0)
    assert (r.calls, r.input_tokens, r.output_tokens) == (None, None, None)
    assert board["stats"]["incomplete_cells"] == 1
    # suite status names and counts it the same way (one reader of the manifest)
    st = {s.label: s for s in task_statuses(log_dir)}
    assert (st[NAMED].status, st[NAMED].done, st[NAMED].total) == ("not started", 0, 2)
    assert re.search(r"not started\s+0/2\s", render_status(list(st.values())))


def test_cli_refuses_it_then_shows_it_not_started_in_every_format(suite_logs, tmp_path, capsys):
    log_dir = _copy(suite_logs, tmp_path / "logs")
    name = _drop_log_of(log_dir, NAMED)
    assert main(["leaderboard", str(log_dir), "--out", str(tmp_path / "no"), "--bootstrap", "0"]) == 1
    assert "not started" in capsys.readouterr().err
    out = tmp_path / "board"
    assert main(["leaderboard", str(log_dir), "--out", str(out), "--bootstrap", "0", "--allow-incomplete"]) == 0
    md = (out / "leaderboard.md").read_text()
    assert "not started 0/2" in md and "1 incomplete cell(s)" in md
    detail = next(line for line in md[md.index(f"## {name}"):].splitlines() if line.startswith("| scripted/x"))
    cols = [c.strip() for c in detail.strip("|").split("|")]
    assert cols[8:11] == ["n/a", "n/a", "n/a"]  # calls/sample, tokens in, tokens out
    html = (out / "leaderboard.html").read_text()
    assert "not started 0/2" in html and 'class="incomplete"' in html
    [row] = [r for r in csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())) if r["task"] == name]
    assert (row["calls_per_sample"], row["input_tokens_per_sample"], row["samples_total"]) == ("", "", "2")
    [j] = [r for r in json.loads((out / "leaderboard.json").read_text())["rows"] if r["task"] == name]
    assert (j["calls"], j["input_tokens"], j["output_tokens"]) == (None, None, None)
    assert (j["status"]["total"], j["status"]["complete"]) == (2, False)


def test_without_the_suite_record_its_total_is_unknown_never_zero(suite_logs, tmp_path):
    log_dir = _copy(suite_logs, tmp_path / "logs")
    _drop_log_of(log_dir, NAMED)
    (log_dir / CELLS_FILE).unlink()  # a plain `inspect eval-set` writes only the manifest
    board = build_leaderboard([log_dir], bootstrap=0, allow_incomplete=True)
    canonical = "end_to_end/demo(conflict_type=temporal)"  # the manifest's task and args, as the board names them
    r = {r.task: r for r in board["rows"]}[canonical]
    assert r.status.total is None and not r.complete
    assert "not started 0/?" in write_leaderboard([log_dir], tmp_path / "b", bootstrap=0, allow_incomplete=True)[
        "md"].read_text()
    st = {s.label: s for s in task_statuses(log_dir)}[canonical]
    assert (st.status, st.total) == ("not started", None)


def test_a_cell_with_no_finished_sample_has_no_calls_or_tokens(suite_logs, tmp_path):
    log_dir = _copy(suite_logs, tmp_path / "logs")
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info)
        if log.eval.metadata["suite"]["label"] == NAMED:  # cancelled before any sample finished
            log.status, log.samples, log.results = "cancelled", [], None
            write_eval_log(log, info.name)
    board = build_leaderboard([log_dir], bootstrap=0, allow_incomplete=True)
    r = {r.task: r for r in board["rows"]}[NAMED]
    assert (r.n, r.status.done, r.status.total) == (0, 0, 2)
    assert (r.calls, r.input_tokens, r.output_tokens) == (None, None, None)
    from conflict_eval.report import to_markdown

    detail = next(line for line in to_markdown(board).split(f"## {NAMED}")[1].splitlines()
                  if line.startswith("| scripted/x"))
    assert "0.00" not in detail and "0.0 |" not in detail


HOSTILE = ["Cohen's κ", 'a "quoted" | piped\nname', "<script>alert('x')</script>", "A & B"]


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_cells_show_quotes_and_neutralise_pipes_breaks_and_html(text):
    out = md_escape(text)
    assert "&#x27;" not in out and "&quot;" not in out  # a quote is shown as itself
    assert "'" in out or "'" not in text
    assert "\n" not in out and "<" not in out and ">" not in out
    assert not re.search(r"(?<!\\)\|", out)  # every | escaped: the table keeps its columns


def test_markdown_page_with_hostile_names(suite_logs):
    from conflict_eval.report import to_markdown

    board = build_leaderboard([suite_logs], bootstrap=0)
    for r in board["rows"]:
        r.model = "Cohen's <script>x</script> | m\nodel"
    md = to_markdown(board)
    assert "Cohen's &lt;script&gt;x&lt;/script&gt; \\| m odel" in md and "<script>" not in md
    lines = md.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| model |"))  # the matrix

    def columns(line: str) -> int:
        return len(re.findall(r"(?<!\\)\|", line))

    assert lines[head + 2].startswith("| Cohen's") and columns(lines[head + 2]) == columns(lines[head])


@pytest.mark.parametrize("seconds, text", [(59.94, "59.9 s"), (59.96, "1 min 0 s"), (3599.4, "59 min 59 s"),
                                           (3599.6, "1 h 00 min")])
def test_duration_text_rolls_over_at_its_boundaries(seconds, text):
    assert duration_text(seconds) == text


def test_a_plan_cell_no_worker_started_is_named_and_counted(tmp_path, capsys):
    """`suite plan` + `suite worker`: workers run in Inspect's selection mode, which writes no
    manifest; the plan's record in the shared log folder lists the cells no worker started,
    under the suite's name and with their totals, on `suite status LOG` and the leaderboard."""
    from conflict_eval.runs.plan import make_plan
    from conflict_eval.runs.worker import run_worker

    (tmp_path / "two.yaml").write_text(SUITE.replace("models:\n", 'models:\n  - model: scripted/y\n'
                                                                   '    args: {reply: "A</a>"}\n'))
    log_dir = tmp_path / "shared"  # not under the plan folder: `suite status LOG` cannot find the plan
    plan = make_plan(str(tmp_path / "two.yaml"), tmp_path / "plan", workers=4, log_dir=str(log_dir))
    assert [len(w["cells"]) for w in plan["workers"]] == [1, 1, 1, 1]
    first = next(c for c in plan["cells"] if c["name"] == plan["workers"][0]["cells"][0])
    assert run_worker(tmp_path / "plan" / plan["workers"][0]["selection"]).success
    assert not (log_dir / MANIFEST_FILE).exists()  # selection mode: no eval-set.json
    cells = {("scripted/x", "end_to_end/demo"), ("scripted/x", NAMED), ("scripted/y", "end_to_end/demo"),
             ("scripted/y", NAMED)}
    unstarted = cells - {(first["model"], first["label"])}
    st = {(s.model, s.label): s for s in task_statuses(log_dir)}
    assert set(st) == cells  # each cell once: the worker's own is not also "not started"
    assert [(st[k].status, st[k].done, st[k].total) for k in sorted(unstarted)] == [("not started", 0, 2)] * 3
    assert st[(first["model"], first["label"])].complete
    capsys.readouterr()
    assert main(["suite", "status", str(log_dir)]) == 1
    out = capsys.readouterr().out
    assert "INCOMPLETE: 3 of 4 unfinished" in out and len(re.findall(r"not started\s+0/2\s", out)) == 3
    board = build_leaderboard([log_dir], bootstrap=0, allow_incomplete=True)
    rows = {(r.model, r.task): r for r in board["rows"]}
    assert set(rows) == cells and board["stats"]["incomplete_cells"] == 3
    assert [(rows[k].status.done, rows[k].status.total) for k in sorted(unstarted)] == [(0, 2)] * 3
