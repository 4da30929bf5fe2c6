"""``conflict-eval reproduce CARD`` end to end: estimate first, the run, the
paper-vs-ours table; interrupts like ``conflict-eval run``. Scripted models,
and one real offline-model run (slow)."""

import pytest
import yaml

from conflict_eval.cli import main


def _conflictqa(shared_data):
    return str(shared_data / "conflictqa_strategyqa" / "sample.jsonl")


def _table(out: str) -> list[str]:
    return out.split("paper model", 1)[1].splitlines()


def test_shipped_card_offline_prints_estimate_then_table(shared_data, tmp_path, capsys):
    """Reply "A" is the memory option (option_order memory_first) on every item: the
    memorization ratio is 4/4 = 100, Wilson 95% [51.01, 100.00]; the paper value is not
    in our texts, so the verdict is "not comparable"."""
    rc = main(["reproduce", "conflictqa-gpt4", "--model", "scripted/gpt-4", "-M", "reply=A",
               "-T", f"path={_conflictqa(shared_data)}", "--limit", "4",
               "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.index("estimate:") < out.index("calls") < out.index("paper model")
    assert "0 parse failures" in out and "4 with the metric" in out
    [row] = [line for line in _table(out) if line.startswith("GPT-4 ")]
    assert "100.00 [51.01, 100.00]" in row and "not comparable" in row
    # every reason, and what "ours" is: model, data file and its hash
    assert "not in the paper texts" in row and "different model (ours: scripted/gpt-4; paper: GPT-4)" not in row
    from conflict_eval.records.download import sha256_file

    sha = sha256_file(_conflictqa(shared_data))
    assert f"ours: model scripted/gpt-4; data sample.jsonl (sha256 {sha}); n 4" in out
    assert str(shared_data) not in out.split("paper model", 1)[1]


def test_conflictqa_card_defaults_are_the_counter_memory_setting_not_the_control(shared_data):
    """The memorization ratio the paper reports is measured against counter-memory;
    the memory-only control (the model's own memory as evidence) is not pooled in."""
    from inspect_ai.util import registry_create

    from conflict_eval.runs.cards import find_card
    from conflict_eval.runs.reproduce import card_tasks

    [(name, args)] = card_tasks(find_card("conflictqa-gpt4"), {"path": _conflictqa(shared_data)})
    assert args["setting"] == "counter_memory"
    samples = list(registry_create("task", name, **args).dataset)
    assert len(samples) == 901 and {s.metadata["setting"] for s in samples} == {"counter_memory"}


def test_own_card_file_reproduced_and_not_reproduced(shared_data, tmp_path, capsys):
    base = {
        "paper": "scripted check", "source": "hand computation",
        "tasks": [{"task": "conflict_eval/run", "args": {"method": "conflictqa_mc", "dataset": "conflictqa",
                                                         "setting": "counter_memory"}}],
        "metric": "memory", "among": ["memory", "counter"], "scale": 100, "paper_n": 3,
    }
    verdicts = {}
    for value in (60.0, 40.0):  # Wilson(3/3) = [43.85, 100]: 60 inside, 40 outside
        path = tmp_path / f"card{int(value)}.yaml"
        path.write_text(yaml.safe_dump({**base, "results": [{"model": "GPT-4", "match": ["gpt-4"], "value": value}]}))
        rc = main(["reproduce", str(path), "--model", "scripted/gpt-4", "-M", "reply=A",
                   "-T", f"path={_conflictqa(shared_data)}", "--limit", "3",
                   "--log-dir", str(tmp_path / "logs"), "--display", "none"])
        out = capsys.readouterr().out
        assert rc == 0, out
        [row] = [line for line in _table(out) if line.startswith("GPT-4 ")]
        assert "100.00 [43.85, 100.00]" in row and " 3 " in row
        verdicts[value] = row
    assert "reproduced" in verdicts[60.0] and "not reproduced" not in verdicts[60.0]
    assert "not reproduced" in verdicts[40.0]


def test_ramdocs_card_with_madam_rag_scripted(shared_data, tmp_path, capsys):
    reply = "'All Correct Answers: [\"nobody\"]. Explanation: scripted.'"  # -M values are YAML
    rc = main(["reproduce", "ramdocs-madam-rag", "--model", "scripted/x", "-M", f"reply={reply}",
               "-T", f"path={shared_data / 'ramdocs' / 'sample.jsonl'}", "--limit", "2",
               "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "2 with the metric" in out and "0.00 [0.00, 65.76]" in out  # Wilson(0/2) upper 0.6576
    assert "not comparable" in out


def test_interrupt_exits_130_like_run(shared_data, tmp_path, capsys, monkeypatch):
    import conflict_eval.runs.reproduce as reproduce

    def cancelled(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(reproduce, "run_card", cancelled)
    rc = main(["reproduce", "conflictqa-gpt4", "--model", "scripted/gpt-4",
               "-T", f"path={_conflictqa(shared_data)}", "--limit", "2", "--log-dir", str(tmp_path / "logs")])
    captured = capsys.readouterr()
    assert rc == 130 and "interrupted (SIGINT)" in captured.err
    assert "paper model" not in captured.out


def test_a_failed_task_is_not_compared(shared_data, tmp_path, capsys):
    rc = main(["reproduce", "conflictqa-gpt4", "--model", "scripted/gpt-4", "-M", "reply=A",
               "-T", f"path={_conflictqa(shared_data)}", "-T", "setting=no_such_setting", "--limit", "2",
               "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    assert rc == 2  # a bad option is an error before anything runs
    assert "paper model" not in capsys.readouterr().out


@pytest.mark.slow
def test_real_offline_model_card_run(shared_data, tmp_path, capsys):
    """conflict_eval/smollm2 on one real ConflictQA item: runs end to end, not comparable (one
    item is enough for that claim; verdicts on more samples are the scripted tests' here)."""
    rc = main(["reproduce", "conflictqa-gpt4", "--model", "conflict_eval/smollm2",
               "-T", f"path={_conflictqa(shared_data)}", "-T", "setting=counter_memory", "--limit", "1",
               "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.index("estimate:") < out.index("paper model")
    assert "samples: 1 run, 0 errored" in out
    [row] = [line for line in _table(out) if line.startswith("GPT-4 ")]
    assert "not comparable" in row


def test_estimate_only_shows_no_local_path(shared_data, capsys):
    rc = main(["reproduce", "atomr-hotpotqa-replay", "--model", "scripted/gpt-4o-2024-08-06", "--estimate-only",
               "-T", f"path={shared_data / 'hotpotqa_ircot' / 'sample.jsonl'}",
               "-T", f"plans={shared_data / 'atomr_released_trees' / 'hotpotqa_trees.jsonl'}", "--limit", "3"])
    out = capsys.readouterr().out
    assert rc == 0 and "plans=hotpotqa_trees.jsonl" in out and str(shared_data) not in out
    assert "paper model" not in out  # nothing ran


def test_leaderboard_links_a_matching_cell_to_its_card(shared_data, tmp_path, capsys):
    """A RAMDocs madam_rag log matches the ramdocs-madam-rag card; a demo log matches none."""
    from inspect_ai import eval as inspect_eval

    from conflict_eval.report.build import write_leaderboard

    logs = tmp_path / "logs"
    reply = "'All Correct Answers: [\"nobody\"]. Explanation: scripted.'"
    assert main(["reproduce", "ramdocs-madam-rag", "--model", "scripted/x", "-M", f"reply={reply}",
                 "-T", f"path={shared_data / 'ramdocs' / 'sample.jsonl'}", "--limit", "2",
                 "--log-dir", str(logs), "--display", "none"]) == 0
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo"},
                         model="scripted/x", limit=2, log_dir=str(logs), display="none")
    assert log.status == "success"
    paths = write_leaderboard([logs], tmp_path / "board", bootstrap=50)
    html, md = paths["html"].read_text(), paths["md"].read_text()
    assert '<code class="card">conflict-eval reproduce ramdocs-madam-rag --model scripted/x</code>' in html
    assert html.count('class="card"') == 1  # the demo cell has none
    assert "conflict-eval reproduce ramdocs-madam-rag --model scripted/x" in md


def test_mostly_parse_failures_are_flagged(shared_data, tmp_path, capsys):
    rc = main(["reproduce", "conflictqa-gpt4", "--model", "scripted/gpt-4", "-M", "reply=no idea",
               "-T", f"path={_conflictqa(shared_data)}", "--limit", "3",
               "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "3 parse failures" in out and "warning: 100% of the samples are parse failures" in out
    [row] = [line for line in _table(out) if line.startswith("GPT-4 ")]
    assert "n/a" in row and "not comparable" in row  # no memory/counter answer: the ratio is undefined


def test_step_level_parse_failures_are_counted(shared_data, tmp_path, capsys):
    """An AtomR card run where every step's reply is unreadable: the planner's
    reply is no tree (1 planning failure), the Direct-RAG fallback's reply has
    no answer (1 step failure); the answer is empty, which no answer-level rule
    flags. Before issue 32 this printed "0 parse failures"."""
    rc = main(["reproduce", "atomr-hotpotqa-replay", "--model", "scripted/gpt-4o", "-M", "reply=no idea",
               "-T", f"path={shared_data / 'hotpotqa_ircot' / 'sample.jsonl'}", "--limit", "2",
               "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    out = capsys.readouterr().out
    assert rc == 0, out
    line = next(x for x in out.splitlines() if x.startswith("samples:"))
    assert line.startswith("samples: 2 run, 0 errored, 2 parse failures: 4 unreadable step replies in 2 samples")
    assert "warning: 100% of the samples are parse failures" in out
