"""The per-sample records the ConflictScore task scorers read (``state.store_as(...)``).

Written by the ConflictScore solvers in ``plugins/conflictscore/``
(``conflict_regenerate`` writes :class:`RegenerationStore`, ``control_rag_answer``
:class:`ControlStore`) and read by ``truthfulqa_settings`` (``truthfulqa.py``).
They live beside the metrics because a scorer never imports a plugin
(CONTRIBUTING, the ``units-layers`` contract). Inspect keys a store by class
and field name (``RegenerationStore:flagged``), so logs written before the
move read the same.
"""

from __future__ import annotations

from inspect_ai.util import StoreModel
from pydantic import Field


class RegenerationStore(StoreModel):
    original_response: str = ""
    original_letter: str | None = None
    scored_response: str | None = None
    not_scored_reason: str | None = None
    cs_c: float | None = None
    cs_r: float | None = None
    flagged: bool = False
    """Regenerated: a claim is conflicted, or possibly conflicted (``flag_undetermined``)."""
    flag_undetermined: bool = False
    """Flagged only because unreadable grader replies could make a claim conflicted."""
    claims_undetermined: int = 0
    """Claims with at least one unreadable grader reply."""
    selected_claim: str | None = None
    conflict: dict = Field(default_factory=dict)
    regenerated_response: str | None = None
    regenerated_letter: str | None = None
    regeneration_parse_failure: str | None = None


class ControlStore(StoreModel):
    """The Control-RAG reply (Table 13), written by the ``control_rag_answer`` solver."""

    reply: str = ""
