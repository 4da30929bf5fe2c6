"""How long a cell will take: the time figure ``suite plan`` deals workers by.

Dollars are the wrong scale for dealing cells out: a local model's cells cost
$0 and all landed on one worker (issue 44). A cell's wall time is estimated
from its call and token counts (:class:`~conflict_eval.runs.estimate.Estimate`):

* **API models**: ``calls x latency / parallel``; ``latency`` is the seconds
  per call measured by the user (``suite plan --latency MODEL=SECONDS``),
  else :data:`DEFAULT_API_LATENCY_S`; ``parallel`` is the model's
  ``max_connections`` (Inspect's default 10 when unset), never more than the
  cell's samples (a sample's calls run one after another).
* **Local models** (:data:`LOCAL_PROVIDERS`: one model on this machine's
  cores; concurrent requests share them): ``calls x`` :data:`LOCAL_CALL_S`
  ``+ output tokens /`` :data:`LOCAL_DECODE_TPS`, with no parallelism. Both
  constants are the offline model's measured throughput on the 2-core test
  machine (``benchmarks/results/local_throughput_quiet.json``: 72.1 output
  tokens/s decoding on two threads; 8 CoT calls of 139 output tokens in a
  7.4 s sample span, so 0.69 s per call besides decoding). A measured
  ``--latency`` replaces the per-call figure here too.
* **Scripted test models**: their ``delay`` argument per call (0 by default).

A batched model's calls wait for the provider's batch (minutes to hours, not
predictable from here): the figure is the live one, so a plan of batched cells
is dealt as if live.

>>> seconds_for("openai/gpt-4o-mini", calls=100, output_tokens=0, samples=50, max_connections=10)
20.0
>>> seconds_for("openai/gpt-4o-mini", calls=10, output_tokens=0, samples=1, max_connections=10)
20.0
>>> round(seconds_for("conflict_eval/smollm2", calls=8, output_tokens=139, samples=8), 2)
7.45
>>> seconds_for("scripted/x", calls=4, output_tokens=0, samples=4, args={"delay": 0.5}, max_connections=1)
2.0
"""

from __future__ import annotations

from typing import Any

from conflict_eval.pricing import LOCAL_PROVIDERS

DEFAULT_API_LATENCY_S = 2.0  # seconds per API call when none is measured (a short chat completion)
DEFAULT_MAX_CONNECTIONS = 10  # Inspect's default per model API
LOCAL_DECODE_TPS = 72.1
LOCAL_CALL_S = 0.69
SCRIPTED_PROVIDERS = ("scripted", "mockllm", "flaky", "oracle")


def seconds_for(model: str, *, calls: float, output_tokens: float, samples: int,
                max_connections: int | None = None, args: dict[str, Any] | None = None,
                latency: float | None = None) -> float:
    """Estimated wall seconds of one cell (see the module docstring)."""
    provider = model.split("/", 1)[0]
    if provider in LOCAL_PROVIDERS:
        per_call = LOCAL_CALL_S if latency is None else latency
        return calls * per_call + (output_tokens / LOCAL_DECODE_TPS if latency is None else 0.0)
    if provider in SCRIPTED_PROVIDERS:
        per_call = float((args or {}).get("delay") or 0.0) if latency is None else latency
    else:
        per_call = DEFAULT_API_LATENCY_S if latency is None else latency
    parallel = max(1, min(max_connections or DEFAULT_MAX_CONNECTIONS, max(samples, 1)))
    return calls * per_call / parallel


def parse_latencies(pairs: list[str]) -> dict[str, float]:
    """``["openai/gpt-4o-mini=1.5"]`` -> ``{"openai/gpt-4o-mini": 1.5}`` (finite, >= 0 seconds)."""
    import math

    from conflict_eval.runs.spec import SuiteError

    out = {}
    for pair in pairs:
        model, sep, value = pair.rpartition("=")
        try:
            seconds = float(value)
        except ValueError:
            seconds = math.nan
        if not sep or not model or not math.isfinite(seconds) or seconds < 0:
            raise SuiteError(f"bad --latency {pair!r}: expected MODEL=SECONDS, e.g. openai/gpt-4o-mini=1.5 "
                             "(seconds per call, a finite number >= 0)")
        out[model] = seconds
    return out


def duration_text(seconds: float) -> str:
    """``0.5 s``, ``42.0 s``, ``4 min 29 s``, ``2 h 05 min``: the core's one
    duration format (estimates, ``suite status``'s quiet logs, a batch's age).

    The unit is chosen on the rounded value, so nothing shows as ``60.0 s`` or
    ``60 min``: 59.96 s is ``1 min 0 s``, 3599.6 s is ``1 h 00 min``.

    >>> duration_text(0.5), duration_text(269), duration_text(7500), duration_text(59.96)
    ('0.5 s', '4 min 29 s', '2 h 05 min', '1 min 0 s')
    """
    if round(seconds, 1) < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes} min {secs} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"
