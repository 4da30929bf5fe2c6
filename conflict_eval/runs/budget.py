"""A suite-wide budget in US dollars (``budget:`` in a suite, ``--budget`` on ``suite run``).

Inspect's ``cost_limit`` bounds one sample; a run-wide budget is an open
Inspect request (inspect_ai#1135). This one is an Inspect hook: every model
call's usage (``on_model_usage``, retried calls included) is priced -- by
Inspect itself when it has cost data for the model (``total_cost``), else
with the suite's model cost config or the fallback price file -- and added to
the spend already recorded in the suite's logs. When the sum reaches the
budget, the run is cancelled the way Ctrl-C cancels it: Inspect closes every
log as ``cancelled`` with the samples it finished, so nothing paid for is
lost, and a re-run with a larger budget resumes them. Samples in flight at
that moment are cancelled (their calls are in the spend).

Where it is recorded: ``LOG_DIR/suite-stop.json`` ``{"conflict_eval_stop_reason":
"budget", "budget_usd", "spent_usd", "tasks": [{model, task, state, done,
total}]}`` (the tasks it left unfinished), written by ``suite run`` whenever
a suite stops short (reason ``budget``, ``SIGINT``, ``SIGTERM`` or
``incomplete``) and removed when a later run finishes the suite.
"""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from typing import Any

from inspect_ai.hooks import Hooks, ModelUsageData, hooks

STOP_FILE = "suite-stop.json"


class BudgetExhausted(ValueError):
    """Raised before a run when the logs already record the whole budget as spent."""


class _Budget:
    def __init__(self, limit_usd: float, spent_usd: float, prices: dict[str, Any]):
        self.limit = limit_usd
        self.spent = spent_usd
        self.prices = prices  # model -> ModelCost (for usage Inspect did not price)
        self.stopped = False
        self.lock = threading.Lock()

    def add(self, model: str, usage) -> None:
        from inspect_ai.model import compute_model_cost

        if usage.total_cost is not None:
            cost = float(usage.total_cost)
        else:
            price = self.prices.get(model)
            cost = compute_model_cost(price, usage) if price is not None else 0.0
        with self.lock:
            self.spent += cost
            reached = self.spent >= self.limit and not self.stopped
            if reached:
                self.stopped = True
        if reached:  # cancel like Ctrl-C: Inspect closes the logs as cancelled
            signal.raise_signal(signal.SIGINT)


_active: _Budget | None = None


@hooks(name="conflict_eval_budget", description="conflict-eval suite-wide $ budget")
class BudgetHook(Hooks):
    def enabled(self) -> bool:
        return _active is not None

    async def on_model_usage(self, data: ModelUsageData) -> None:
        if _active is not None:
            _active.add(data.model_name, data.usage)


def spent_in_logs(log_dir: str | Path, prices: dict[str, Any]) -> float:
    """Dollars the logs under ``log_dir`` record in their headers (every log
    file, :func:`conflict_eval.report.spend.log_cost`: the page's ``$ total``
    counts the same records)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    from conflict_eval.report.spend import log_cost

    total = 0.0
    for info in list_eval_logs(str(log_dir), recursive=True):
        try:
            h = read_eval_log(info, header_only=True)
        except Exception:  # noqa: BLE001 -- an unreadable log records no spend we can count
            continue
        total += log_cost(h.stats.model_usage or {}, prices, {}) or 0.0
    return total


class budget_guard:
    """Context manager arming the budget hook for one ``eval_set`` call."""

    def __init__(self, limit_usd: float | None, log_dir: str | Path, prices: dict[str, Any]):
        self.limit, self.log_dir, self.prices = limit_usd, log_dir, prices
        self.budget: _Budget | None = None

    def __enter__(self) -> budget_guard:
        global _active
        if self.limit is not None:
            spent = spent_in_logs(self.log_dir, self.prices)
            self.budget = _Budget(self.limit, spent, self.prices)
            if spent >= self.limit:
                raise BudgetExhausted(f"the logs in {self.log_dir} already record ${spent:.4f} of spend, "
                                      f"at or over the budget of ${self.limit:.4f}; re-run with a larger --budget")
            _active = self.budget
        return self

    def __exit__(self, *exc) -> None:
        global _active
        _active = None

    @property
    def stopped(self) -> bool:
        return self.budget is not None and self.budget.stopped

    @property
    def spent(self) -> float | None:
        return None if self.budget is None else self.budget.spent


def write_stop(log_dir: str | Path, reason: str | None, **facts: Any) -> Path:
    """Record (or, with ``reason=None``, clear) why a suite stopped early."""
    path = Path(log_dir) / STOP_FILE
    if reason is None:
        path.unlink(missing_ok=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"conflict_eval_stop_reason": reason, **facts}, indent=2) + "\n",
                        encoding="utf-8")
    return path


def read_stop(log_dir: str | Path) -> dict[str, Any] | None:
    path = Path(log_dir) / STOP_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
