"""What the Conflict Exposure method records per sample (``state.store_as(ConflictExposureStore)``).

The ``conflict_exposure`` solver (plugins/conflict_exposure/solver.py) writes it;
the ``triplet_parsing`` metric (:mod:`.triplets`) reads it. It lives beside the
metric because a scorer never imports a plugin (CONTRIBUTING, the ``units-layers``
contract). Inspect keys a store by class and field name
(``ConflictExposureStore:triplets``), so logs written before the move read the same.
"""

from __future__ import annotations

from inspect_ai.util import StoreModel
from pydantic import Field


class ConflictExposureStore(StoreModel):
    """Everything the method did for one sample (shown in ``inspect view``)."""

    expansion: str = ""
    rewritten_queries: list[str] = Field(default_factory=list)
    split_reply: str | None = None
    split_questions: list[str] = Field(default_factory=list)
    split_parse_failure: str | None = None
    reans_answer: str | None = None
    """The ReAns short answer (the span :func:`conflict_eval.answers.span.read_span` isolates)."""
    reans_parse_failure: str | None = None
    """Why no short answer could be isolated from the ReAns reply (then no answer query)."""
    doc_sources: dict[str, str] = Field(default_factory=dict)
    triplets: dict[str, list[list[str]]] = Field(default_factory=dict)
    rejected_items: dict[str, list[str]] = Field(default_factory=dict)
    recovered_items: dict[str, list[list[str]]] = Field(default_factory=dict)
    """Triplets recovered from items of more than three elements, by document."""
    ignored_items: dict[str, list[str]] = Field(default_factory=dict)
    """Placeholder items that restate the format ("(subject, predicate, object)"), by document."""
    extraction_failures: dict[str, str] = Field(default_factory=dict)
    conflict_reply: str | None = None
    conflicts: list[list[str]] = Field(default_factory=list)
    no_conflicts: bool = False
    """The detection reply said there are none (``[]`` or prose)."""
    conflict_parse_failure: str | None = None
    annotations: dict[str, str] = Field(default_factory=dict)
    model_calls: int = 0
    """Model calls this sample made (the final answer included)."""
    shared_calls: int = 0
    """Calls whose output this sample reused from its ``negatives=true`` sibling (not made)."""
