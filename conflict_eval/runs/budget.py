"""A suite-wide budget in US dollars (``budget:`` in a suite, ``--budget`` on ``suite run``).

Inspect's ``cost_limit`` bounds one sample; a run-wide budget is an open
Inspect request (inspect_ai#1135). This one is an Inspect hook: every model
call's usage (``on_model_usage``, retried calls included) is priced by
:meth:`conflict_eval.pricing.PriceTable.usd` (the ladder the estimate and the
page use: Inspect's recorded ``total_cost`` first) and added to
the spend already recorded in the suite's logs. When the sum reaches the
budget, the run is cancelled the way Ctrl-C cancels it: Inspect closes every
log as ``cancelled`` with the samples it finished, so nothing paid for is
lost, and a re-run with a larger budget resumes them. Samples in flight at
that moment are cancelled (their calls are in the spend).

Batched models (``batch:``, :mod:`conflict_eval.runs.batching`): their
spend is counted at the batch price
(:meth:`conflict_eval.pricing.PriceTable.usd`, the list price where no
batch discount is published: an upper bound), and since a batch reports usage
only when it completes, hours after its requests were queued, each request
is admitted before Inspect queues it (``on_before_model_generate``): it
reserves its estimated cost (``reserve``, per call), and a request that
would take spend plus reservations past the budget is never submitted --
it is held until the stop cancels its sample. The stop waits for the
batches already submitted to come back (so nothing is left running at the
provider and what they cost is counted), then cancels the run like Ctrl-C.
The stop record lists what was submitted per model (``submitted``) and how
many requests were held back.

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

from inspect_ai.hooks import BeforeModelGenerate, Hooks, ModelUsageData, SampleEnd, hooks

from conflict_eval.pricing import PriceTable, batched
from conflict_eval.records.config_files import json_or_none

STOP_FILE = "suite-stop.json"


class BudgetExhausted(ValueError):
    """Raised before a run when the logs already record the whole budget as spent."""


class _Budget:
    def __init__(self, limit_usd: float, spent_usd: float, prices: PriceTable,
                 batch: dict[str, Any] | None = None, reserve: dict[str, float] | None = None):
        self.limit = limit_usd
        self.spent = spent_usd
        self.prices = prices
        self.batch = batch or {}  # batched model -> its GenerateConfig.batch
        self.reserve = reserve or {}  # model -> USD reserved per admitted call (batched models)
        self.stopped = False
        self.cancelled = False
        self.lock = threading.Lock()
        self.reserved = 0.0
        self.pending: list[tuple[str | None, str, float]] = []  # (sample, model, reservation) admitted
        self.submitted: dict[str, int] = {}
        self.held = 0
        self.active: set[str] = set()  # samples with an admitted call that have not ended
        self.held_samples: set[str] = set()  # samples waiting on a call the stop held back

    def add(self, model: str, usage) -> None:
        # an unpriced model counts 0: a budget refuses models without a price before it runs
        cost = self.prices.usd(model, usage, batched=self.batch.get(model), upper_bound=True).usd or 0.0
        with self.lock:
            self.spent += cost
            for i, (_, m, r) in enumerate(self.pending):  # this call's reservation is released
                if m == model:
                    self.reserved -= r
                    del self.pending[i]
                    break
            if self.spent >= self.limit:
                self.stopped = True
        self._maybe_cancel()

    def admit(self, model: str, sample: str | None) -> bool:
        """Whether a call may be submitted; a refused call stops the run."""
        r = self.reserve.get(model, 0.0)
        with self.lock:
            if not self.stopped and self.spent + self.reserved + r > self.limit and (r > 0 or self.spent >= self.limit):
                self.stopped = True
            if self.stopped:
                self.held += 1
                if sample is not None:
                    self.held_samples.add(sample)
            else:
                self.reserved += r
                self.pending.append((sample, model, r))
                self.submitted[model] = self.submitted.get(model, 0) + 1
                if sample is not None:
                    self.active.add(sample)
        self._maybe_cancel()
        return not self.stopped

    def release_sample(self, sample: str | None) -> None:
        """A sample ended (an error included): its calls still reserved will never report usage."""
        with self.lock:
            self.active.discard(sample)
            self.held_samples.discard(sample)
            keep = []
            for entry in self.pending:
                if entry[0] == sample:
                    self.reserved -= entry[2]
                else:
                    keep.append(entry)
            self.pending = keep
        self._maybe_cancel()

    def _maybe_cancel(self) -> None:
        """After the stop, cancel like Ctrl-C (Inspect closes the logs as cancelled). A live run
        cancels at once (calls in flight are cancelled with their samples, and counted). With
        batched models it first waits until no batched call is outstanding and every sample
        that was answered has ended (scored and logged), so no batch is left running at the
        provider and nothing paid for is thrown away; samples held at the gate are cancelled."""
        with self.lock:
            go = self.stopped and not self.cancelled and (not self.batch or (
                not any(m in self.batch for _, m, _ in self.pending) and not (self.active - self.held_samples)))
            if go:
                self.cancelled = True
        if go:
            signal.raise_signal(signal.SIGINT)


_active: _Budget | None = None


@hooks(name="conflict_eval_budget", description="conflict-eval suite-wide $ budget")
class BudgetHook(Hooks):
    def enabled(self) -> bool:
        return _active is not None

    async def on_model_usage(self, data: ModelUsageData) -> None:
        if _active is not None:
            _active.add(data.model_name, data.usage)

    async def on_before_model_generate(self, data: BeforeModelGenerate) -> None:
        if _active is not None and not _active.admit(data.model_name, _sample_key() if _active.batch else None):
            import anyio

            await anyio.sleep_forever()  # never submitted; the stop cancels this sample

    async def on_sample_end(self, data: SampleEnd) -> None:
        if _active is not None and _active.batch:
            _active.release_sample((data.sample.store or {}).get(SAMPLE_KEY))


SAMPLE_KEY = "conflict_eval_budget_sample"


def _sample_key() -> str | None:
    """The current sample's key for the budget, kept in its store (the public way to tie a
    model call to the sample that ends later: Inspect's hook data name the sample by
    different ids before a call and at the sample's end)."""
    import uuid

    from inspect_ai.util import store

    try:
        st = store()
    except Exception:  # noqa: BLE001 -- a call outside any sample
        return None
    key = st.get(SAMPLE_KEY)
    if key is None:
        key = uuid.uuid4().hex
        st.set(SAMPLE_KEY, key)
    return key


def spent_in_logs(log_dir: str | Path, prices: PriceTable, *, tasks: set[str] | None = None,
                  eval_set_id: str | None = None) -> float:
    """Dollars the logs under ``log_dir`` record in their headers: every log
    file (:func:`conflict_eval.report.spend.header_spend`, so calls of cancelled
    samples and of attempts re-run after a resume count, as the page's
    ``$ total`` counts them), at the batch price for the models that ran
    batched, plus the calls of superseded attempts set aside in ``attempts/``
    (:func:`conflict_eval.report.spend.attempts_spend`); ``tasks`` /
    ``eval_set_id`` keep only those task names / that eval set (one worker's
    share of a plan's shared folder)."""
    from inspect_ai.log import read_eval_log

    from conflict_eval.pricing import batched_models
    from conflict_eval.report.logs import listed_logs
    from conflict_eval.report.spend import attempts_spend, header_spend, is_attempt

    total = 0.0
    kept: list[str] = []
    attempts: list[str] = []
    # shards a merged log covers are hidden (Inspect's rule): their usage is in the merged log
    for info in listed_logs(log_dir):
        try:
            h = read_eval_log(info, header_only=True)
        except Exception:  # noqa: BLE001 -- an unreadable log records no spend we can count
            continue
        if (tasks is not None and (h.eval.task_registry_name or h.eval.task) not in tasks) or (
                eval_set_id is not None and h.eval.eval_set_id != eval_set_id):
            continue
        if is_attempt(info.name):
            attempts.append(info.name)
            continue
        kept.append(info.name)
        total += sum(usd or 0.0 for usd in header_spend(h.stats.model_usage or {}, batched_models(h), prices,
                                                        upper_bound=True).values())
    for _, per_model in attempts_spend(attempts, kept, prices, upper_bound=True):
        total += sum(usd or 0.0 for usd in per_model.values())
    return total


def batch_budget(cells, prices: PriceTable | None = None) -> tuple[dict[str, Any], dict[str, float]]:
    """For the budget, from ``(model, GenerateConfig.batch, list $ per call)`` of each cell:
    the batch setting of each batched model, and the dollars to reserve per call it
    submits (the largest estimated cost per call of its cells, at its batch price).
    Live models are in neither. ``prices`` gives the batch discounts (``None``: the packaged ones)."""
    table = PriceTable.of(prices)
    settings: dict[str, Any] = {}
    reserve: dict[str, float] = {}
    for model, batch, per_call in cells:
        if not batched(model, batch):
            continue
        settings[model] = batch
        usd = table.batch_usd(model, per_call, batch, upper_bound=True) or 0.0
        reserve[model] = max(reserve.get(model, 0.0), usd)
    return settings, reserve


class budget_guard:
    """Context manager arming the budget hook for one ``eval_set`` call."""

    def __init__(self, limit_usd: float | None, log_dir: str | Path, prices: PriceTable, *,
                 batch: dict[str, Any] | None = None, reserve: dict[str, float] | None = None,
                 tasks: set[str] | None = None, eval_set_id: str | None = None):
        self.limit, self.log_dir, self.prices = limit_usd, log_dir, prices
        self.batch, self.reserve, self.tasks, self.eval_set_id = batch, reserve, tasks, eval_set_id
        self.budget: _Budget | None = None

    def __enter__(self) -> budget_guard:
        global _active
        if self.limit is not None:
            spent = spent_in_logs(self.log_dir, self.prices, tasks=self.tasks, eval_set_id=self.eval_set_id)
            self.budget = _Budget(self.limit, spent, self.prices, self.batch, self.reserve)
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

    def submitted(self) -> dict[str, Any] | None:
        """What this run sent: calls admitted per model (batched or live) and calls held back by the stop."""
        b = self.budget
        if b is None:
            return None
        return {"calls": dict(b.submitted), "batched_models": sorted(b.batch),
                "held_back": b.held}


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
    return json_or_none(Path(log_dir) / STOP_FILE)
