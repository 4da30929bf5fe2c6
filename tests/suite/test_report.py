"""The report on real logs from scripted runs: a plain Inspect task run outside
a git checkout, and a page from two models x three tasks with an incomplete log,
a model name containing ``<script>`` and a dataset given by absolute path --
checked in the files and in headless Chromium."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conflict_eval.cli import main
from conflict_eval.report import IncompleteLogsError, build_leaderboard, write_leaderboard

PLAIN_TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def plain():
    return Task(dataset=[Sample(input="Say A", target="A", id="a"), Sample(input="Say B", target="B", id="b"),
                         Sample(input="Say C", target="C", id="c")],
                solver=generate(), scorer=includes())
'''


def test_plain_inspect_log_outside_a_git_checkout(tmp_path, monkeypatch):
    """A `generate()` task scored CORRECT/INCORRECT, run outside a checkout: the
    scores become a metric through Inspect's value_to_float, the missing git
    commit is shown as missing, and every output is written."""
    from inspect_ai import eval as inspect_eval

    from conflict_eval.testing import scripted_model

    (tmp_path / "plain_task.py").write_text(PLAIN_TASK)
    monkeypatch.chdir(tmp_path)  # not a git checkout: Inspect records no revision
    inspect_eval("plain_task.py", model=scripted_model(["A", "no idea", "C"]), log_dir="logs", display="none")
    board = build_leaderboard(["logs"], bootstrap=0)
    (row,) = board["rows"]
    # includes(): "A" in reply -> C, "no idea" -> I, "C" -> C: 2 of 3
    assert row.metrics["includes"].mean == pytest.approx(2 / 3) and row.n == 3 and row.complete
    task = board["provenance"]["tasks"]["plain"]
    assert task["git_commits"] == ["none recorded (Inspect found no git checkout)"]
    assert task["datasets"] == ["unknown"] and task["conflict_eval"] == ["not recorded"]
    assert main(["leaderboard", "logs", "--out", "out"]) == 0
    md = (tmp_path / "out" / "leaderboard.md").read_text()
    assert "none recorded (Inspect found no git checkout)" in md
    assert "inspect eval plain_task.py@plain --model mockllm/model" in md
    assert str(tmp_path) not in "".join(p.read_text() for p in (tmp_path / "out").iterdir())


EVIL = "oracle/<script>alert(1)</script>"
PRICES = "models:\n  flaky/*: {input: 2, output: 10}\n  oracle/*: {input: 1, output: 1}\n"
ESTIMATE = {"per_sample": {"calls": 1, "input_tokens": 90, "output_tokens": 2, "cost_usd": 0.0002},
            "total": {"calls": 4, "input_tokens": 360, "output_tokens": 8, "cost_usd": 0.0008}}
ABS_PATH = re.compile(r"(?<![\w.])/(tmp|work|root|home|Users|var)/")


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """2 models x 3 tasks: flaky/x crashes on mis-02 (its e2e/demo log ends in
    error: incomplete); the `<script>` model answers "<", a parse failure every
    time; the third task reads the demo file from an absolute path."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from conflict_eval.components.compose import compose_task

    tmp = tmp_path_factory.mktemp("page")
    data = tmp / "mydata" / "demo_copy.jsonl"
    data.parent.mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "conflict_eval" / "data" / "demo.jsonl", data)
    flag = tmp / "crash"
    flag.write_text("crash on mis-02")
    flaky = get_model("flaky/x", crash_flag=str(flag))
    logs = tmp / "logs"
    inspect_eval(compose_task("end_to_end", "demo"), model=[flaky, EVIL], log_dir=str(logs),
                 display="none", retry_on_error=0, limit=4)
    inspect_eval(compose_task("end_to_end", "demo", conflict_type="temporal"), model=[flaky, EVIL],
                 log_dir=str(logs), display="none", metadata={"conflict_eval_estimate": ESTIMATE}, limit=4)
    inspect_eval(compose_task("end_to_end", "demo", path=str(data), conflict_type="semantic"),
                 model=[flaky, EVIL], log_dir=str(logs), display="none", limit=4)
    prices = tmp / "prices.yaml"
    prices.write_text(PRICES)
    return tmp, logs, prices


def test_incomplete_log_refused_then_marked(page, capsys):
    tmp, logs, prices = page
    with pytest.raises(IncompleteLogsError, match=r"flaky/x x end_to_end/demo: \d/4 samples, log status error"):
        build_leaderboard([logs])
    assert main(["leaderboard", str(logs), "--out", str(tmp / "refused"), "--prices", str(prices)]) == 1
    assert "--allow-incomplete" in capsys.readouterr().err and not (tmp / "refused").exists()
    board = build_leaderboard([logs], allow_incomplete=True)
    cells = {(r.model, r.task): r for r in board["rows"]}
    assert len(cells) == 6 and [k for k, r in cells.items() if not r.complete] == [("flaky/x", "end_to_end/demo")]
    # paired comparisons and ties leave the incomplete cell out
    assert all(c.task != "end_to_end/demo" for c in board["comparisons"])
    c = next(c for c in board["comparisons"] if c.task == "end_to_end/demo(conflict_type=temporal)")
    assert (c.n, c.n_a, c.n_b) == (4, 4, 4)


@pytest.fixture(scope="module")
def outputs(page):
    tmp, logs, prices = page
    paths = write_leaderboard([logs], tmp / "out", prices_path=str(prices), allow_incomplete=True)
    return tmp, paths


def test_every_output_escapes_log_text_and_has_no_absolute_path(outputs):
    tmp, paths = outputs
    for kind, path in paths.items():
        text = path.read_text()
        assert str(tmp) not in text and not ABS_PATH.search(text), (kind, ABS_PATH.search(text))
        if kind == "md":  # a fenced block is literal text in Markdown (the commands to copy): raw there only
            text = re.sub(r"^(`{3,})sh\n.*?^\1$", "", text, flags=re.S | re.M)
        if kind in ("html", "md", "json"):
            assert "<script>alert" not in text, kind
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in paths["md"].read_text()
    assert json.loads(paths["json"].read_text())["rows"][0]["model"] in ("flaky/x", EVIL)  # still the raw name as data
    # the dataset given by absolute path: folder/name#sha8 in labels, folder/name in commands, full sha256 recorded
    md = paths["md"].read_text()
    from conflict_eval.records.download import sha256_file

    sha = sha256_file(tmp / "mydata" / "demo_copy.jsonl")
    assert f"path=mydata/demo_copy.jsonl#{sha[:8]}" in md and sha in md
    assert "-T path=mydata/demo_copy.jsonl" in md


def test_markdown_cells_say_n_cost_failures_and_status(outputs):
    _, paths = outputs
    md = paths["md"].read_text()
    matrix = [line for line in md.splitlines() if line.startswith("| flaky/x |") or line.startswith("| oracle/&lt;")][:2]
    flaky, evil = matrix
    assert "incomplete " in flaky and "/4" in flaky
    # every run cell has n and $, the parse-failure cells say so instead of a bare 0.000
    for line in matrix:
        cells = line.strip("|").split(" | ")[1:]
        assert len(cells) == 3 and all("n=" in c and "$" in c for c in cells), line
    assert evil.count("0.000 [0.000, 0.") == 3 and evil.count("100% parse failures") == 3
    # the run-time estimate against the actual run
    assert "calls/sample 1.00 est vs 1.00; tokens in/out per sample 90/2 est vs " in md
    assert "Wilson score interval" in md


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _browser(browser: str, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp / f"profile-{len(list(tmp.iterdir()))}"
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
           f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_page_in_headless_chromium(outputs, tmp_path):
    """The page as a browser renders it: 2 x 3 matrix with the incomplete marker,
    n and $ in every cell, a reproduce command per cell, the `<script>` model
    name as text (no alert element), no absolute path; a screenshot to look at."""
    browser = _chromium()
    if browser is None:
        pytest.fail("no headless chromium on this machine: apt-get install -y chromium")
    _, paths = outputs
    url = Path(paths["html"]).as_uri()
    dom = _browser(browser, tmp_path, "--virtual-time-budget=5000", "--dump-dom", url).stdout
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', re.search(r"<body[^>]*>", dom).group(0)))
    assert attrs["matrix-rows"] == "2" and attrs["matrix-cols"] == "3", attrs
    assert attrs["incomplete"] == "1" and attrs["not-run"] == "0"
    assert attrs["commands"] == "6" and int(attrs["value-labels"]) >= 6
    assert attrs["plots"] == attrs["plots-visible"] and attrs["colour-mismatches"] == "0"
    matrix = re.search(r'<table id="matrix">.*?</table>', dom, re.S).group(0)
    cells = re.findall(r"<td(?: class=\"incomplete\")?><a .*?</td>", matrix, re.S)
    assert len(cells) == 6 and all("n=" in c and "$" in c for c in cells)
    assert re.search(r'<td class="incomplete">.*?incomplete \d/4', matrix, re.S)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert dom.count("<script") == 1  # only the page's own
    assert "inspect eval conflict_eval/run -T method=end_to_end -T dataset=demo -T conflict_type=temporal" in dom
    assert not ABS_PATH.search(dom.replace(url, ""))
    shot = tmp_path / "report-page.png"
    _browser(browser, tmp_path, f"--screenshot={shot}", "--window-size=1400,2400", url)
    assert shot.is_file() and shot.stat().st_size > 20_000
    keep = os.environ.get("CONFLICT_EVAL_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep.replace(".png", "-report.png"))
        shot = Path(keep.replace(".png", "-report.png"))
    print(f"screenshot: {shot}")


def test_spend_includes_failed_attempts_that_were_retried(tmp_path):
    """A sample whose first attempt fails after its model call (retry_on_error=1):
    Inspect keeps only the last attempt in model_usage; the $ total adds the
    failed attempt's call, found in the sample's error_retries events."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate, solver

    from conflict_eval.testing import scripted_model

    failed = []

    @solver
    def fail_once():
        async def solve(state, gen):
            if state.sample_id == "b" and not failed:
                failed.append(1)
                raise RuntimeError("after the model call")
            return state
        return solve

    task = Task(dataset=[Sample(input="one two", target="A", id="a"), Sample(input="three four", target="B", id="b")],
                solver=[generate(), fail_once()], scorer=match(), name="retried")
    from inspect_ai.model import ModelCost, ModelInfo, get_model_info, set_model_info

    # $1 per token: $ = tokens, whether Inspect prices the calls (another test may have
    # registered a price for mockllm/model in this process) or the fallback table does
    before = get_model_info("mockllm/model")
    set_model_info("mockllm/model", ModelInfo(cost=ModelCost(input=1_000_000, output=1_000_000,
                                                                input_cache_write=1_000_000, input_cache_read=1_000_000)))
    try:
        inspect_eval(task, model=scripted_model(lambda prompt: "A"), log_dir=str(tmp_path), display="none",
                     retry_on_error=1)
    finally:
        set_model_info("mockllm/model", before or ModelInfo())
    prices = {"mockllm/*": {"input": 1_000_000, "output": 1_000_000}}
    (row,) = build_leaderboard([tmp_path], prices, bootstrap=0)["rows"]
    assert row.n == 2 and row.complete
    # each call: 2 input words + 1 output word = $3; a, b and b's failed attempt: 3 calls
    assert row.cost_per_sample == pytest.approx(3.0) and row.cost_total == pytest.approx(9.0)


def test_a_log_killed_before_any_sample_is_an_incomplete_cell(tmp_path):
    """A run killed at once leaves a header and no samples: the cell is shown
    (with --allow-incomplete) as incomplete 0/N, never silently missing."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log, write_eval_log

    from conflict_eval.components.compose import compose_task
    from conflict_eval.report.format import cell_text

    (log,) = inspect_eval(compose_task("end_to_end", "demo"), model="oracle/A", limit=3, display="none",
                          log_dir=str(tmp_path / "done"))
    killed = read_eval_log(log.location)
    killed.status, killed.samples, killed.results = "started", [], None
    killed.eval.model, killed.eval.eval_id = "oracle/B", "killed-at-once"
    write_eval_log(killed, str(tmp_path / "killed" / "killed.eval"))
    with pytest.raises(IncompleteLogsError, match=r"oracle/B x end_to_end/demo: 0/3 samples, log status started"):
        build_leaderboard([tmp_path])
    rows = {r.model: r for r in build_leaderboard([tmp_path], allow_incomplete=True)["rows"]}
    assert rows["oracle/A"].complete and not rows["oracle/B"].complete
    assert cell_text(rows["oracle/B"]) == "no metric · incomplete 0/3 · n=0 · $ n/a"
