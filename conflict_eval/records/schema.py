"""The canonical record schema: :class:`Passage`, :class:`ConflictQA` and their conversion to an Inspect sample."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

PassageLabel = Literal["supporting", "conflicting", "irrelevant", "unknown"]

CONFLICT_TYPES = (
    "misinformation",
    "temporal",
    "semantic",
    "counterfactual",
    "inter_context",
    "none",
)
"""Conventional values of :attr:`ConflictQA.conflict_type` (``none`` = conflict-free).
Datasets may use others; these are the ones the built-ins use."""

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

MAX_ID_CHARS = 1000
"""The longest record id accepted. Real ids are short (hashes, ``2hop__1_2``,
``kre_ecqa-3f2a9c01de``); an id is written into every log entry of its sample,
and a runaway one (a whole document pasted into ``id``) makes Inspect's log
writer fail with a message that does not name the record. Longer ids are
rejected at load, naming the record's line and field."""


def unstorable_id(value: str) -> str | None:
    """Why ``value`` cannot be a record id, or None: a control character (NUL,
    tab, newline, ...: category Cc) or a lone surrogate cannot be stored in an
    Inspect log and read back, so the finished sample would be lost."""
    import unicodedata

    for i, ch in enumerate(value):
        if unicodedata.category(ch) in ("Cc", "Cs"):
            return (f"id {value[:60]!r} has a character that cannot be stored in a log ({ch!r} at position {i}); "
                    "fix the id in the file")
    return None


def _id_too_long(value: str) -> str:
    return (f"id is {len(value):,} characters long (starts {value[:40]!r}); "
            f"record ids may be at most {MAX_ID_CHARS} characters")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


class Passage(_Strict):
    """One piece of evidence shown to (or retrieved for) the model."""

    text: str = Field(min_length=1)
    label: PassageLabel = "unknown"
    """How the passage relates to the gold answer: it supports it, it implies a
    different (conflicting) answer, it is irrelevant, or unknown."""
    title: str | None = None
    id: str | None = None
    source: str | None = None
    """Where the passage came from, e.g. ``wikipedia``, ``news``, ``book``."""


class ConflictQA(_Strict):
    """A conflict QA item in canonical form."""

    id: str = Field(min_length=1)
    dataset: str = Field(min_length=1)
    question: str = Field(min_length=1)
    options: list[str] = Field(default_factory=list)
    """Answer options for multiple choice, in letter order; empty for free-form."""
    answers: list[str] = Field(min_length=1)
    """Gold answer text(s); for multiple choice, the text of the gold option."""
    gold_option: str | None = None
    """Letter of the gold option (multiple choice only)."""
    conflict_answer: str | None = None
    """The answer implied by the conflicting evidence, where there is one."""
    conflict_option: str | None = None
    """Letter of the option implied by the conflicting evidence."""
    evidence: list[Passage] = Field(default_factory=list)
    """Passages given to the model in this item's context setting."""
    conflict_type: str = "none"
    """See :data:`CONFLICT_TYPES`; ``none`` means conflict-free evidence."""
    setting: str | None = None
    """Context setting, e.g. ``conflict``, ``matching``, ``irrelevant``."""
    source_ids: list[str] = Field(default_factory=list)
    """Ids of the upstream record(s) this item was built from."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Dataset-specific fields methods may need (kept JSON-serialisable)."""

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if len(value) > MAX_ID_CHARS:
            raise ValueError(_id_too_long(value))
        if bad := unstorable_id(value):
            raise ValueError(bad)
        return value

    @model_validator(mode="after")
    def _check_options(self) -> ConflictQA:
        letters = LETTERS[: len(self.options)]
        for field in ("gold_option", "conflict_option"):
            value = getattr(self, field)
            if value is not None and value not in letters:
                raise ValueError(
                    f"{field} {value!r} is not one of the option letters "
                    f"{list(letters) or '(no options)'}"
                )
        if self.options and self.gold_option is None:
            raise ValueError("multiple-choice record (options given) needs gold_option")
        return self

    @property
    def is_multiple_choice(self) -> bool:
        return bool(self.options)

    def formatted_options(self) -> str:
        """Options as ``A. text`` lines."""
        return "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(self.options))

    def evidence_text(self, sep: str = "\n") -> str:
        """The evidence passages' text joined by ``sep``."""
        return sep.join(p.text for p in self.evidence)


def to_sample(record: ConflictQA):  # -> inspect_ai.dataset.Sample
    """An Inspect sample: the question as input, the gold letter (multiple
    choice) or gold answers (free-form) as target, the record as metadata."""
    from inspect_ai.dataset import Sample

    return Sample(
        id=record.id,
        input=record.question,
        target=record.gold_option if record.is_multiple_choice else list(record.answers),
        choices=list(record.options) or None,
        metadata=record.model_dump(mode="json"),
    )


# --------------------------------------------------------------------------