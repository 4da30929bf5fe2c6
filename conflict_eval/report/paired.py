"""Every verdict of the toolkit: the paired comparison of two sets of
per-sample scores on the same samples, its test, the family correction and
the words beside the numbers. The leaderboard's paired table and its
"best / tied" marks (:func:`conflict_eval.report.stats.paired_comparisons`,
:func:`~conflict_eval.report.stats.ranks`) and ``conflict-eval compare``
(:mod:`conflict_eval.report.compare`) all decide here.

:func:`paired_difference` takes the two models' values on the shared units
(sample ids), position by position, and gives:

* ``diff`` -- mean(a) - mean(b) (= the mean of the paired differences);
* the **test that decides** (two-sided; :data:`TESTS`):

  - 0/1 values: **McNemar's exact test** (the two-sided binomial test at 1/2
    on the discordant pairs, as ``scipy.stats.binomtest``; twice the smaller
    tail of ``scipy.stats.binom``, the same p: ``a_higher`` ids where only A scores 1, ``b_higher``
    where only B does; p = 1.0 with no discordant pair);
  - any other values: the **paired permutation test on the mean difference**
    (``scipy.stats.permutation_test``, ``permutation_type="samples"``: each
    pair's two values are swapped or not, so the statistic is the printed
    ``diff``). Exact (every one of the 2^n swaps) up to n = 16, else
    :data:`PERMUTATIONS` Monte-Carlo swaps from the fixed seed
    :data:`PERMUTATION_SEED`, never the user's ``--seed``: the p, and so the
    verdict, is the same under every bootstrap seed. p = 1.0 when every
    paired difference is 0;

* ``ci`` -- the 95% **paired** percentile bootstrap interval (ids resampled
  together, seeded). It is shown, never the decision; ``None`` when every
  paired difference is the same (it would be zero-width);
* ``unpaired_ci`` -- the same bootstrap with each side resampled on its own,
  so the gain from pairing is visible.

**Significant** means the test's p, adjusted for the family (:func:`adjust`;
Holm by default) when there is one, is below ``alpha`` (:data:`ALPHA`). When the
bootstrap interval says otherwise (it excludes 0 and the test is not
significant, or the reverse), :attr:`Paired.note` says so in the row.

**Direction**: which side is *better* comes from the metric's declared
direction (:func:`conflict_eval.report.stats.direction`): on a lower-is-better
metric the lower side is better; an undeclared metric gets no "better" word.

Golden values (by hand, tests/suite/test_paired.py and tests/suite/test_compare.py):
20 ids, A right on 15, B on 9, every B-right id also A-right (6 discordant,
all for A): diff = 0.30, McNemar p = 2 * 0.5^6 = 0.03125.

>>> holm([0.01, 0.04, 0.03, 0.005])
[0.03, 0.06, 0.06, 0.02]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

TESTS = {
    "mcnemar_exact": "McNemar's exact test (binomial on the discordant pairs; 0/1 scores)",
    "permutation": "paired permutation test on the mean difference (exact up to 16 ids, else 9,999 "
                   "Monte-Carlo swaps at a fixed seed)",
}
ALPHA = 0.05
ADJUSTMENTS = {
    "holm": "Holm step-down (family-wise error rate)",
    "none": "no adjustment",
}
EXACT_UP_TO = 16
PERMUTATIONS = 9_999
PERMUTATION_SEED = 20_260_101


@dataclass
class Paired:
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci: tuple[float, float] | None
    unpaired_ci: tuple[float, float] | None
    test: str
    p_value: float
    a_higher: int
    """Ids where A's value is higher (McNemar: A 1, B 0)."""
    b_higher: int
    alpha: float = ALPHA
    p_adjusted: float | None = None
    """The p after the family correction (:func:`adjust`); ``None`` when no family was formed."""
    adjustment: str = "none"

    @property
    def p_decisive(self) -> float:
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    @property
    def significant(self) -> bool:
        """The test's (adjusted) p below alpha; the bootstrap interval never decides."""
        return self.p_decisive < self.alpha

    @property
    def interval_excludes_zero(self) -> bool | None:
        return None if self.ci is None else not (self.ci[0] <= 0.0 <= self.ci[1])

    @property
    def note(self) -> str | None:
        """A sentence when the bootstrap interval and the test disagree."""
        ex = self.interval_excludes_zero
        if ex is None or ex == self.significant:
            return None
        if ex:
            return "interval excludes 0 but the test is not significant"
        return "interval contains 0 but the test is significant"

    def better(self, direction: str | None) -> str | None:
        """``"A"`` / ``"B"`` when significant and the metric declares a direction, else ``None``."""
        if direction not in ("higher", "lower") or not self.significant or self.diff == 0:
            return None
        return "A" if (self.diff > 0) == (direction == "higher") else "B"

    def counts_text(self, direction: str | None) -> str:
        """The discordant counts in words: "better" only for a declared direction."""
        if direction == "higher":
            return f"{self.a_higher} A-better / {self.b_higher} B-better"
        if direction == "lower":
            return f"{self.b_higher} A-better / {self.a_higher} B-better"
        return f"{self.a_higher} A-higher / {self.b_higher} B-higher"

    def as_dict(self) -> dict:
        from dataclasses import asdict

        return {**asdict(self), "significant": self.significant, "note": self.note}


def percentile_ci(values) -> tuple[float, float]:
    import numpy as np

    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def resample_positions(n: int, bootstrap: int, seed: int = 0):
    """The ``bootstrap x n`` positions every paired interval on ``n`` ids uses (seeded)."""
    import numpy as np

    return np.random.default_rng(seed).integers(0, n, size=(bootstrap, n))


def _mean_difference(x, y, axis=-1):
    return x.mean(axis=axis) - y.mean(axis=axis)


@lru_cache(maxsize=4096)
def _mcnemar_p(smaller: int, discordant: int) -> float:
    """McNemar's exact two-sided p for ``smaller`` of ``discordant`` pairs on the rarer side.

    binomtest(k, m, 0.5) two-sided: the binomial at 1/2 is symmetric, so its p is twice the
    smaller tail (capped at 1); binom.cdf is 7x faster than binomtest, and a page of 8,700
    pairs repeats the same few (k, m), so each is computed once.
    """
    from scipy.stats import binom

    return min(1.0, 2.0 * float(binom.cdf(smaller, discordant, 0.5))) if discordant else 1.0


def exact_test(a, b) -> tuple[str, float, int, int]:
    """``(test name, two-sided p, ids A higher, ids B higher)`` (module docstring)."""
    import numpy as np
    from scipy.stats import permutation_test

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    binary = bool(np.all((a == 0) | (a == 1)) and np.all((b == 0) | (b == 1)))
    up, down = int((a > b).sum()), int((a < b).sum())
    if binary:
        return "mcnemar_exact", _mcnemar_p(min(up, down), up + down), up, down
    if not up + down:
        return "permutation", 1.0, up, down
    # pairs with no difference change nothing under a swap: leave them out of the enumeration
    keep = a != b
    x, y = a[keep], b[keep]
    # the mean over the kept pairs is the printed difference times n / kept: the same ordering of swaps
    exact = len(x) <= EXACT_UP_TO
    res = permutation_test((x, y), _mean_difference, permutation_type="samples", vectorized=True,
                           n_resamples=2 ** len(x) if exact else PERMUTATIONS, batch=2 ** 12,
                           alternative="two-sided", rng=None if exact else PERMUTATION_SEED)
    return "permutation", float(min(1.0, res.pvalue)), up, down


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    Home-made (statsmodels' ``multipletests`` is not a dependency; scipy has
    only Benjamini-Hochberg): sort ascending, multiply the k-th smallest by
    (m - k), carry the running maximum, cap at 1.
    """
    m = len(pvalues)
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda j: pvalues[j])):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = round(running, 15)
    return out


def adjust(results: list[Paired | None], method: str = "holm", alpha: float = ALPHA) -> None:
    """Set ``p_adjusted``, ``adjustment`` and ``alpha`` on every result of one family (in place)."""
    if method not in ADJUSTMENTS:
        raise ValueError(f"unknown adjustment {method!r}: one of {', '.join(ADJUSTMENTS)}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    family = [r for r in results if r is not None and not math.isnan(r.p_value)]
    adjusted = holm([r.p_value for r in family]) if method == "holm" else [r.p_value for r in family]
    for r, p in zip(family, adjusted):
        r.p_adjusted, r.adjustment, r.alpha = p, method, alpha


def paired_difference(a, b, bootstrap: int = 1000, seed: int = 0, *, positions: Any = None,
                      boot_a: Any = None, boot_b: Any = None, alpha: float = ALPHA) -> Paired:
    """The paired comparison of ``a`` and ``b`` (equal-length sequences, the
    same id at each position). ``positions`` (from :func:`resample_positions`)
    and the per-side bootstrap means ``boot_a``/``boot_b`` on them may be
    passed in to share resamples across many pairs on the same ids."""
    import numpy as np

    va, vb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if va.shape != vb.shape or va.ndim != 1:
        raise ValueError(f"paired_difference: a and b must be equal-length lists, got {va.shape} and {vb.shape}")
    n = len(va)
    if n == 0:
        raise ValueError("paired_difference: no shared samples")
    diff = float(va.mean() - vb.mean())
    test, p, up, down = exact_test(va, vb)
    ci = unpaired = None
    d = va - vb
    if bootstrap and n > 1:
        idx = positions if positions is not None else resample_positions(n, bootstrap, seed)
        ma = boot_a if boot_a is not None else va[idx].mean(axis=1)
        mb = boot_b if boot_b is not None else vb[idx].mean(axis=1)
        # mean of the paired differences on a resample = difference of the two means on it
        if float(d.min()) != float(d.max()):
            ci = percentile_ci(ma - mb)
        # unpaired: B resampled on its own (a second, independent draw of positions)
        idx_b = np.random.default_rng(seed + 1).integers(0, n, size=idx.shape)
        unpaired_diffs = ma - vb[idx_b].mean(axis=1)
        if float(np.ptp(unpaired_diffs)) > 0:
            unpaired = percentile_ci(unpaired_diffs)
    return Paired(n, float(va.mean()), float(vb.mean()), diff, ci, unpaired, test, p, up, down, alpha)
