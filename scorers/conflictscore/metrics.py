"""CS-C and CS-R from a claims x documents label matrix (ConflictScore §3).

``matrix[i][j]`` is the label of claim ``i`` against document ``j``: one of
``SUPPORTS``, ``CONTRADICTS``, ``IRRELEVANT``, or ``None`` for an unparseable
grader reply (a *failed cell*). ``None`` entries are never mapped to a label.

Definitions (lower is better):

* D+(c) = documents labelled SUPPORTS for claim c; D-(c) = CONTRADICTS.
* CS-C = |{c : D+(c) and D-(c) both non-empty}| / |claims|.
* CS-R = mean over claims of |D-| / (|D+| + |D-|).

Our choices where the paper is silent:

* a claim with neither supporting nor contradicting documents (all
  IRRELEVANT, or no documents) has ratio **0**: no evidence contradicts it,
  and it still counts in the mean over *all* claims, as in the paper's
  "average this ratio across all claims".
* **failure never improves a score**: a failed cell could hold any of the
  three labels, so a claim with a failed cell is *undetermined* (its ratio
  can always move; whether it is conflicted often can too). We report the
  **range** the failures allow: :func:`cs_c` / :func:`cs_r` are the
  **worst case** (every failed cell set to whatever makes the claim look
  most conflicted) and :func:`cs_c_best` / :func:`cs_r_best` the best case.
  With every cell labelled the two are equal and are the paper's values.
  The true value always lies in the range, so a grader that fails on some
  cells can never lower the headline CS-C/CS-R below what full labels
  give. (Leaving undetermined claims out instead would not have this
  property: the mean over the remaining claims can be lower than over all,
  e.g. a grader that fails exactly on the contradicting cells leaves only
  unconflicted claims.)
* a response with **no claims** has no defined score: every function
  returns ``None``, the scorer reports NaN (excluded from the means) and
  counts it. A response whose every cell failed (**no parsed label**) has
  no best case (``cs_c_best`` / ``cs_r_best`` are ``None``, and it is
  counted as undefined), but its worst case is still defined and is what
  CS-C / CS-R report: leaving it out of the means would let a grader that
  fails exactly where documents contradict lower a run's CS-C / CS-R
  (issue 32).
* **label coverage** = labelled cells / all cells, reported beside CS-C and
  CS-R (``None`` with no cells).
"""

from __future__ import annotations

from collections.abc import Sequence

Matrix = Sequence[Sequence[str | None]]


def support_counts(row: Sequence[str | None]) -> tuple[int, int]:
    """(|D+|, |D-|) of one claim's row."""
    return sum(1 for x in row if x == "SUPPORTS"), sum(1 for x in row if x == "CONTRADICTS")


def is_conflicted(row: Sequence[str | None]) -> bool:
    """Conflicted on its parsed cells (D+ and D- both non-empty)."""
    plus, minus = support_counts(row)
    return plus > 0 and minus > 0


def claim_ratio(row: Sequence[str | None]) -> float:
    """|D-| / (|D+| + |D-|) on the parsed cells (0 when both are empty)."""
    plus, minus = support_counts(row)
    return minus / (plus + minus) if plus + minus else 0.0


def failed_cells(row: Sequence[str | None]) -> int:
    return sum(1 for x in row if x is None)


def is_undetermined(row: Sequence[str | None]) -> bool:
    """A claim with a failed cell: its ratio (and perhaps its conflict) could change."""
    return failed_cells(row) > 0


def conflict_bounds(row: Sequence[str | None]) -> tuple[int, int]:
    """(best, worst) conflicted indicator over every labelling of the failed cells.

    >>> conflict_bounds(["SUPPORTS", None]), conflict_bounds([None]), conflict_bounds(["SUPPORTS", "CONTRADICTS", None])
    ((0, 1), (0, 0), (1, 1))
    """
    plus, minus = support_counts(row)
    failed = failed_cells(row)
    worst = int(max(0, 1 - plus) + max(0, 1 - minus) <= failed)
    return int(plus > 0 and minus > 0), worst


def ratio_bounds(row: Sequence[str | None]) -> tuple[float, float]:
    """(best, worst) |D-| / (|D+| + |D-|) over every labelling of the failed cells:
    best sets them to SUPPORTS (IRRELEVANT when nothing else is D-), worst to
    CONTRADICTS (IRRELEVANT when nothing is D+).

    >>> ratio_bounds(["SUPPORTS", "CONTRADICTS", None]), ratio_bounds(["SUPPORTS", None]), ratio_bounds([None, None])
    ((0.3333333333333333, 0.6666666666666666), (0.0, 0.5), (0.0, 1.0))
    """
    plus, minus = support_counts(row)
    failed = failed_cells(row)
    best = minus / (plus + minus + failed) if minus else 0.0
    if plus:
        worst = (minus + failed) / (plus + minus + failed)
    else:
        worst = 1.0 if minus + failed else 0.0
    return best, worst


def is_defined(matrix: Matrix) -> bool:
    """At least one claim, and a parsed label unless no claim has a document."""
    if not matrix:
        return False
    cells = [x for row in matrix for x in row]
    return not cells or any(x is not None for x in cells)


def _mean(matrix: Matrix, value) -> float | None:
    if not is_defined(matrix):
        return None
    return sum(value(row) for row in matrix) / len(matrix)


def _worst_mean(matrix: Matrix, value) -> float | None:
    """Like ``_mean`` but defined whenever there is a claim: with every cell
    failed the worst case is still known."""
    if not matrix:
        return None
    return sum(value(row) for row in matrix) / len(matrix)


def cs_c(matrix: Matrix) -> float | None:
    """ConflictScore-Count, worst case over the failed cells (the exact value
    when every cell is labelled); ``None`` when there is no claim.

    >>> cs_c([[None, None], [None, None]]), cs_c_best([[None, None], [None, None]]) is None
    (1.0, True)
    """
    return _worst_mean(matrix, lambda row: conflict_bounds(row)[1])


def cs_c_best(matrix: Matrix) -> float | None:
    """ConflictScore-Count, best case over the failed cells."""
    return _mean(matrix, lambda row: conflict_bounds(row)[0])


def cs_r(matrix: Matrix) -> float | None:
    """ConflictScore-Ratio, worst case over the failed cells (the exact value
    when every cell is labelled); ``None`` when there is no claim."""
    return _worst_mean(matrix, lambda row: ratio_bounds(row)[1])


def cs_r_best(matrix: Matrix) -> float | None:
    """ConflictScore-Ratio, best case over the failed cells."""
    return _mean(matrix, lambda row: ratio_bounds(row)[0])


def undetermined_claims(matrix: Matrix) -> int:
    """Claims with a failed cell (their contribution is a range, not a value)."""
    return sum(1 for row in matrix if is_undetermined(row))


def pair_counts(matrix: Matrix) -> tuple[int, int]:
    """``(labelled cells, all cells)``."""
    return (sum(1 for row in matrix for x in row if x is not None), sum(len(row) for row in matrix))


def coverage(matrix: Matrix) -> float | None:
    """Labelled (claim, document) pairs / all pairs; ``None`` with no pairs."""
    labelled, pairs = pair_counts(matrix)
    return labelled / pairs if pairs else None


def most_conflicted(matrix: Matrix) -> int | None:
    """Index of the conflicted claim whose ratio is closest to an even split
    (most contested; ties -> more labelled documents, then earliest), or
    ``None`` if no claim is conflicted. Used to pick the claim fed back in
    regeneration (the paper's "main claim that had conflicts", Table 14)."""
    best, key = None, None
    for i, row in enumerate(matrix):
        if not is_conflicted(row):
            continue
        plus, minus = support_counts(row)
        k = (abs(minus / (plus + minus) - 0.5), -(plus + minus), i)
        if key is None or k < key:
            best, key = i, k
    return best
