"""Shared fixtures. Tests never touch the network."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # test helpers by name: `from openai_server import ...`

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("INSPECT_LOG_LEVEL", "warning")

REPO = Path(__file__).resolve().parents[1]
# ../shared/data beside the checkout; CONFLICT_EVAL_SHARED_DATA points elsewhere (e.g. from a git worktree).
SHARED_DATA = Path(os.environ.get("CONFLICT_EVAL_SHARED_DATA") or REPO.parent / "shared" / "data")
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _repo_logs() -> set[str]:
    return {str(p) for p in (REPO / "logs").rglob("*")} if (REPO / "logs").is_dir() else set()


def pytest_sessionstart(session):
    session.config._conflict_eval_repo_logs = _repo_logs()


def pytest_sessionfinish(session, exitstatus):
    """A test run leaves nothing in the checkout's ``logs/`` (Inspect's default log
    folder): every eval goes to a temp folder (``INSPECT_LOG_DIR``, set per test below)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controller checks once, after every worker has finished
    new = sorted(_repo_logs() - getattr(session.config, "_conflict_eval_repo_logs", set()))
    if new:
        session.config.get_terminal_writer().line(
            f"FAILED: the tests wrote {len(new)} file(s) into {REPO / 'logs'}, e.g. {new[0]}: "
            "pass log_dir= (the log_dir fixture) or leave INSPECT_LOG_DIR to the conftest", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config):
    """Under pytest-xdist (``-n N``), worker i of N keeps every N-th usable core.

    The offline model sizes its llama.cpp threads from the usable cores
    (``os.sched_getaffinity``); unpinned, two workers each decode with every core
    and their spinning thread barriers contend (measured in
    ``benchmarks/results/test_suite_time.md``). Subprocesses inherit the share.
    ``CONFLICT_EVAL_TEST_PIN=0`` turns this off."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if (not worker.startswith("gw") or count < 2 or os.environ.get("CONFLICT_EVAL_TEST_PIN") == "0"
            or not hasattr(os, "sched_setaffinity")):
        return
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) >= count:
        os.sched_setaffinity(0, cores[int(worker[2:]) % count::count])


def need_shared(path: Path, what: str) -> Path:
    """``path`` under ``../shared`` (real data, replies, papers). Where it is absent the test is
    skipped, except under CI (``CI`` set, as ``.ci/run`` runs), which always has ``../shared``:
    there its absence fails the test, so a skip can never pass for a run in CI."""
    if path.exists():
        return path
    if os.environ.get("CI"):
        pytest.fail(f"{what} {path} is absent, but CI always has ../shared")
    pytest.skip(f"{what} {path} is absent on this machine")


@pytest.fixture(scope="session")
def require_shared():
    """:func:`need_shared` for tests and fixtures of any scope."""
    return need_shared


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """:func:`shared_data` for module- and session-scoped fixtures."""
    return need_shared(SHARED_DATA, "shared data folder")


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` (real benchmark samples); skipped only where it is absent (never under CI)."""
    return need_shared(SHARED_DATA, "shared data folder")


@pytest.fixture
def log_dir(tmp_path) -> str:
    return str(tmp_path / "logs")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch, tmp_path_factory):
    """Downloads are refused (file:// still works) and cached in a temp dir."""
    monkeypatch.setenv("CONFLICT_EVAL_OFFLINE", "1")
    # Inspect's default log folder is ./logs, the checkout itself when pytest runs from it
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path_factory.getbasetemp() / "inspect-default-logs"))


@pytest.fixture(autouse=True)
def _inspect_prices_per_test():
    """Prices a test gives Inspect (``model_cost_config=``, ``set_model_cost``) are process-wide
    in Inspect; they end with the test, so no later test in the worker sees them (e.g. a price of
    0 for ``scripted/x`` left by tests/suite/test_limits.py made the leaderboard read
    ``cost_source='inspect'`` where no price was given). Inspect's own reset for tests,
    ``clear_model_info_cache``, is not exported: its registry is restored here."""
    from inspect_ai.model import _model_info

    before = dict(_model_info._custom_models)
    yield
    if _model_info._custom_models != before:
        _model_info._custom_models.clear()
        _model_info._custom_models.update(before)
        _model_info._result_cache.clear()


@pytest.fixture
def signal_when_held():
    """``run(cmd, hold_dir, sig)``: start ``cmd`` (whose scripted model has
    ``-M hold=hold_dir``), wait for the event that the model is holding a reply
    (``hold_dir/held`` exists; the calls before it have been answered), then send
    ``sig`` and collect the process. No fixed sleep: the wait is for the event
    (or the process ending early, which fails the test)."""
    import subprocess
    import time

    def run(cmd: list[str], hold_dir: Path, sig, timeout: float = 120) -> subprocess.CompletedProcess:
        held = Path(hold_dir) / "held"
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + timeout
        try:
            while not held.exists():
                try:
                    proc.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    assert time.monotonic() < deadline, "the scripted model never held a reply"
                    continue
                out, err = proc.communicate()
                raise AssertionError(f"ended (exit {proc.returncode}) before the model held a reply:\n{out}\n{err}")
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=timeout)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)

    return run


@pytest.fixture(autouse=True, scope="session")
def _quiet_console_lays_out_nothing():
    """``display="none"`` keeps Inspect's rich display on a quiet console (``rich.reconfigure(quiet=True)``),
    which still lays out the results table of every eval before discarding it (rich's
    ``Console._check_buffer``): ~0.2 s of a 0.3 s scripted ConflictScore eval. A quiet console
    writes and records nothing, so its ``print`` returns at once; a console that writes is untouched."""
    from rich.console import Console

    laid_out = Console.print

    def print_unless_quiet(self, *objects, **kwargs):
        if self.quiet:
            return None
        return laid_out(self, *objects, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Console, "print", print_unless_quiet)
        yield


@pytest.fixture
def inspect_command(monkeypatch, tmp_path):
    """Run the ``inspect`` command in this process: the console script Inspect declares
    (``importlib.metadata``'s entry point, what the installed ``inspect`` command runs) with
    ``args``; returns its exit code. For tests whose claim is how Inspect's own command line
    reads flags, not a fresh interpreter (about 4 s of imports per process). ``env``: variables
    to set for the run, ``None`` to remove one. Run from ``tmp_path`` (Inspect reads a ``.env``
    up the directory tree); the environment, argv and the exception hook Inspect installs
    are restored after the test."""
    from importlib.metadata import entry_points

    [script] = entry_points(group="console_scripts", name="inspect")
    main = script.load()

    def run(*args: str, env: dict[str, str | None] | None = None) -> int:
        for key, value in (env or {}).items():
            if value is None:
                monkeypatch.delenv(key, raising=False)
            else:
                monkeypatch.setenv(key, value)
        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr(sys, "argv", ["inspect", *args])
        monkeypatch.setattr(sys, "excepthook", sys.excepthook)
        try:
            main()
        except SystemExit as e:
            return e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        return 0

    return run
