"""Shared fixtures. Tests never touch the network."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("INSPECT_LOG_LEVEL", "warning")

REPO = Path(__file__).resolve().parents[1]
# ../shared/data beside the checkout; CONFLICT_EVAL_SHARED_DATA points elsewhere (e.g. from a git worktree).
SHARED_DATA = Path(os.environ.get("CONFLICT_EVAL_SHARED_DATA") or REPO.parent / "shared" / "data")
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` (real benchmark samples); skipped only where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent on this machine")
    return SHARED_DATA


@pytest.fixture
def log_dir(tmp_path) -> str:
    return str(tmp_path / "logs")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch, tmp_path_factory):
    """Downloads are refused (file:// still works) and cached in a temp dir."""
    monkeypatch.setenv("CONFLICT_EVAL_OFFLINE", "1")
