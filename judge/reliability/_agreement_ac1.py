"""Gwet's AC1: chance-corrected agreement that stays stable under skewed prevalence.

Cohen's kappa collapses when one category dominates (the "kappa paradox": 95% raw agreement
can give a kappa near zero), because its chance agreement is the product of the raters'
marginals. AC1 (Gwet 2008) takes chance agreement as ``1/(q-1) * sum_k pi_k (1 - pi_k)``
with ``pi_k`` the mean of the two raters' shares of category k and q the number of
categories, which stays small when prevalence is skewed.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from judge.reliability._missing import label, paired


def gwet_ac1(
    a: Sequence[Hashable], b: Sequence[Hashable], *, categories: Sequence[Hashable] | None = None
) -> float:
    """Gwet's AC1 of two raters over nominal labels (items missing in either are dropped).

    ``categories`` is the full label set (q = its size); by default the labels either rater
    used. NaN with no paired item or fewer than two categories. ValueError for a label
    outside ``categories``.
    """
    xa, xb = paired(a, b)
    if not xa:
        return math.nan
    la, lb = [label(v) for v in xa], [label(v) for v in xb]
    cats = list(dict.fromkeys(categories if categories is not None else [*la, *lb]))
    cats = [label(c) for c in cats]
    unknown = [v for v in (*la, *lb) if v not in cats]
    if unknown:
        raise ValueError(f"label {unknown[0]!r} is not one of the categories")
    q = len(cats)
    if q < 2:
        return math.nan
    n = len(la)
    observed = sum(x == y for x, y in zip(la, lb, strict=True)) / n
    chance = 0.0
    for c in cats:
        pi = (la.count(c) + lb.count(c)) / (2 * n)
        chance += pi * (1 - pi)
    chance /= q - 1
    return (observed - chance) / (1 - chance)
