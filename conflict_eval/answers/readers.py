"""What a unit declares about the readers of its model replies (hook ``conflict_eval_reply_readers``).

A unit (built-in or third-party) returns one :class:`ReplyReaders` from the
hook ``conflict_eval_reply_readers``; ``components.manager.reply_readers()``
merges every plugin's with the core's own (:data:`conflict_eval.answers.fuzz.CORE_PARSERS`,
:data:`CORE_CHAINS`). Four things, each collected where it is checked:

* ``parsers``: :class:`~conflict_eval.answers.fuzz.ParserEntry` lines (the
  function by import path, how to call it on one reply -- its fuzz inputs --,
  its documented failure, how a failure is scored). The fuzz test and the
  linear-time check (``tests/test_parser_robustness.py``) and
  ``benchmarks/parser_robustness.py`` run every one.
* ``chains``: :class:`Chain` -- for rows of the reply corpus of some prompt
  ``kinds``, the reader chain the method applies (segmenter, then the shared
  letter reader, ...), returning a :class:`Reading`. ``benchmarks/reply_reading.py``
  (read as meant, rewrites) and ``tests/test_reply_corpus.py`` /
  ``tests/test_reply_rewrites.py`` read the corpus through every chain.
* ``shapes``: JSON Lines files of hand-written replies in the corpus format
  (``tests/data/reply_corpus/README.md``: ``id``, ``kind``, ``reply``,
  ``args``, ``meaning``), read as the ``shapes`` corpus beside the core's
  ``shapes.jsonl``;
* ``tokens``: the labels and tags the readers look for, beyond
  :data:`conflict_eval.answers.fuzz.FUZZ_TOKENS`: the fuzz test mixes them
  into its random replies and pads them in its linear-time inputs.

This module also holds the vocabulary a chain uses: :class:`Reading`,
:func:`norm` (the comparable form of a value), :func:`says_refusal`,
:func:`choice_reading`, :func:`parsed_reading`, :func:`letters_of`, :func:`prefilled`
and :func:`triplet_set`.

>>> norm("  **“Paris”.** ")
'paris'
>>> choice_reading(type("P", (), {"ok": True, "letter": "b", "refused": False})()).value
'b'
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conflict_eval.answers.fuzz import ParserEntry

__all__ = ["CORE_CHAINS", "Chain", "NO_CONFLICTS", "Reading", "ReplyReaders", "choice_reading", "letters_of", "norm",
           "parsed_reading", "prefilled", "says_refusal", "triplet_set"]

NO_CONFLICTS = "<no conflicts>"
"""The value of a detection reply that says there are no conflicting relations."""


@dataclass(frozen=True)
class Reading:
    """What a chain made of one reply."""

    status: str
    """``"value"``, ``"refusal"`` or ``"failure"``."""
    value: Any = None
    reason: str | None = None


@dataclass(frozen=True)
class Chain:
    """The reader chain a method applies to replies of some corpus ``kinds``."""

    name: str
    """As the fuzz entries are named (``a+b``: a chain, as the method applies it)."""
    kinds: tuple[str, ...]
    """The reply corpus kinds (prompt families) it reads."""
    read: Callable[[dict], Reading]
    """A corpus row (``reply``, ``args``, ``meaning``) -> :class:`Reading`."""
    knows_refusal: bool = False
    """Whether the reader (or its method) has a refusal outcome; a refusal it
    reads as a parse failure then counts as refused, not meant."""
    applies: Callable[[dict], bool] = lambda row: True
    """Which rows of its kinds it reads."""
    meaning: Callable[[dict], dict] = lambda row: row["meaning"]
    """The meaning a row asks of this chain (default: the row's ``meaning``)."""
    choice_rewrites: bool = False
    """The chain reads an option letter from a whole reply in any voice: the
    choice rewrites of ``benchmarks/reply_rewrites.py`` apply to its rows (and,
    without a prompt tail, the answer-extraction benchmark sends them)."""
    prompt_tail: str | None = None
    """How the method's prefilled prompt ends: every ``choice`` row is also
    sent through this chain with this tail (``args.prompt_tail``)."""
    compose: Callable[[str, str], str] | None = None
    """Where a rewritten answer goes in one of its replies, ``(reply, answer) -> reply``
    (CoT: after the thought's ``</t>``); None: the answer is the whole reply."""


@dataclass(frozen=True)
class ReplyReaders:
    """One unit's reply readers: fuzz entries, corpus chains and labelled shapes."""

    parsers: Sequence[ParserEntry] = ()
    chains: Sequence[Chain] = ()
    shapes: Sequence[str | Path] = ()
    """JSON Lines files (absolute paths; ``Path(__file__).parent / ...`` in the unit)."""
    tokens: Sequence[str] = ()
    """Pieces the unit's readers look for (labels, tags) beyond ``fuzz.FUZZ_TOKENS``:
    mixed into the fuzz test's random replies and padded in its linear-time inputs."""


# --------------------------------------------------------------------------
# the vocabulary of a chain


def says_refusal(parsed: Any) -> bool:
    """Whether a reader's result reports a refusal (however a reader spells it:
    a true ``refusal`` or ``refused`` attribute, ``method``/``kind`` ``"refusal"``, or a
    failure reason that starts with "refus")."""
    if getattr(parsed, "refusal", False) is True or getattr(parsed, "refused", False) is True:
        return True
    if "refusal" in (getattr(parsed, "method", None), getattr(parsed, "kind", None)):
        return True
    return str(getattr(parsed, "reason", None) or "").lower().startswith("refus")


_FOLD = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "‚": "'", "`": "'", "–": "-", "—": "-"})


def norm(text: Any) -> Any:
    """A comparable form: NFKC, typographic quotes folded to ASCII, case and
    white space folded, surrounding quotes / markdown / a final period removed."""
    if isinstance(text, (list, tuple)):
        return [norm(t) for t in text]
    if not isinstance(text, str):
        return text
    s = " ".join(unicodedata.normalize("NFKC", text).translate(_FOLD).casefold().split())
    prev = None
    while s != prev:
        prev = s
        s = s.strip().strip("*_\"'").rstrip(".").strip()
    return s


def triplet_set(triplets) -> list:
    """Triplets in a comparable, order-free form."""
    return sorted(tuple(norm(list(t))) for t in triplets)


def letters_of(row: dict) -> str:
    """The item's letters (any letter when the call's options are not kept: Micro-Act's final answer)."""
    import string

    from conflict_eval.answers.choice import letters_for

    options = row["args"]["options"]
    return letters_for(len(options)) if options else string.ascii_uppercase


def choice_reading(parsed) -> Reading:
    """A :class:`~conflict_eval.answers.ChoiceParse` (or one shaped like it) as a :class:`Reading`."""
    if says_refusal(parsed):
        return Reading("refusal", reason=getattr(parsed, "reason", None))
    if parsed.ok:
        return Reading("value", norm(parsed.letter))
    return Reading("failure", reason=parsed.reason)


def parsed_reading(parsed) -> Reading:
    """A result with ``ok``, ``value`` and ``reason`` (``parse_yes_no``, ``parse_target``) as a :class:`Reading`."""
    if says_refusal(parsed):
        return Reading("refusal", reason=parsed.reason)
    return Reading("value", norm(parsed.value)) if parsed.ok else Reading("failure", reason=parsed.reason)


def prefilled(row: dict) -> str:
    """The reply with its prompt's prefill restored (``args.prompt_tail``)."""
    from conflict_eval.answers.reply import restore_prefill

    return restore_prefill(row["args"].get("prompt_tail", ""), row["reply"])


# --------------------------------------------------------------------------
# the core's own chains


def _read_parse_choice(row: dict) -> Reading:
    from conflict_eval.answers.choice import parse_choice

    return choice_reading(parse_choice(row["reply"], letters_of(row), options=row["args"]["options"]))


def _read_yes_no(row: dict) -> Reading:
    from conflict_eval.answers.yes_no import parse_yes_no

    return parsed_reading(parse_yes_no(row["reply"]))


CORE_CHAINS: tuple[Chain, ...] = (
    Chain("parse_choice", ("choice",), _read_parse_choice, knows_refusal=True, choice_rewrites=True),
    Chain("polluted_kb.parse_yes_no", ("polluted_kb.yes_no",), _read_yes_no),
)
"""The chains of the core's own readers (the shared letter reader; the yes/no verdict of ``kb.rag``'s prompt)."""
