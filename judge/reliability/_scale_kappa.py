"""Weighted kappa on a rating scale's full set of levels (scikit-learn's convention).

Kumar et al. build the contingency table over the categories the two raters *used*, so the
weights depend on which levels happen to occur: on a 1-5 scale where nobody used 2, a 1-vs-3
disagreement counts as adjacent. A calibration knows the rubric's scale, so it weighs on every
level, observed or not: the same as ``sklearn.metrics.cohen_kappa_score(a, b,
weights="quadratic", labels=<all levels>)``.

A consensus of an even number of experts can fall half-way between two levels (the median of
1 and 2 is 1.5). Such values are placed on the half-step grid of the scale (every level and
every midpoint), which keeps the weights proportional to the distance between the values.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from judge.reliability._kappa import KappaResult, Weights, kappa_from_table, kappa_result_undefined
from judge.reliability._missing import as_number, paired


def _key(x: float) -> float:
    return round(x, 6)


def scale_grid(levels: Sequence[float], values: Sequence[object] = ()) -> list[float]:
    """The categories for ``values`` on a scale with ``levels``: the levels themselves, or the
    half-step grid when a value lies midway between two levels. ValueError for a value that
    is neither (e.g. a crowd mean of 3.33)."""
    grid = sorted({_key(float(level)) for level in levels})
    if len(grid) < 2:
        raise ValueError("a scale needs at least two levels")
    present = {_key(as_number(v)) for v in values}
    if present <= set(grid):
        return grid
    half = sorted(set(grid) | {_key((x + y) / 2) for x, y in itertools.pairwise(grid)})
    outside = sorted(present - set(half))
    if outside:
        raise ValueError(
            f"rating {outside[0]:g} is not a level of the scale {grid[0]:g}..{grid[-1]:g} "
            "(nor midway between two levels)"
        )
    return half


def scale_codes(values: Sequence[object], grid: Sequence[float]) -> np.ndarray:
    """The index of each value in ``grid``."""
    index = {_key(g): i for i, g in enumerate(grid)}
    return np.array([index[_key(as_number(v))] for v in values], dtype=np.int64)


def scale_kappa_result(
    a: Sequence[object],
    b: Sequence[object],
    levels: Sequence[float],
    weights: Weights = "quadratic",
) -> KappaResult:
    """Cohen's kappa of two numeric raters with the table over every level of the scale.

    Items missing in either rater are dropped. Equals scikit-learn's ``cohen_kappa_score(a, b,
    weights=weights, labels=<grid>)`` (weights use the distance between grid positions). NaN
    with fewer than 2 paired items, or when both raters used one and the same level for every
    item (chance agreement is then 1 and kappa 0/0).
    """
    xa, xb = paired(a, b)
    grid = scale_grid(levels, [*xa, *xb])
    k = len(grid)
    if len(xa) < 2:
        return kappa_result_undefined(len(xa), k, weights)
    ca, cb = scale_codes(xa, grid), scale_codes(xb, grid)
    if len({*ca.tolist(), *cb.tolist()}) < 2:
        return kappa_result_undefined(len(xa), k, weights)
    table = np.zeros((k, k), dtype=np.float64)
    np.add.at(table, (ca, cb), 1.0)
    return kappa_from_table(table, weights)


def scale_kappa(
    a: Sequence[object],
    b: Sequence[object],
    levels: Sequence[float],
    weights: Weights = "quadratic",
) -> float:
    """The kappa of :func:`scale_kappa_result`."""
    return scale_kappa_result(a, b, levels, weights).kappa
