"""Memorization ratio and answer-class rates (Xie et al., ICLR 2024 §3.3), as pure functions.

Each reply is classed as the ``memory`` answer, the ``counter`` answer or
``uncertain`` (the paper's third option); a reply that names no option and
refuses to answer ("I cannot determine ...", see
:mod:`conflict_eval.answers.refusal`) is a ``refusal``, and a reply with no
readable choice is a ``parse_failure`` (neither is given an answer class). With ``f_m`` and ``f_c`` the counts of memory and counter
answers:

* memorization ratio ``M_R = f_m / (f_m + f_c)`` -- undefined (NaN) when no
  reply chose either answer (the paper leaves uncertain answers out of it);
* ``<class>_rate`` -- that class's share of *all* replies, refusals and
  parse failures included, so the five rates sum to 1.

>>> summary(["memory", "memory", "counter", "uncertain"])
{'memorization_ratio': 0.6666666666666666, 'memory_rate': 0.5, 'counter_rate': 0.25, 'uncertain_rate': 0.25, 'refusal_rate': 0.0, 'parse_failure_rate': 0.0, 'n': 4.0}
"""

from __future__ import annotations

import math
from collections.abc import Iterable

CLASSES = ("memory", "counter", "uncertain", "refusal", "parse_failure")
KEYS = ("memorization_ratio", "memory_rate", "counter_rate", "uncertain_rate", "refusal_rate", "parse_failure_rate",
        "n")


def summary(classes: Iterable[str]) -> dict[str, float]:
    """Ratio and rates of a list of class labels (empty input: every value NaN, n 0)."""
    counts = {c: 0 for c in CLASSES}
    for c in classes:
        if c not in counts:
            raise ValueError(f"unknown answer class {c!r}; expected one of {', '.join(CLASSES)}")
        counts[c] += 1
    n = sum(counts.values())
    decided = counts["memory"] + counts["counter"]
    out = {"memorization_ratio": counts["memory"] / decided if decided else math.nan}
    out.update({f"{c}_rate": (counts[c] / n if n else math.nan) for c in CLASSES})
    out["n"] = float(n)
    return out


def summary_by_setting(rows: Iterable[tuple[str, str]]) -> dict[str, float]:
    """:func:`summary` over all ``(setting, class)`` rows, and per setting
    with keys ``<key>:<setting>``."""
    rows = list(rows)
    out = summary(c for _, c in rows)
    for setting in sorted({s for s, _ in rows}):
        for key, value in summary(c for s, c in rows if s == setting).items():
            out[f"{key}:{setting}"] = value
    return out
