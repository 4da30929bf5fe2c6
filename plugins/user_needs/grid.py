"""The user-need x context-setting grid (§3, §4.2, Figure 2).

A question (:class:`UserNeedItem`) has an original answer (from the original
knowledge), a manipulated answer (from the manipulated, conflicting knowledge),
one *matching* context and one *conflicting* context. Distractors come from a
pool of the other questions' original and manipulated contexts (§4.2: "All
other contexts are selected from a pool of original and manipulated knowledge
that excludes any information directly related to the current question").

For ``n`` retrieved contexts:

* ``matching``: the matching context among ``n - 1`` distractors;
* ``conflict``: the conflicting context among the same ``n - 1`` distractors,
  at the same position;
* ``irrelevant``: ``n`` distractors.

The distractors and the position of the relevant context are drawn with
``random.Random(f"{seed}|{question id}|{n}")``: reproducible, the same for
every user need and for the matching and conflict settings of one question and
``n`` (so those cells differ only in what the paper varies).
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conflict_eval.records import ArgumentError, ConflictQA, Passage, TaskArgument

from .prompts import IDK, USER_NEEDS

log = logging.getLogger(__name__)

SETTINGS = ("matching", "conflict", "irrelevant")
"""Context settings of §3.2: Context Matching, Knowledge Conflict, Information Irrelevant."""

# Figure 2: which answer is right in each cell (setting, user need).
#   Context Matching:       Sun / Sun / Sun
#   Knowledge Conflict:     Proxima Centauri / Proxima Centauri / Sun
#   Information Irrelevant: I don't know / Sun / Sun
# (The converted figure also splits the Irrelevant row by whether the model's
# memory matches; both sub-rows have the same answers, so one row suffices.)
EXPECTED = {
    ("matching", "context_exclusive"): "original",
    ("matching", "context_first"): "original",
    ("matching", "memory_first"): "original",
    ("conflict", "context_exclusive"): "manipulated",
    ("conflict", "context_first"): "manipulated",
    ("conflict", "memory_first"): "original",
    ("irrelevant", "context_exclusive"): "idk",
    ("irrelevant", "context_first"): "original",
    ("irrelevant", "memory_first"): "original",
}

DEFAULT_N_CONTEXTS = (1, 2, 4, 8)
"""Default sweep (the start of Table 1's HotpotQA/DisentQA sequence 1, 2, 4, ...)."""
N_CONTEXT_PRESETS = {
    "uraq": (1, 10, 25, 50, 100, 250, 500, 1000),
    "synthetic": (1, 10, 25, 50, 100, 250, 500, 1000),
    "disentqa": (1, 2, 4, 8, 16, 32, 64),
    "hotpotqa": (1, 2, 4, 8, 16, 32),
}
"""Table 1's "Num. of Context Sequence" per dataset (``-T n_contexts=uraq``);
``synthetic`` is Table 1's own name for URAQ."""
DEFAULT_MAX_CONTEXT_TOKENS = 20_000
"""Table 1: counts grow until the average prompt reaches about 20k tokens."""


@dataclass(frozen=True)
class UserNeedItem:
    """One question with its original and manipulated knowledge."""

    id: str
    question: str
    answers: tuple[str, ...]
    """Original (true) answer and its aliases."""
    manipulated_answers: tuple[str, ...]
    """Answer implied by the manipulated knowledge (and aliases)."""
    match_context: str
    conflict_context: str
    keys: frozenset[str] = frozenset()
    """Topic keys (e.g. Wikipedia titles); pool passages sharing one are never distractors."""
    source_ids: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class PoolEntry:
    owner: str
    """Id of the question the passage belongs to."""
    text: str
    keys: frozenset[str] = frozenset()


def expected_answers(setting: str, user_need: str, item: UserNeedItem) -> tuple[str, list[str]]:
    """``(kind, answers)`` for one cell: kind is ``original``, ``manipulated`` or ``idk``."""
    check_choice("setting", setting, SETTINGS)
    check_choice("user_need", user_need, USER_NEEDS)
    kind = EXPECTED[(setting, user_need)]
    answers = {"original": list(item.answers), "manipulated": list(item.manipulated_answers),
               "idk": [IDK]}[kind]
    return kind, answers


def check_choice(name: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def parse_list(name: str, value, allowed: Sequence[str] | None = None, cast=str) -> list:
    """``"a,b"``, ``["a", "b"]`` or a single value -> list, validated."""
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, Iterable):
        items = list(value)
    else:
        items = [value]
    try:
        items = [cast(v) for v in items]
    except (TypeError, ValueError):
        raise ValueError(f"{name}: cannot read {value!r} as a list of {cast.__name__}") from None
    if not items:
        raise ValueError(f"{name} is empty")
    if allowed is not None:
        for v in items:
            check_choice(name, v, allowed)
    return items


def parse_counts(value) -> list[int]:
    """``n_contexts``: a preset name of :data:`N_CONTEXT_PRESETS`, ``"1,2,4"`` or a list."""
    if isinstance(value, str) and value.strip().lower() in N_CONTEXT_PRESETS:
        return list(N_CONTEXT_PRESETS[value.strip().lower()])
    try:
        counts = parse_list("n_contexts", value, cast=int)
    except ValueError:
        raise ValueError(f"n_contexts must be a comma list of numbers or one of the Table 1 presets "
                         f"{', '.join(N_CONTEXT_PRESETS)}; got {value!r}") from None
    bad = [n for n in counts if n < 1]
    if bad:
        raise ValueError(f"n_contexts must be >= 1, got {bad[0]}")
    return counts


def load_distractors(path: str | Path, *, dataset: str = "distractors") -> list[PoolEntry]:
    """An external distractor pool (``-T distractors=FILE``), JSON Lines, each row either

    * ``{"text": ..., "question_id": ..., "keys": [...]}`` (``question_id`` and
      ``keys`` optional): one passage; it is never a distractor for the question
      with that id, nor for a question sharing one of its topic keys. The URAQ
      generator's ``<out>.pool.jsonl`` has this form; or
    * a row of the URAQ generator's output (``id``, ``original_knowledge``,
      ``manipulated_knowledge``): both statements, owned by that question.

    Every bad row is reported at once with file, line and field.
    """
    from conflict_eval.records import DatasetError, RecordProblem, read_jsonl

    entries: list[PoolEntry] = []
    problems: list[RecordProblem] = []
    for loc, row in read_jsonl(path):
        def bad(field: str, msg: str) -> None:
            rid = str(row.get("question_id") or row.get("id") or loc) if isinstance(row, dict) else loc
            problems.append(RecordProblem(rid, loc, field, msg))

        if isinstance(row, Exception):
            bad("-", f"invalid JSON: {row}")
            continue
        if not isinstance(row, dict):
            bad("-", f"expected an object, got {type(row).__name__}")
            continue
        keys = row.get("keys") or []
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            bad("keys", "expected a list of strings")
            continue
        owner = row.get("question_id")
        if owner is not None and not isinstance(owner, (str, int)):
            bad("question_id", f"expected a string or null, got {type(owner).__name__}")
            continue
        if "text" in row:
            texts = [("text", row["text"])]
        elif "original_knowledge" in row or "manipulated_knowledge" in row:
            texts = [(f, row.get(f)) for f in ("original_knowledge", "manipulated_knowledge")]
            owner = row.get("id", owner)
        else:
            bad("text", "missing (expected `text`, or a URAQ generator row with "
                        "`original_knowledge` and `manipulated_knowledge`)")
            continue
        for field, text in texts:
            if not isinstance(text, str) or not text.strip():
                bad(field, f"expected a non-empty string, got {text!r:.80}")
                continue
            entries.append(PoolEntry("" if owner is None else str(owner), text.strip(), frozenset(keys)))
    if problems:
        raise DatasetError(dataset, str(path), problems)
    if not entries:
        raise DatasetError(dataset, str(path), [RecordProblem("-", "", "text", "the file has no passages")])
    return entries


def default_pool(items: Sequence[UserNeedItem]) -> list[PoolEntry]:
    """The original and manipulated contexts of every question (§4.2)."""
    pool = []
    for it in items:
        pool.append(PoolEntry(it.id, it.match_context, it.keys))
        pool.append(PoolEntry(it.id, it.conflict_context, it.keys))
    return pool


def approx_tokens(text: str) -> int:
    """Rough token count: one token per 4 characters (no tokenizer is loaded)."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class Placement:
    distractors: tuple[str, ...]
    """``n`` distractors; matching/conflict use the first ``n - 1``."""
    position: int
    """0-based position of the relevant context among the ``n`` contexts."""

    def contexts(self, setting: str, item: UserNeedItem) -> list[Passage]:
        n = len(self.distractors)
        if setting == "irrelevant":
            return [Passage(text=t, label="irrelevant") for t in self.distractors]
        relevant = (Passage(text=item.match_context, label="supporting") if setting == "matching"
                    else Passage(text=item.conflict_context, label="conflicting"))
        others = [Passage(text=t, label="irrelevant") for t in self.distractors[: n - 1]]
        return others[: self.position] + [relevant] + others[self.position:]


def candidates(item: UserNeedItem, pool: Sequence[PoolEntry]) -> list[str]:
    """The pool passages that may be distractors for ``item``, sorted (distinct texts).

    A text is excluded when *any* pool entry with that text belongs to the
    question or shares one of its topic keys (the same text may come from the
    dataset and from an external pool, with different owners)."""
    related = {e.text for e in pool if e.owner == item.id or (e.keys & item.keys)}
    related |= {item.match_context, item.conflict_context}
    return sorted({e.text for e in pool} - related)


def place(item: UserNeedItem, pool: Sequence[PoolEntry], n: int, seed: int = 0,
          allowed: Sequence[str] | None = None) -> Placement:
    """Seeded distractors and relevant-context position for ``item`` with ``n`` contexts.
    ``allowed`` is ``candidates(item, pool)`` when the caller already has it."""
    if n < 1:
        raise ValueError(f"number of contexts must be >= 1, got {n}")
    allowed = candidates(item, pool) if allowed is None else allowed
    if len(allowed) < n:
        raise ArgumentError(
            f"question {item.id!r}: only {len(allowed)} unrelated passages in the pool, "
            f"cannot build {n} contexts (use fewer contexts, more questions, or an external "
            "pool with ", TaskArgument("distractors"), ")")
    rng = random.Random(f"{seed}|{item.id}|{n}")
    distractors = tuple(rng.sample(allowed, n))
    return Placement(distractors, rng.randrange(n))


def cap_counts(items: Sequence[UserNeedItem], pool: Sequence[PoolEntry], counts: Sequence[int],
               max_context_tokens: int | None, seed: int = 0,
               allowed: dict[str, list[str]] | None = None) -> list[int]:
    """Keep the counts whose average context size (approx. tokens, matching setting)
    stays within ``max_context_tokens`` (Table 1's rule); drops the rest with a warning."""
    if max_context_tokens is None:
        return list(counts)
    allowed = allowed or {it.id: candidates(it, pool) for it in items}
    kept = []
    for n in sorted(set(counts)):
        sizes = [sum(approx_tokens(p.text)
                     for p in place(it, pool, n, seed, allowed[it.id]).contexts("matching", it))
                 for it in items]
        avg = sum(sizes) / max(len(sizes), 1)
        if avg > max_context_tokens:
            log.warning("dropping n_contexts=%d: average context %.0f tokens > budget %d",
                        n, avg, max_context_tokens)
            continue
        kept.append(n)
    if not kept:
        raise ValueError(f"every context count {list(counts)} exceeds max_context_tokens={max_context_tokens}")
    return kept


def build_grid(
    dataset: str,
    items: Sequence[UserNeedItem],
    *,
    user_needs: Sequence[str] = USER_NEEDS,
    settings: Sequence[str] = SETTINGS,
    n_contexts: Sequence[int] = DEFAULT_N_CONTEXTS,
    max_context_tokens: int | None = DEFAULT_MAX_CONTEXT_TOKENS,
    seed: int = 0,
    pool: Sequence[PoolEntry] | None = None,
) -> list[ConflictQA]:
    """One :class:`ConflictQA` per (question, n, setting, user need), question-major.

    The record's ``answers`` are the cell's expected answers (Figure 2);
    ``extra`` carries ``question_id``, ``user_need``, ``n_contexts``,
    ``relevant_position`` (None for irrelevant), ``expected`` (kind),
    ``original_answers`` and ``manipulated_answers``.
    """
    for u in user_needs:
        check_choice("user_need", u, USER_NEEDS)
    for s in settings:
        check_choice("setting", s, SETTINGS)
    pool = default_pool(items) if pool is None else pool
    allowed = {it.id: candidates(it, pool) for it in items}
    counts = cap_counts(items, pool, n_contexts, max_context_tokens, seed, allowed)
    records = []
    for it in items:
        for n in counts:
            placement = place(it, pool, n, seed, allowed[it.id])
            for s in settings:
                evidence = placement.contexts(s, it)
                for u in user_needs:
                    kind, answers = expected_answers(s, u, it)
                    records.append(ConflictQA(
                        id=f"{it.id}|n={n}|{s}|{u}",
                        dataset=dataset,
                        question=it.question,
                        answers=answers,
                        conflict_answer=it.manipulated_answers[0] if s == "conflict" else None,
                        evidence=evidence,
                        conflict_type="counterfactual" if s == "conflict" else "none",
                        setting=s,
                        source_ids=list(it.source_ids) or [it.id],
                        extra={
                            **it.extra,
                            "question_id": it.id,
                            "user_need": u,
                            "n_contexts": n,
                            "relevant_position": None if s == "irrelevant" else placement.position,
                            "expected": kind,
                            "original_answers": list(it.answers),
                            "manipulated_answers": list(it.manipulated_answers),
                        },
                    ))
    return records
