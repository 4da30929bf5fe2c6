"""The paired comparison of two sets of per-sample scores on the same samples:
the one function behind the leaderboard's paired table
(:func:`conflict_eval.report.stats.paired_comparisons`) and
``conflict-eval compare`` (:mod:`conflict_eval.report.compare`).

:func:`paired_difference` takes the two models' values on the shared units
(sample ids), position by position, and gives:

* ``diff`` -- mean(a) - mean(b) (= the mean of the paired differences);
* ``ci`` -- the 95% **paired** percentile bootstrap interval: the shared ids
  are resampled together (one index array for both sides) and the mean
  difference is taken on each resample. ``None`` when every paired
  difference is the same (the interval would be zero-width): the exact test
  then decides;
* ``unpaired_ci`` -- the same bootstrap with each side resampled on its own
  (as if the samples were unrelated), so the gain from pairing is visible;
* an **exact paired test** (two-sided, ``scipy.stats.binomtest``):
  McNemar's exact test when every value is 0 or 1 (the discordant pairs:
  ``a_only`` ids where only A scores 1, ``b_only`` where only B does; p =
  binomtest(a_only, a_only + b_only, 0.5); 1.0 with no discordant pair),
  otherwise the sign test on the non-zero paired differences (p = 1.0 when
  every difference is 0).

Golden values (by hand, tests/suite/test_paired.py): 20 ids, A right on 15,
B on 9, every B-right id also A-right (6 discordant, all for A): diff =
0.30, McNemar p = 2 * 0.5^6 = 0.03125.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TESTS = {
    "mcnemar_exact": "McNemar's exact test (binomial on the discordant pairs; 0/1 scores)",
    "sign": "two-sided sign test on the non-zero paired differences",
}


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
    a_better: int
    """Ids where A's value is higher (McNemar: A 1, B 0)."""
    b_better: int

    @property
    def significant(self) -> bool:
        if self.ci is None:
            return self.p_value < 0.05
        return not (self.ci[0] <= 0.0 <= self.ci[1])


def percentile_ci(values) -> tuple[float, float]:
    import numpy as np

    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def resample_positions(n: int, bootstrap: int, seed: int = 0):
    """The ``bootstrap x n`` positions every paired interval on ``n`` ids uses (seeded)."""
    import numpy as np

    return np.random.default_rng(seed).integers(0, n, size=(bootstrap, n))


def exact_test(a, b) -> tuple[str, float, int, int]:
    """``(test name, two-sided p, ids A higher, ids B higher)`` (module docstring)."""
    import numpy as np
    from scipy.stats import binomtest

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    binary = bool(np.all((a == 0) | (a == 1)) and np.all((b == 0) | (b == 1)))
    up, down = int((a > b).sum()), int((a < b).sum())
    p = float(binomtest(up, up + down, 0.5).pvalue) if up + down else 1.0
    return ("mcnemar_exact" if binary else "sign"), p, up, down


def paired_difference(a, b, bootstrap: int = 1000, seed: int = 0, *, positions: Any = None,
                      boot_a: Any = None, boot_b: Any = None) -> Paired:
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
    return Paired(n, float(va.mean()), float(vb.mean()), diff, ci, unpaired, test, p, up, down)
