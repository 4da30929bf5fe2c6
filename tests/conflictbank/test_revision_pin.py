"""ConflictBank's hub revision: the registry records the pinning procedure, and a
run on an unpinned revision says so (eval metadata + a logged warning)."""

import logging
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.plugins.conflictbank import dataset as cb
from conflict_eval.components.catalog import load_registry
from conflict_eval.testing import scripted_model

FIXTURE = Path(__file__).parents[1] / "fixtures" / "conflictbank" / "qa_dataset_handwritten.jsonl"


def test_registry_matches_the_plugin():
    entry = load_registry()["datasets"]["conflictbank"]
    assert entry["revision"] == cb.CB_REVISION
    assert entry["pinned"] is cb.is_pinned(cb.CB_REVISION)
    assert entry["source"] == f"huggingface:{cb.CB_REPO}/{cb.CB_FILE}"
    if not entry["pinned"]:
        assert entry["pin_procedure"] == cb.PIN_PROCEDURE
        assert "dataset_info('Warrieryes/CB_qa').sha" in cb.PIN_PROCEDURE


def test_is_pinned():
    assert cb.is_pinned("0123456789abcdef0123456789abcdef01234567")
    assert not cb.is_pinned("main") and not cb.is_pinned("v1.0") and not cb.is_pinned(None)
    assert not cb.is_pinned("0123456789ABCDEF0123456789ABCDEF01234567 ")


def run(log_dir, **task_args):
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "end_to_end", "dataset": "conflictbank",
                                    "conflict_type": "temporal", **task_args},
                         model=scripted_model(lambda p: "<a>A</a>"), log_dir=log_dir, display="none")
    assert log.status == "success"
    return log


def test_unpinned_download_is_in_the_log(monkeypatch, log_dir, caplog):
    # the download is replaced by the handwritten fixture (tests never touch the network)
    calls = []
    monkeypatch.setattr(cb, "hf_dataset_file", lambda *a: calls.append(a) or FIXTURE)
    with caplog.at_level(logging.WARNING, logger=cb.__name__):
        log = run(log_dir)
    assert calls == [(cb.CB_REPO, cb.CB_FILE, "main")]
    prov = log.eval.metadata["dataset_provenance"]
    assert prov["revision"] == "main" and prov["revision_pinned"] is False
    assert "unpinned revision 'main'" in prov["warning"] and cb.PIN_PROCEDURE in prov["warning"]
    assert any("unpinned revision 'main'" in r.getMessage() for r in caplog.records)


def test_pinned_download_and_local_file_do_not_warn(monkeypatch, log_dir, caplog):
    sha = "0123456789abcdef0123456789abcdef01234567"
    monkeypatch.setattr(cb, "CB_REVISION", sha)
    monkeypatch.setattr(cb, "hf_dataset_file", lambda *a: FIXTURE)
    monkeypatch.setattr(cb.source_info, "__defaults__", (sha,))
    with caplog.at_level(logging.WARNING, logger=cb.__name__):
        pinned = run(log_dir)
        local = run(log_dir, path=str(FIXTURE))
    assert pinned.eval.metadata["dataset_provenance"] == {
        "source": "huggingface:Warrieryes/CB_qa/QA_dataset.json", "revision": sha, "revision_pinned": True}
    assert local.eval.metadata["dataset_provenance"]["source"] == "local file"
    assert not [r for r in caplog.records if "unpinned" in r.getMessage()]
