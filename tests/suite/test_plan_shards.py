"""One cell split across two workers in Inspect's shard layout (``suite plan --shards 2``):
each worker writes ``LOG/<cell>.shards/<k>/``, the last one merges the cell into
``LOG/<cell>.eval`` with every sample once, ``eval.shards`` filled, the results those of
the same cell run whole; Inspect's listing hides the merged shards, and ``suite status``
and the page count the cell once. ``--shard`` is gone."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.log._file import without_merged_shards  # Inspect's listing rule (not exported in 0.3.285)

from conflict_eval.runs.plan import make_plan
from conflict_eval.runs.spec import SuiteError
from conflict_eval.runs.worker import plan_statuses, run_worker

SUITE = """name: split
models:
  - model: scripted/a
    args: {reply: "A</a>"}
defaults: {limit: 5}
tasks:
  - task: conflict_eval/run
    args: {method: end_to_end, dataset: demo}
"""


def _metrics(log) -> dict:
    return {(s.name, m): v.value for s in log.results.scores for m, v in s.metrics.items()}


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("split")
    (tmp / "split.yaml").write_text(SUITE)
    plan = make_plan(str(tmp / "split.yaml"), tmp / "plan", workers=1, shards=2)
    sel = [tmp / "plan" / w["selection"] for w in plan["workers"]]
    first = run_worker(sel[0])
    before = plan_statuses(plan)
    second = run_worker(sel[1])
    whole = make_plan(str(tmp / "split.yaml"), tmp / "whole", workers=1)  # the same cell, not split
    assert run_worker(tmp / "whole" / whole["workers"][0]["selection"]).success
    return plan, first, before, second, whole


def test_the_plan_gives_each_shard_its_ids_and_folder_in_inspects_layout(split):
    plan, *_ = split
    [cell] = plan["cells"]
    assert [(w["cells"], w["shard"], len(w["sample_ids"])) for w in plan["workers"]] == \
        [([cell["name"]], 1, 3), ([cell["name"]], 2, 2)]
    for w in plan["workers"]:
        doc = json.loads((Path(plan["log_dir"]).parent / w["selection"]).read_text())
        assert doc["version"] >= 6  # per-worker sample_id overrides need schema 6
        assert doc["overrides"] == {"log_dir": str(Path(plan["log_dir"]) / f"{cell['name']}.shards" / str(w["shard"])),
                                    "sample_id": w["sample_ids"]}


def test_two_workers_merge_into_one_cell_with_every_sample_once(split):
    plan, first, before, second, whole = split
    [cell] = plan["cells"]
    ids = [i for w in plan["workers"] for i in w["sample_ids"]]
    assert first.success and "planned sample(s) in no finished shard" in first.merge[cell["name"]]
    # one shard done: the cell is running, its done samples counted from the shard
    assert [(s.status, s.done, s.total, s.complete) for s in before] == [("started", 3, 5, False)]
    assert second.success and second.merge == {cell["name"]: None}
    log_dir = Path(plan["log_dir"])
    merged = read_eval_log(str(log_dir / f"{cell['name']}.eval"))
    assert merged.status == "success"
    assert [(s.id, s.epoch) for s in merged.samples] == [(i, 1) for i in ids] and len(set(ids)) == 5
    assert merged.eval.dataset.sample_ids == ids and merged.eval.dataset.samples == 5
    assert merged.results.total_samples == merged.results.completed_samples == 5
    # the results: what the same cell gives run whole (Inspect's scorers and metrics, recomputed)
    [whole_info] = list_eval_logs(whole["log_dir"])
    assert _metrics(merged) == _metrics(read_eval_log(whole_info)) and _metrics(merged)


def test_the_merged_log_carries_each_shards_provenance(split):
    plan, *_ = split
    [cell] = plan["cells"]
    log_dir = Path(plan["log_dir"])
    merged = read_eval_log(str(log_dir / f"{cell['name']}.eval"))
    shards = merged.eval.shards
    assert shards.selection == "ids" and [e.shard for e in shards.ledger] == ["1", "2"]
    for entry, w in zip(shards.ledger, plan["workers"]):
        [attempt] = list_eval_logs(str(log_dir / f"{cell['name']}.shards" / str(w["shard"])))
        shard_log = read_eval_log(attempt)
        assert entry.log == Path(attempt.name).name and entry.status == "success"
        assert entry.samples == entry.selected == len(w["sample_ids"])
        assert entry.selection_digest == hashlib.sha256(
            json.dumps(w["sample_ids"], separators=(",", ":")).encode()).hexdigest()
        assert entry.eval_set_id == plan["eval_set_id"] and entry.size == attempt.size
        assert entry.model_usage == shard_log.stats.model_usage and entry.model_usage
    total = sum(e.model_usage["scripted/a"].input_tokens for e in shards.ledger)
    assert merged.stats.model_usage["scripted/a"].input_tokens == total > 0


def test_inspects_listing_status_and_page_count_the_cell_once(split, capsys):
    plan, *_ = split
    [cell] = plan["cells"]
    log_dir = plan["log_dir"]
    every = list_eval_logs(log_dir, recursive=True)
    assert len(every) == 3  # the merged log and the two shards
    assert [Path(i.name).name for i in without_merged_shards(every)] == [f"{cell['name']}.eval"]
    [status] = plan_statuses(plan)
    assert status.complete and status.done == status.total == 5
    from conflict_eval.cli import main

    assert main(["suite", "status", str(Path(log_dir).parent)]) == 0
    assert main(["suite", "merge", str(Path(log_dir).parent)]) == 0  # already merged, nothing newer: kept
    assert f"{cell['name']}: merged" in capsys.readouterr().out
    assert [Path(i.name).name for i in without_merged_shards(list_eval_logs(log_dir))] == [f"{cell['name']}.eval"]
    from conflict_eval.report.build import build_leaderboard

    board = build_leaderboard([log_dir], bootstrap=0)
    assert [(r.n, r.complete) for r in board["rows"]] == [(5, True)]
    assert board["stats"]["duplicates_dropped"] == 0


def test_overlapping_shards_are_an_error_naming_both_files(split, tmp_path):
    plan, *_ = split
    [cell] = plan["cells"]
    src = Path(plan["log_dir"]) / f"{cell['name']}.shards"
    shutil.copytree(src, tmp_path / "x.shards")
    shutil.copytree(src / "1", tmp_path / "x.shards" / "3")  # shard 1's log again, as shard 3
    from conflict_eval.runs.shards import merge_shards

    with pytest.raises(SuiteError, match=r"3/.*\.eval: sample .* is also in .*1/.*\(overlapping shards\)"):
        merge_shards(tmp_path / "x.eval")
    assert not (tmp_path / "x.eval").exists()


def test_the_old_shard_flag_is_gone(capsys):
    from conflict_eval.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["suite", "run", "tiny", "--shard", "1/2"])
    assert exc.value.code == 2 and "unrecognized arguments: --shard" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # nor an abbreviation of --shards
        main(["suite", "plan", "tiny", "--out", "unused", "--shard", "2"])
    assert exc.value.code == 2 and "unrecognized arguments: --shard" in capsys.readouterr().err


def test_shards_and_workers_exclude_each_other(tmp_path):
    (tmp_path / "s.yaml").write_text(SUITE)
    with pytest.raises(SuiteError, match="give --workers or --shards, not both"):
        make_plan(str(tmp_path / "s.yaml"), tmp_path / "plan", workers=2, shards=2)


def test_ids_split_into_contiguous_runs_differing_by_at_most_one():
    from conflict_eval.runs.shards import split_ids

    assert split_ids(list("abcde"), 2) == [list("abc"), list("de")]
    assert split_ids(list("abcdefg"), 3) == [list("abc"), list("de"), list("fg")]
    assert split_ids(list("ab"), 3) == [["a"], ["b"]]  # no empty shard
