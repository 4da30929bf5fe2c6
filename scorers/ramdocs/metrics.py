"""Strict exact match (RAMDocs, Wang et al. 2025 §4) and its breakdowns, as pure functions.

A response is correct only if it contains **every** gold answer and **none**
of the wrong answers, after SQuAD normalisation (lower case, no punctuation,
no articles, single spaces; :func:`conflict_eval.answers.text_metrics.normalize_squad`).

Choices (see README):

* "contains" is containment as a run of whole tokens (as ``cover_em``): gold
  ``1963`` is found in "born in 1963" but not in "19634"; plain substring
  search would also find the wrong answer ``1`` inside ``1963``.
* A wrong answer that is itself contained in a gold answer (the upstream file
  has e.g. wrong ``Football`` beside gold ``American football``, and the same
  string in both lists) cannot be told apart from that gold answer: it is
  not checked, otherwise no response could ever be correct.
* An answer that normalises to nothing (e.g. ``"The"``) cannot be checked and
  is skipped.

>>> strict_em("1963 and 1956", ["1963", "1956"], ["1998"])
1.0
>>> strict_em("1963", ["1963", "1956"], ["1998"])
0.0
>>> strict_em("1963, 1956 (not 1998)", ["1963", "1956"], ["1998"])
0.0
>>> strict_em("American football", ["American football"], ["Football"])
1.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from conflict_eval.answers.text_metrics import Normalizer, get_normalizer
from conflict_eval.scorers.nan_metrics import mean_of

GROUPS = ("ambiguous", "single_answer", "with_misinformation", "without_misinformation")
"""Breakdown names: ambiguous (2+ gold answers) vs single-answer questions;
with vs without a misinformation document."""


def _contains(haystack: str, needle: str) -> bool:
    return bool(needle) and f" {needle} " in f" {haystack} "


def strict_em_parts(pred: str, golds: Sequence[str], wrongs: Sequence[str],
                    normalizer: str | Normalizer = "squad") -> tuple[float, float, int]:
    """``(strict_em, gold_recall, wrong_included)`` of ``pred``.

    ``gold_recall`` is the share of (checkable) gold answers found; NaN when no
    gold answer is checkable. ``wrong_included`` counts the checked wrong
    answers found.

    >>> strict_em_parts("1963 only", ["1963", "1956"], ["1998"])
    (0.0, 0.5, 0)
    """
    if isinstance(golds, str) or isinstance(wrongs, str):
        raise TypeError("golds and wrongs must be sequences of strings, not a string")
    norm = get_normalizer(normalizer)
    p = " ".join(norm(pred).split())
    g = [x for x in (" ".join(norm(a).split()) for a in golds) if x]
    w = [x for x in (" ".join(norm(a).split()) for a in wrongs) if x]
    w = [x for x in w if not any(_contains(gold, x) for gold in g)]
    found = sum(1 for x in g if _contains(p, x))
    wrong = sum(1 for x in w if _contains(p, x))
    recall = found / len(g) if g else math.nan
    ok = bool(g) and found == len(g) and wrong == 0
    return (1.0 if ok else 0.0), recall, wrong


def strict_em(pred: str, golds: Sequence[str], wrongs: Sequence[str],
              normalizer: str | Normalizer = "squad") -> float:
    """1.0 if ``pred`` contains every gold answer and no wrong answer, else 0.0."""
    return strict_em_parts(pred, golds, wrongs, normalizer)[0]


def group_of(extra: Mapping) -> tuple[str, str]:
    """The two breakdown groups of a sample from its record's ``extra``."""
    return ("ambiguous" if extra["ambiguous"] else "single_answer",
            "with_misinformation" if extra["has_misinformation"] else "without_misinformation")


def _stderr(values: list[float]) -> float:
    """Standard error of the mean (sample standard deviation, ddof 1); NaN under 2 values."""
    n = len(values)
    if n < 2:
        return math.nan
    m = sum(values) / n
    return math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1) / n)


def summary(rows: Iterable[tuple[Mapping[str, float], tuple[str, ...]]]) -> dict[str, float]:
    """Everything ``strict_em`` reports, from ``(score value, groups)`` rows.

    Keys: ``strict_em`` (mean) and ``strict_em_stderr``; ``strict_em_authors``
    (mean with the authors' normaliser, no quote folding); ``parse_failure``,
    ``gold_recall`` (mean over samples where it is defined), ``wrong_included``;
    per group ``strict_em:<group>``, ``parse_failure:<group>`` and
    ``n:<group>``; and ``n``. An empty group's means are NaN.

    >>> out = summary([({"strict_em": 1, "parse_failure": 0, "gold_recall": 1.0, "wrong_included": 0}, ("ambiguous", "with_misinformation")),
    ...                ({"strict_em": 0, "parse_failure": 1, "gold_recall": math.nan, "wrong_included": 0}, ("single_answer", "with_misinformation"))])
    >>> out["strict_em"], out["strict_em:ambiguous"], out["parse_failure:with_misinformation"], out["gold_recall"]
    (0.5, 1.0, 0.5, 1.0)
    >>> math.isnan(out["strict_em:without_misinformation"]), out["n:without_misinformation"]
    (True, 0.0)
    """
    rows = list(rows)
    em = [float(v["strict_em"]) for v, _ in rows]
    out = {"strict_em": mean_of(em), "strict_em_stderr": _stderr(em),
           "strict_em_authors": mean_of([float(v.get("strict_em_authors", v["strict_em"])) for v, _ in rows]),
           "parse_failure": mean_of([float(v["parse_failure"]) for v, _ in rows]),
           "gold_recall": mean_of([float(v["gold_recall"]) for v, _ in rows]),
           "wrong_included": mean_of([float(v["wrong_included"]) for v, _ in rows]),
           "n": float(len(rows))}
    for key in ("strict_em", "parse_failure"):
        for group, value in breakdown((float(v[key]), g) for v, g in rows).items():
            out[f"{key}:{group}"] = value
    for group in GROUPS:
        out[f"n:{group}"] = float(sum(1 for _, g in rows if group in g))
    return out


def breakdown(rows: Iterable[tuple[float, tuple[str, ...]]]) -> dict[str, float]:
    """Mean value per group over ``(value, groups)`` rows; a group with no
    sample is NaN (undefined, not 0).

    >>> breakdown([(1.0, ("ambiguous", "with_misinformation")), (0.0, ("single_answer", "with_misinformation"))])
    {'ambiguous': 1.0, 'single_answer': 0.0, 'with_misinformation': 0.5, 'without_misinformation': nan}
    """
    sums = {k: 0.0 for k in GROUPS}
    counts = {k: 0 for k in GROUPS}
    for value, groups in rows:
        for k in groups:
            sums[k] += value
            counts[k] += 1
    return {k: (sums[k] / counts[k] if counts[k] else math.nan) for k in GROUPS}
