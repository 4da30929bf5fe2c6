"""The per-sample records the Micro-Act metrics read (``state.store_as(...)``).

The solver that writes it imports it from here: ``MicroActStore`` by the
``microact`` method (plugins/microact/solver.py); the baselines' ``BaselineStore``
is a core store (conflict_eval/components/stores.py). It lives beside
the metrics because a scorer never imports a plugin (CONTRIBUTING, the
``units-layers`` contract). Inspect keys a store by class and field name
(``MicroActStore:turns``), so logs written before the move read the same.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel
from pydantic import Field


class MicroActStore(StoreModel):
    """Per-sample Micro-Act state (``state.store_as(MicroActStore)``)."""

    turns: list[dict[str, Any]] = Field(default_factory=list)
    """One entry per turn: turn, thought, call, action, args, observation,
    error, forced_decompose, warm_start, conflict (assert verdict). ``thought``
    is what the model wrote (empty when its reply has only an Action); on the
    turn that starts with the paper's turn-4 thought, that pre-written text is
    in ``prefilled_thought``."""
    turns_used: int = 0
    """All turns in the history: worked (warm start) plus model-chosen."""
    worked_turns: int = 0
    """Figure 17's worked turns 1-3, written by us and executed (warm start)."""
    model_turns: int = 0
    """Turns whose action the model chose (terminate and invalid replies included):
    Algorithm 1's loop iterations t, the count Tables 3-4 report (see README)."""
    action_counts: dict[str, int] = Field(default_factory=dict)
    """Executed actions by name (forced splits count as ``decompose``)."""
    decompose_count: int = 0
    forced_decompose_count: int = 0
    invalid_actions: int = 0
    """Turns whose reply held no valid action."""
    helper_parse_failures: int = 0
    """Helper replies that could not be read (no 0/1 verdict, no sub-steps, empty)."""
    stop_reason: str = ""
    """``terminate`` or ``budget``."""
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_seconds: float = 0.0
    ablation: str = "none"
    max_turns: int = 0
