"""Leaderboard aggregation on logs from scripted suite runs: golden values by
hand, a crashed-and-resumed run, duplicate logs, prices, HTML."""

import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from conflict_eval.cli import main
from conflict_eval.report import (
    IncompleteLogsError,
    build_leaderboard,
    write_leaderboard,
)
from conflict_eval.pricing import PriceTable, load_model_cost_config
from conflict_eval.runs import ModelSpec, load_suite, run_suite

SUITE = """name: lb
models: [flaky/x]
defaults: {limit: 4}
tasks:
  - task: conflict_eval/run
    name: e2e/demo
    args: {method: end_to_end, dataset: demo}
  - task: conflict_eval/run
    name: e2e/demo-temporal
    args: {method: end_to_end, dataset: demo, conflict_type: temporal}
"""
PRICES = {"flaky/x": {"input": 2.0, "output": 10.0}}

# Hand-computed from the replies planned in conftest.PLAN and the demo gold letters
# (mis-01..04 gold A B C B, conflict options C C A A; tmp-01..04 gold B C B ?, conflict C A A ?):
#   e2e/demo:          mis-01 right, mis-02 wrong ("A", not the conflict option C), mis-03 unparseable,
#                      mis-04 right -> accuracy 2/4 = 0.5, misled 0/4 = 0, parse failures 1/4 = 0.25;
#                      stderr = sd([1,0,0,1]) / sqrt(4) = sqrt((4 * 0.25) / 3) / 2 = 0.288675
#   e2e/demo-temporal: tmp-01 right, tmp-02 right, tmp-03 wrong = "A" = its conflict option,
#                      tmp-04 unparseable -> accuracy 0.5, misled 1/4 = 0.25, parse failures 0.25
EXPECTED = {
    "e2e/demo": {"accuracy": 0.5, "misled": 0.0, "parse": 0.25},
    "e2e/demo-temporal": {"accuracy": 0.5, "misled": 0.25, "parse": 0.25},
}
SE = math.sqrt(1 / 3) / 2


def _suite(tmp_path):
    path = tmp_path / "lb.yaml"
    path.write_text(SUITE)
    return load_suite(path)


@pytest.fixture(scope="module")
def plain_logs(tmp_path_factory):
    """One complete scripted run of the suite, shared by the read-only tests."""
    tmp = tmp_path_factory.mktemp("plain")
    ok, _ = run_suite(_suite(tmp), tmp / "logs", display="none")
    assert ok
    return tmp / "logs"


def _check_golden(rows, n=4):
    by_task = {r.task: r for r in rows}
    assert set(by_task) == set(EXPECTED)
    for task, exp in EXPECTED.items():
        r = by_task[task]
        assert r.model == "flaky/x" and r.n == n and r.errors == 0
        assert r.metrics["accuracy"].mean == pytest.approx(exp["accuracy"])
        assert r.metrics["accuracy"].stderr == pytest.approx(SE)
        assert r.metrics["misled"].mean == pytest.approx(exp["misled"])
        assert r.parse_failure_rate == pytest.approx(exp["parse"])
        assert "parse_failure" not in r.metrics
        assert r.calls == 1


def test_golden_values_calls_tokens_and_cost(plain_logs):
    rows = build_leaderboard([plain_logs], PRICES)["rows"]
    _check_golden(rows)
    # tokens: the flaky model counts words; compute them from the logged prompts and replies
    for r in rows:
        words_in, words_out = [], []
        for info in list_eval_logs(str(plain_logs)):
            log = read_eval_log(info)
            if log.eval.metadata["suite"]["label"] == r.task:
                for s in log.samples:
                    words_in.append(len(s.messages[0].text.split()))
                    words_out.append(len(s.output.completion.split()))
        assert r.input_tokens == pytest.approx(sum(words_in) / 4)
        # the completion has "<a>" put back in front of a reply like "A</a>" -> same word count
        assert r.output_tokens == pytest.approx(sum(words_out) / 4)
        # $ per sample = (in * 2 + out * 10) / 1e6, averaged
        assert r.cost_per_sample == pytest.approx((r.input_tokens * 2 + r.output_tokens * 10) / 1e6)
        assert r.cost_total == pytest.approx(4 * r.cost_per_sample)
    # the same metric as Inspect's own results for a single complete log
    for info in list_eval_logs(str(plain_logs)):
        log = read_eval_log(info, header_only=True)
        acc = next(s for s in log.results.scores if s.name == "accuracy")
        row = next(r for r in rows if r.task == log.eval.metadata["suite"]["label"])
        assert row.metrics["accuracy"].mean == pytest.approx(acc.metrics["accuracy"].value)
        assert row.metrics["accuracy"].stderr == pytest.approx(acc.metrics["stderr"].value)


def test_crashed_and_resumed_run_counts_each_sample_once(tmp_path):
    flag = tmp_path / "crash"
    flag.write_text("crash on mis-02")
    suite = _suite(tmp_path)
    model = [ModelSpec("flaky/x", args={"crash_flag": str(flag)})]
    ok, _ = run_suite(suite, tmp_path / "logs", models=model, display="none", retry_attempts=0)
    assert not ok  # the e2e/demo task failed on mis-02
    with pytest.raises(IncompleteLogsError, match=r"flaky/x x e2e/demo: 3/4 samples, log status error"):
        build_leaderboard([tmp_path / "logs"], PRICES)
    crashed = build_leaderboard([tmp_path / "logs"], PRICES, allow_incomplete=True)["rows"]
    demo_row = next(r for r in crashed if r.task == "e2e/demo")
    assert demo_row.errors == 1 and demo_row.n <= 3
    assert not demo_row.complete and (demo_row.status.done, demo_row.status.total) == (3, 4)
    assert next(r for r in crashed if r.task == "e2e/demo-temporal").complete
    saved = tmp_path / "crashed-copy"
    shutil.copytree(tmp_path / "logs", saved)  # keep the failed log even if Inspect cleans it up
    flag.unlink()
    ok, _ = run_suite(suite, tmp_path / "logs", models=model, display="none", retry_attempts=0)
    assert ok
    board = build_leaderboard([tmp_path / "logs", saved], PRICES)  # the crashed copy is resumed: complete
    _check_golden(board["rows"])
    assert all(r.complete for r in board["rows"])
    assert board["stats"]["duplicates_dropped"] >= 4 + demo_row.n + 1  # copies of every sample


def test_duplicate_log_copies(plain_logs, tmp_path):
    shutil.copytree(plain_logs, tmp_path / "b")  # the same logs synced from a second machine
    board = build_leaderboard([plain_logs, tmp_path / "b"], PRICES)
    assert board["stats"]["duplicates_dropped"] == 8
    _check_golden(board["rows"])


def test_bootstrap_interval(plain_logs):
    rows = build_leaderboard([plain_logs], PRICES, bootstrap=400, seed=1)["rows"]
    lo, hi = rows[0].metrics["accuracy"].ci
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0 and lo < hi


def test_price_table(tmp_path):
    table = PriceTable.load()
    mini = table.price("openai/gpt-4o-mini").cost  # genai-prices: OpenAI's list price, $/1M tokens
    assert (mini.input, mini.output) == (0.15, 0.60)
    assert table.price("anthropic/claude-3-5-haiku-latest").cost.output == 4.0
    assert table.price("conflict_eval/smollm2").cost.input == 0.0  # the price file's glob
    assert table.price("unknown/model").cost is None
    bad = tmp_path / "p.yaml"
    bad.write_text("models:\n  a/b: {input: 1}\n")
    with pytest.raises(ValueError, match=r"p.yaml: model 'a/b': field 'output' is missing"):
        PriceTable.load(prices=bad)


def test_costs_prefer_what_inspect_recorded_then_cost_config_then_price_file(tmp_path):
    """Inspect prices a sample itself when the model has cost data (here set with
    the public set_model_info); the leaderboard uses that, else --model-cost-config,
    else the fallback price file -- and says which."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelCost, ModelInfo, set_model_info

    from conflict_eval.components.compose import compose_task

    set_model_info("oracle/B", ModelInfo(cost=ModelCost(input=3, output=30, input_cache_write=3, input_cache_read=3)))
    inspect_eval([compose_task("end_to_end", "demo", limit=2)], model=["oracle/A", "oracle/B"],
                 log_dir=str(tmp_path / "logs"), display="none")
    cfg = tmp_path / "costs.yaml"
    cfg.write_text("oracle/A: {input: 1, output: 5, input_cache_write: 1, input_cache_read: 0.5}\n")
    fallback = {"oracle/*": {"input": 100, "output": 100}}
    rows = {r.model: r for r in build_leaderboard([tmp_path / "logs"], fallback, bootstrap=0,
                                                  cost_config=load_model_cost_config(cfg))["rows"]}
    # per sample: (input tokens * $/1M in + output tokens * $/1M out) / 1e6, averaged over samples
    assert rows["oracle/B"].cost_source == "inspect"
    assert rows["oracle/B"].cost_per_sample == pytest.approx((rows["oracle/B"].input_tokens * 3 + rows["oracle/B"].output_tokens * 30) / 1e6)
    assert rows["oracle/A"].cost_source == "model-cost-config"
    assert rows["oracle/A"].cost_per_sample == pytest.approx((rows["oracle/A"].input_tokens * 1 + rows["oracle/A"].output_tokens * 5) / 1e6)
    rows = {r.model: r for r in build_leaderboard([tmp_path / "logs"], fallback, bootstrap=0)["rows"]}
    assert rows["oracle/A"].cost_source == "price file"
    assert rows["oracle/A"].cost_per_sample == pytest.approx((rows["oracle/A"].input_tokens + rows["oracle/A"].output_tokens) * 100 / 1e6)


def test_one_task_name_from_run_suite_and_inspect(tmp_path):
    """`conflict-eval run`, a suite entry without a name and `inspect eval
    conflict_eval/run` give the same task name."""
    from inspect_ai import eval as inspect_eval

    assert main(["run", "--model", "oracle/A", "--limit", "2", "--log-dir", str(tmp_path / "a"),
                 "--display", "none"]) == 0
    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\nmodels: [oracle/B]\ndefaults: {limit: 2}\ntasks:\n  - task: conflict_eval/run\n"
                     "    args: {method: end_to_end, dataset: demo}\n")
    ok, _ = run_suite(load_suite(suite), tmp_path / "b", display="none")
    assert ok
    inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo"}, model="oracle/C",
                 limit=2, log_dir=str(tmp_path / "c"), display="none")
    inspect_eval("conflict_eval/run", task_args={"dataset": "demo", "conflict_type": "temporal"}, model="oracle/C",
                 limit=2, log_dir=str(tmp_path / "c"), display="none")
    # an explicit scorer is part of the name, from the command line and from a suite alike
    assert main(["run", "--model", "oracle/A", "--limit", "2", "--log-dir", str(tmp_path / "a"),
                 "--scorer", "choice_accuracy", "--display", "none"]) == 0
    suite.write_text(suite.read_text() + "  - task: conflict_eval/run\n"
                     "    args: {method: end_to_end, dataset: demo, scorer: choice_accuracy}\n")
    ok, _ = run_suite(load_suite(suite), tmp_path / "d", display="none")
    assert ok
    rows = build_leaderboard([tmp_path], bootstrap=0)["rows"]
    assert sorted((r.model, r.task) for r in rows) == [
        ("oracle/A", "end_to_end/demo"), ("oracle/A", "end_to_end/demo(scorer=choice_accuracy)"),
        ("oracle/B", "end_to_end/demo"), ("oracle/B", "end_to_end/demo(scorer=choice_accuracy)"),
        ("oracle/C", "end_to_end/demo"), ("oracle/C", "end_to_end/demo(conflict_type=temporal)")]


# ---------------------------------------------------------------------------
# several models x tasks: matrix, per-conflict-type intervals, paired comparisons, page

MODELS = ["oracle/gold", "oracle/A", "oracle/C", "flaky/x"]
TASKS = """name: grid
models: [oracle/gold, oracle/A, oracle/C, flaky/x]
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo, conflict_type: temporal}
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo, limit: 4}
"""


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("grid")
    (tmp / "grid.yaml").write_text(TASKS)
    ok, logs = run_suite(load_suite(tmp / "grid.yaml"), tmp / "logs", display="none")
    assert ok and len(logs) == 12
    board = build_leaderboard([tmp / "logs"], bootstrap=1000, seed=0)
    paths = write_leaderboard([tmp / "logs"], tmp / "out")
    board["log_dir"] = tmp / "logs"
    return board, paths


def test_page_headline_is_the_declared_one_and_evals_df_agrees(grid):
    """conflict_eval/run declares its first scorer (choice_accuracy) as the headline; Inspect resolves
    it to the accuracy score; the page shows that score, with evals_df's value in every cell (one log each)."""
    from inspect_ai.analysis import evals_df

    board, _ = grid
    df = evals_df(str(board["log_dir"]), quiet=True).to_dict("records")
    rows = {(r.model, r.task): r for r in board["rows"]}
    assert {(d["score_headline_name"], d["score_headline_score"]) for d in df} == {("choice_accuracy", "accuracy")}
    assert {r.headline for r in board["rows"]} == {"accuracy"}
    for model in MODELS:  # one log per cell: the page's means are evals_df's headline values
        page = sorted(r.metrics["accuracy"].mean for (m, _), r in rows.items() if m == model)
        assert page == pytest.approx(sorted(d["score_headline_value"] for d in df if d["model"] == model))


def test_grid_matrix_conflict_types_and_pairs(grid):
    board, _ = grid
    rows = {(r.model, r.task): r for r in board["rows"]}
    full, temporal, four = "end_to_end/demo", "end_to_end/demo(conflict_type=temporal)", "end_to_end/demo(limit=4)"
    assert {t for _, t in rows} == {full, temporal, four} and {m for m, _ in rows} == set(MODELS)
    # demo gold letters: A on mis-01, mis-05, tmp-04, sem-03, none-02 -> "always A" scores 5/20
    assert rows[("oracle/gold", full)].metrics["accuracy"].mean == 1.0
    assert rows[("oracle/A", full)].metrics["accuracy"].mean == pytest.approx(0.25)
    # by conflict type, with intervals: misinformation 2/5 (mis-01, mis-05), temporal 1/5, semantic 1/5, none 1/5
    by = rows[("oracle/A", full)].by_conflict_type
    assert {k: (v.mean, v.n) for k, v in by.items()} == {
        "misinformation": (pytest.approx(0.4), 5), "temporal": (pytest.approx(0.2), 5),
        "semantic": (pytest.approx(0.2), 5), "none": (pytest.approx(0.2), 5)}
    lo, hi = by["misinformation"].ci
    assert 0.0 <= lo <= 0.4 <= hi <= 1.0
    # a model right everywhere: the Wilson interval of 20/20 is [n / (n + z^2), 1] = [20 / 23.8415, 1], never zero-width
    assert rows[("oracle/gold", full)].metrics["accuracy"].ci == pytest.approx((20 / (20 + 1.959964 ** 2), 1.0))
    assert rows[("oracle/gold", full)].metrics["accuracy"].method == "wilson"
    comps = {(c.task, c.model_a, c.model_b): c for c in board["comparisons"]}
    assert len(comps) == 3 * 6  # every pair of 4 models on each of 3 tasks
    # gold - A on all 20: 1 - 0.25 = 0.75; every resample's difference is >= 0.3 or so -> significant
    c = comps[(full, "oracle/A", "oracle/gold")]
    assert c.n == 20 and c.diff == pytest.approx(-0.75) and c.significant and c.ci[1] < 0
    # flaky vs A on mis-01..04: per-id accuracy flaky 1,0,0,1 and A 1,0,0,0 -> difference 0.25;
    # a resample of 4 ids misses mis-04 with probability (3/4)^4 = 0.32 > 2.5% -> interval contains 0
    c = comps[(four, "flaky/x", "oracle/A")]
    assert c.n == 4 and c.diff == pytest.approx(0.25) and c.significant is False and c.ci[0] == 0.0


def test_grid_outputs(grid):
    board, paths = grid
    md = paths["md"].read_text()
    # short column heads: method/dataset plus only the settings that tell two columns apart
    assert md.splitlines()[4] == ("| model | end_to_end/demo · accuracy ↑ | end_to_end/demo (conflict_type=temporal) · "
                                  "accuracy ↑ | end_to_end/demo (limit=4) · accuracy ↑ |")
    # value [Wilson interval] · rank · n · $ (the oracle has no price: "$ n/a", never a blank)
    assert "| oracle/gold | 1.000 [0.839, 1.000] · best (tied) · n=20 · $ n/a |" in md
    assert "## Reproducibility" in md and "Inspect 0.3." in md
    assert "n.s." in md and "significant" in md
    csv_lines = paths["csv"].read_text().splitlines()
    assert csv_lines[0].startswith("model,task,headline,n,errors,accuracy,accuracy_stderr,accuracy_ci_low,")
    assert len(csv_lines) == 1 + 12
    assert len(paths["paired_csv"].read_text().splitlines()) == 1 + 18
    assert "misinformation" in paths["conflict_types_csv"].read_text()
    page = paths["html"].read_text()
    assert page.count('<details class="paired" open>') == 3  # 6 pairs per task: short tables start open
    assert "<script src" not in page and "<link" not in page and "http://" not in page.replace("http://www.w3.org", "")
    prov = board["provenance"]
    import inspect_ai

    assert prov["inspect_ai_version"] == inspect_ai.__version__ and prov["conflict_eval_version"]
    t = prov["tasks"]["end_to_end/demo"]
    assert t["datasets"] == ["demo"] and t["revisions"][0].startswith("bundled")
    assert t["samples_scored"] == {m: 20 for m in sorted(MODELS)}
    assert t["generate_config"]["temperature"] == ["0.0"] and t["generate_config"]["max_tokens"] == ["512"]
    assert t["grader"] == ["no grader role (model-graded scorers use the evaluated model)"]
    assert t["conflict_eval"] == [prov["conflict_eval_version"]]


def test_colours_one_per_model_for_thirty_models():
    from conflict_eval.report import model_colours

    models = [f"p/m{i:02d}" for i in range(30)]
    colours = model_colours(models)
    assert len(set(colours.values())) == 30
    assert model_colours(models[:4]) == model_colours(list(reversed(models[:4])))


def test_cli_writes_every_file(plain_logs, tmp_path, capsys):
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  flaky/*: {input: 2, output: 10}\n")
    assert main(["leaderboard", str(plain_logs), "--out", str(tmp_path / "out"), "--prices", str(prices),
                 "--bootstrap", "200"]) == 0
    out = capsys.readouterr().out
    assert "| flaky/x | 0.500 [" in out
    for name in ("leaderboard.html", "leaderboard.md", "leaderboard.csv", "conflict_types.csv", "paired.csv",
                 "leaderboard.json"):
        assert (tmp_path / "out" / name).is_file()
    assert main(["leaderboard", str(tmp_path / "nope")]) == 2


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _browser(browser: str, tmp_path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
           f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _no_browser():
    """The page must render in a real browser; without one this test cannot pass
    (`.ci/run` installs Debian's chromium; the README says so)."""
    pytest.fail("no headless chromium on this machine: apt-get install -y chromium")


def test_page_in_headless_browser(grid, tmp_path):
    """Opens the page: model x task table first, provenance with versions, one
    legend, every plot drawn, and the same colour for a model in every plot."""
    browser = _chromium()
    if browser is None:
        _no_browser()
    board, paths = grid
    url = Path(paths["html"]).as_uri()
    dom = _browser(browser, tmp_path, "--virtual-time-budget=5000", "--dump-dom", url).stdout
    body = re.search(r"<body[^>]*>", dom).group(0)
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body))
    assert attrs["matrix-rows"] == "4" and attrs["matrix-cols"] == "3", body
    assert attrs["legends"] == "1"
    assert attrs["models-coloured"] == "4" and attrs["colour-mismatches"] == "0", body
    assert int(attrs["plots"]) >= 3 * 3 and attrs["plots-visible"] == attrs["plots"]
    assert int(attrs["marks"]) >= 4 * 3 * 2
    # the first table on the page is the model x task matrix, then the provenance block
    assert dom.index('id="matrix"') < dom.index('id="provenance"') < dom.index('class="plot"')
    import inspect_ai

    assert f'data-version="inspect_ai">{inspect_ai.__version__}<' in dom
    assert f'data-version="conflict-eval">{board["provenance"]["conflict_eval_version"]}<' in dom
    # every matrix cell links to its task's detail section
    for href in set(re.findall(r'<td><a href="#([^"]+)"', dom)):
        assert f'id="{href}"' in dom
    # colours as drawn: the fill of every mark of a model equals its legend swatch
    legend = dict(re.findall(r'<li data-model="([^"]+)"><span class="sw" style="background:(#[0-9a-f]{6})"', dom))
    for model, fill in re.findall(r'class="mark" data-model="([^"]+)"[^>]*?fill="(#[0-9a-f]{6})"', dom):
        assert legend[model] == fill
    shot = tmp_path / "page.png"
    _browser(browser, tmp_path, f"--screenshot={shot}", "--window-size=1400,2400", url)
    assert shot.is_file() and shot.stat().st_size > 20_000
    keep = os.environ.get("CONFLICT_EVAL_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)


def synthetic_board(n_models=30, n_tasks=20, n_samples=30, bootstrap=200):
    """A board from synthetic per-sample records (no logs): for layout and speed."""
    import random

    from conflict_eval.report import SampleRecord, aggregate, paired_comparisons, provenance

    rng = random.Random(0)
    records = []
    for m in range(n_models):
        for t in range(n_tasks):
            for i in range(n_samples):
                acc = float(rng.random() < (m + 1) / (n_models + 1))
                records.append(SampleRecord(
                    model=f"provider/model-{m:02d}", task=f"method_{t:02d}/dataset", seed=None, sample_id=f"q{i}",
                    epoch=1, ok=True, completed="x", values={"accuracy": acc}, parse_failure=0.0,
                    group=("temporal", "misinformation", "semantic")[i % 3], calls=1, input_tokens=100,
                    output_tokens=5, cost=1e-5 * (m + 1), cost_source="price file"))
    rows = aggregate(records, bootstrap, 0)
    return {"rows": rows, "comparisons": paired_comparisons(rows, bootstrap, 0),
            "provenance": provenance(rows, {}), "stats": {"logs": 0, "samples_read": len(records)}}


def test_page_scales_to_thirty_models_and_twenty_tasks(tmp_path):
    from conflict_eval.report import to_html

    browser = _chromium()
    if browser is None:
        _no_browser()
    board = synthetic_board()
    assert len(board["comparisons"]) == 20 * 30 * 29 // 2
    page = tmp_path / "big.html"
    page.write_text(to_html(board))
    dom = _browser(browser, tmp_path, "--virtual-time-budget=10000", "--dump-dom", page.as_uri()).stdout
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', re.search(r"<body[^>]*>", dom).group(0)))
    assert attrs["matrix-rows"] == "30" and attrs["matrix-cols"] == "20"
    assert attrs["models-coloured"] == "30" and attrs["colour-mismatches"] == "0" and attrs["legends"] == "1"
    assert attrs["plots"] == attrs["plots-visible"] and int(attrs["plots"]) == 20 * 3
    legend = dict(re.findall(r'<li data-model="([^"]+)"><span class="sw" style="background:(#[0-9a-f]{6})"', dom))
    assert len(set(legend.values())) == 30
    # 435 pairs per task: each task's paired table is on the page, collapsed (html.PAIRED_OPEN)
    assert dom.count('<details class="paired"><summary>435 pair(s) of models</summary>') == 20
    assert dom.count('<table class="paired">') == 20
    shot = tmp_path / "big.png"
    _browser(browser, tmp_path, f"--screenshot={shot}", "--window-size=1400,2400", page.as_uri())
    assert shot.is_file()
    keep = os.environ.get("CONFLICT_EVAL_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep.replace(".png", "-big.png"))


def test_a_zero_fallback_price_is_an_unknown_cost_on_the_page(tmp_path):
    """The packaged price file lists the scripted (and local) models at 0: no per-token
    bill, not a known cost. The page shows n/a (JSON null), never "$0.0000 (price file)";
    a 0 the caller gives in --model-cost-config is shown as given."""
    import json

    path = tmp_path / "free.yaml"
    path.write_text("name: free\nmodels: [scripted/x]\ndefaults: {limit: 2}\ntasks:\n"
                    "  - task: conflict_eval/run\n    args: {method: end_to_end, dataset: demo}\n")
    ok, _ = run_suite(load_suite(path), tmp_path / "logs", display="none")
    assert ok
    paths = write_leaderboard([tmp_path / "logs"], tmp_path / "out", bootstrap=0)
    [row] = json.loads(paths["json"].read_text())["rows"]
    assert (row["cost_per_sample"], row["cost_total"], row["cost_source"]) == (None, None, None)
    md, html = paths["md"].read_text(), paths["html"].read_text()
    for text in (md, html):
        assert "$0.0000" not in text and "price file" not in text
        assert "$ n/a" in text and "no price" in text
        assert "total $ n/a est vs $ n/a" in text  # the run-time estimate priced it from the same 0
    costs = tmp_path / "costs.yaml"
    costs.write_text("scripted/x: {input: 0, output: 0, input_cache_write: 0, input_cache_read: 0}\n")
    paths = write_leaderboard([tmp_path / "logs"], tmp_path / "out2", cost_config_path=str(costs), bootstrap=0)
    [row] = json.loads(paths["json"].read_text())["rows"]
    assert (row["cost_total"], row["cost_source"]) == (0.0, "model-cost-config")
