"""Per-sample stores that one unit writes and another reads.

A method records what it did in typed per-sample state (``state.store_as``);
when a metric of another unit reads that state, the store's class lives here,
so neither imports the other: the Micro-Act baselines write
:class:`BaselineStore`, and Micro-Act's over-rationalization metric reads it
(GKP's generated knowledge, each baseline's replies).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel
from pydantic import Field


class BaselineStore(StoreModel):
    """What a baseline did on one sample (``state.store_as(BaselineStore)``)."""

    method: str = ""
    calls: list[dict[str, Any]] = Field(default_factory=list)
    """One entry per model call: phase, prompt, reply (prefill restored)."""
    knowledge: str | None = None
    """GKP: the generated knowledge used in the answer phase."""
    knowledge_failure: str | None = None
    """GKP: why no knowledge was read from the generation phase."""
    answer_text: str | None = None
    parse_failure: str | None = None
    parts: dict[str, Any] = Field(default_factory=dict)
    """Intermediate pieces: CoT thought, Self-Ask follow-ups, ANSWER1/ANSWER2."""
