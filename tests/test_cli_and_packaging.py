"""The conflict-eval CLI, lazy imports, and a plugin package installed from a folder."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conflict_eval.cli import main

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "plugin"


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "methods:" in out and "end_to_end" in out and "from plugin end_to_end [conflict-eval]" in out
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["dataset"]["demo"]["plugin"] == "demo"


def test_score_token_f1(tmp_path, capsys):
    preds = tmp_path / "preds.jsonl"
    rows = [
        {"predicted": "Paris", "gold": "Paris"},                       # F1 1
        {"predicted": "the city of Lyon", "gold": ["Lyon", "Paris"]},  # p=1/3 r=1 -> F1 0.5
        {"predicted": "Berlin", "gold": "Madrid"},                     # 0
        {"predicted": "New York City", "gold": "New York"},            # p=2/3 r=1 -> 0.8
    ]
    preds.write_text("\n".join(json.dumps(r) for r in rows))
    assert main(["score", "--metric", "token_f1", str(preds), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 4
    assert out["value"] == pytest.approx((1 + 0.5 + 0 + 0.8) / 4)


def test_score_choice_accuracy(tmp_path, capsys):
    preds = tmp_path / "preds.jsonl"
    rows = [{"predicted": "<a>B</a>", "gold": "B", "choices": ["w", "x", "y", "z"]},
            {"predicted": "Answer: C", "gold": "B", "choices": ["w", "x", "y", "z"]},
            {"predicted": "no idea", "gold": "A", "choices": ["w", "x", "y", "z"]},
            {"predicted": "Maybe the first one, maybe the second.", "gold": "A", "choices": ["w", "x", "y", "z"]}]
    preds.write_text("\n".join(json.dumps(r) for r in rows))
    assert main(["score", "--metric", "choice_accuracy", str(preds), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # "no idea" is a refusal (answers.refusal), counted apart from the unreadable reply
    assert out["accuracy"] == pytest.approx(1 / 4) and out["parse_failure"] == pytest.approx(1 / 4)
    assert out["refusal"] == pytest.approx(1 / 4)


def test_score_bad_file_names_line_and_field(tmp_path, capsys):
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"predicted": "a", "gold": "a"}\n{"gold": "b"}\nnot json\n')
    assert main(["score", "--metric", "token_f1", str(preds)]) == 2
    err = capsys.readouterr().err
    assert "line 2: field 'predicted' is missing" in err
    assert "line 3: invalid JSON" in err and "Traceback" not in err


def test_unknown_metric_is_a_clear_error(tmp_path, capsys):
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"predicted": "a", "gold": "a"}\n')
    assert main(["score", "--metric", "nope", str(preds)]) == 2
    assert "unknown metric 'nope'" in capsys.readouterr().err


def test_run_with_scripted_model(tmp_path, capsys, monkeypatch):
    # the offline scripted provider answers "A</a>" to every prompt
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--model", "scripted/x", "--limit", "2", "--display", "none",
                 "-T", "conflict_type=none"])
    out = capsys.readouterr().out
    assert code == 0
    assert "accuracy" in out and "parse_failure" in out and "log: " in out
    # none-01 has gold B, none-02 gold A: one of two right
    assert re.search(r"^accuracy +accuracy +0\.5000$", out, re.M), out


def _python(code: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def test_registry_and_listing_do_not_import_torch():
    code = (
        "import sys\n"
        "import conflict_eval._registry\n"
        "from conflict_eval import components\n"
        "components()\n"
        "from conflict_eval.runs import registered_tasks\n"
        "assert 'conflict_eval/run' in registered_tasks()\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert "HEAVY []" in result.stdout


def test_wheel_installs_everything_under_conflict_eval(tmp_path):
    """Build the real wheel: plugins/, tasks/, scorers/ land inside conflict_eval/,
    with the registry file and demo data as package data, and nothing else at top level."""
    import zipfile

    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(tmp_path), str(REPO)],
        capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    [wheel] = tmp_path.glob("conflict_eval-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"conflict_eval"}, top
    for required in ("conflict_eval/registry.yaml", "conflict_eval/data/demo.jsonl",
                     "conflict_eval/plugins/end_to_end/__init__.py",
                     "conflict_eval/tasks/run/task.py",
                     "conflict_eval/scorers/choice_accuracy/scorer.py",
                     "conflict_eval/runs/cards/ramdocs-madam-rag.yaml"):
        assert required in names, required
    registry = zipfile.ZipFile(wheel).read("conflict_eval/registry.yaml").decode()
    assert registry == (REPO / "registry.yaml").read_text()  # the real file, not a link


def test_plugin_package_installed_from_folder(tmp_path):
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(EXAMPLE)],
        capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    env = {"PYTHONPATH": str(target) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    listed = subprocess.run([sys.executable, "-m", "conflict_eval.cli", "list"],
                            capture_output=True, text=True, env={**os.environ, **env}, timeout=300)
    assert listed.returncode == 0, listed.stderr
    # column width follows the longest installed method name
    assert re.search(r"verdict_first +from plugin example \[conflict-eval-example-plugin\]", listed.stdout)
    assert "evidence_following" in listed.stdout and "capital_swaps" in listed.stdout
    log_dir = tmp_path / "logs"
    ran = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "conflict_eval/run",
         "-T", "method=verdict_first", "-T", "dataset=capital_swaps",
         "--model", "scripted/x", "--limit", "2", "--log-dir", str(log_dir),
         "--display", "none", "--log-format", "json"],
        capture_output=True, text=True, env={**os.environ, **env}, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    [log_file] = list(log_dir.glob("*.json"))
    log = json.loads(log_file.read_text())
    assert log["status"] == "success"
    assert log["eval"]["task_args"]["method"] == "verdict_first"
    assert log["results"]["scores"][0]["name"] == "evidence_following"  # the dataset's declared metric


def test_run_takes_path_as_option_or_flag(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "mine.jsonl"
    data.write_text('{"id": "m1", "question": "Q?", "options": ["x", "y"], "answers": ["x"], '
                    '"gold_option": "A"}\n')
    assert main(["run", "--model", "scripted/x", "--display", "none", "-T", f"path={data}"]) == 0
    assert "samples: 1/1" in capsys.readouterr().out
    assert main(["run", "--model", "scripted/x", "--display", "none", "--path", str(data),
                 "-T", f"path={data}"]) == 2
    assert "not both" in capsys.readouterr().err
