"""Download helpers: pinned URLs, cache, offline refusal (no network used)."""

import pytest

from conflict_eval.records import download
from conflict_eval.records.download import DownloadError, fetch_url, github_file, hf_dataset_file


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFLICT_EVAL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_file_url_is_cached(cache, shared_data):
    src = shared_data / "kre_ecqa" / "sample.jsonl"
    path = fetch_url(src.as_uri(), "kre/sample.jsonl")
    assert path.read_bytes() == src.read_bytes()
    assert path.parent.parent == cache / "data"
    assert fetch_url("file:///nonexistent", "kre/sample.jsonl") == path  # served from cache


def test_checksum_mismatch(cache, tmp_path):
    src = tmp_path / "x.txt"
    src.write_text("hello")
    with pytest.raises(DownloadError, match="checksum"):
        fetch_url(src.as_uri(), "x.txt", sha256="0" * 64)
    assert not (cache / "data" / "x.txt").exists()


def test_offline_refuses_network_with_path_hint(cache):
    with pytest.raises(DownloadError, match="-T path="):
        github_file("yingjiahao14/KRE", "fb170442ea942439c01cf8d105d935a4b80facc3", "dataset/musique.json")
    with pytest.raises(DownloadError, match="-T path="):
        hf_dataset_file("Warrieryes/CB_qa", "QA_dataset.json", "main")


def test_github_file_needs_full_commit(cache):
    with pytest.raises(ValueError, match="full commit"):
        github_file("a/b", "main", "x.json")


def test_github_url_shape(cache, monkeypatch):
    seen = {}

    def fake_fetch(url, name, sha256=None):
        seen["url"], seen["name"] = url, name
        return cache / name
    monkeypatch.setattr(download, "fetch_url", fake_fetch)
    github_file("yingjiahao14/KRE", "fb170442ea942439c01cf8d105d935a4b80facc3", "dataset/squad.json")
    assert seen["url"] == ("https://raw.githubusercontent.com/yingjiahao14/KRE/"
                           "fb170442ea942439c01cf8d105d935a4b80facc3/dataset/squad.json")
