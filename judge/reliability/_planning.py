"""Calibration planning: how many more labelled items a CI needs, and which items to label.

Projection. A bootstrap CI of an agreement statistic narrows like 1/sqrt(n) in the number
of independent units (items, or groups when items are grouped): the standard error of kappa
is O(1/sqrt(n)) (Fleiss, Cohen and Everitt 1969), and so is the spread of its bootstrap
distribution. From a calibration on ``n`` units with estimate ``k`` and CI lower bound
``low``, the lower bound at ``m`` units is projected as ``k - (k - low) * sqrt(n / m)``,
assuming further units like the ones measured (same judges, same mix of items) and the point
estimate staying where it is. The lower half-width ``k - low`` is used rather than a
symmetric one because kappa's bootstrap distribution is skewed near its bounds and the
evidence gate reads the lower bound.

Proposal. Items the panel has scored but experts have not labelled are stratified by the
panel's predicted level on each dimension, with equal allocation across the levels present
(capped at what the pool holds, the remainder spread over the other levels), so rare levels
get labelled too; with several dimensions, each pick takes the item that fills the most
under-quota (dimension, level) cells, ties broken at random (seeded).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


def projected_lower(estimate: float, low: float, units: int, new_units: int) -> float:
    """The CI lower bound projected from ``units`` to ``new_units`` units."""
    if units < 1 or new_units < 1:
        raise ValueError("units must be positive")
    return estimate - (estimate - low) * math.sqrt(units / new_units)


def projected_half_width(half_width: float, units: int, new_units: int) -> float:
    """A CI half-width projected from ``units`` to ``new_units`` units (1/sqrt(n))."""
    if units < 1 or new_units < 1:
        raise ValueError("units must be positive")
    return half_width * math.sqrt(units / new_units)


def units_needed(estimate: float, low: float, units: int, target: float) -> int | None:
    """Total units for the projected lower bound to reach ``target``: ``units`` when it is
    already there; None when the point estimate itself is not above ``target`` (no number of
    items like these lifts the lower bound over it)."""
    if units < 1:
        raise ValueError("units must be positive")
    if low >= target:
        return units
    if estimate <= target:
        return None
    ratio = (estimate - low) / (estimate - target)
    return max(units, math.ceil(units * ratio * ratio - 1e-9))


def equal_allocation(counts: Mapping[Hashable, int], budget: int) -> dict[Hashable, float]:
    """Equal allocation of ``budget`` over strata, capped at each stratum's size, the rest
    shared by the others (water-filling)."""
    quotas: dict[Hashable, float] = {}
    remaining = float(min(budget, sum(counts.values())))
    open_strata = sorted(counts, key=lambda s: counts[s])
    while open_strata:
        share = remaining / len(open_strata)
        smallest = open_strata[0]
        if counts[smallest] <= share:
            quotas[smallest] = float(counts[smallest])
            remaining -= counts[smallest]
            open_strata.pop(0)
            continue
        for stratum in open_strata:
            quotas[stratum] = share
        break
    return quotas


def stratified_proposal(
    strata: Mapping[str, Sequence[Hashable | None]], budget: int, *, seed: int = 0
) -> list[int]:
    """Indices of ``budget`` pool items (all of them when the pool is smaller), stratified over
    each dimension's predicted levels (``strata``: dimension -> level per pool item, None =
    no prediction) as the module docstring describes. Deterministic for a given ``seed``."""
    sizes = {len(levels) for levels in strata.values()}
    if len(sizes) > 1:
        raise ValueError("every dimension needs one level per pool item")
    size = sizes.pop() if sizes else 0
    if budget < 1:
        raise ValueError(f"budget must be at least 1, got {budget}")
    rng = np.random.default_rng(seed)
    priority = rng.permutation(size)  # random tie-break: within a stratum, a random sample
    if budget >= size:
        return sorted(range(size), key=lambda i: priority[i])
    codes, quotas = [], []
    for levels in strata.values():
        names = sorted({lv for lv in levels if lv is not None}, key=repr)
        index = {lv: i for i, lv in enumerate(names)}
        code = np.array([-1 if lv is None else index[lv] for lv in levels], dtype=np.int64)
        counts: dict[Hashable, int] = {i: int((code == i).sum()) for i in range(len(names))}
        allocation = equal_allocation(counts, budget)
        codes.append(code)
        quotas.append(np.array([allocation[i] for i in range(len(names))], dtype=np.float64))
    chosen: list[int] = []
    available = np.ones(size, dtype=bool)
    selected = [np.zeros(len(q), dtype=np.float64) for q in quotas]
    for _ in range(budget):
        score = np.zeros(size, dtype=np.float64)
        for code, quota, have in zip(codes, quotas, selected, strict=True):
            if not len(quota):
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                deficit = np.where(quota > 0, np.maximum(quota - have, 0.0) / quota, 0.0)
            score += np.where(code >= 0, deficit[np.maximum(code, 0)], 0.0)
        score[~available] = -np.inf
        best = score.max()
        ties = np.flatnonzero(score >= best - 1e-12)
        pick = int(ties[np.argmin(priority[ties])])
        chosen.append(pick)
        available[pick] = False
        for code, have in zip(codes, selected, strict=True):
            if code[pick] >= 0:
                have[code[pick]] += 1
    return chosen


def level_mix(levels: Sequence[Hashable | None]) -> dict[str, dict[str, float]]:
    """Count and share of each predicted level (``"none"``: no prediction)."""
    counts: dict[str, int] = {}
    for lv in levels:
        key = "none" if lv is None else str(lv)
        counts[key] = counts.get(key, 0) + 1
    total = len(levels)
    return {
        k: {"count": v, "share": round(v / total, 4) if total else 0.0}
        for k, v in sorted(counts.items())
    }


@dataclass(frozen=True)
class ProjectionCheck:
    """One seed of the projection check: the CI half-width on ``n`` units, its projection to
    ``2n`` and the half-width measured on ``2n`` units (the ``n`` plus ``n`` more)."""

    seed: int
    n: int
    half_width_n: float
    projected_2n: float
    measured_2n: float
    lower_half_width_n: float
    projected_lower_2n: float
    measured_lower_2n: float


#: (item indices) -> (estimate, CI low, CI high) of the statistic on those items
Interval = Callable[[Sequence[int]], tuple[float, float, float]]


def projection_check(
    interval: Interval, pool: int, n: int, seeds: Sequence[int]
) -> list[ProjectionCheck]:
    """Calibrate on ``n`` of ``pool`` items, project the CI half-width (full and lower) to 2n,
    measure it on 2n items: the first n plus n more drawn without replacement. Seeds whose
    interval is undefined on either sample are left out."""
    if 2 * n > pool:
        raise ValueError(f"2n = {2 * n} exceeds the pool of {pool} items")
    out = []
    for seed in seeds:
        draw = np.random.default_rng(seed).permutation(pool)[: 2 * n].tolist()
        k1, lo1, hi1 = interval(draw[:n])
        k2, lo2, hi2 = interval(draw)
        values = (k1, lo1, hi1, k2, lo2, hi2)
        if not all(math.isfinite(v) for v in values):
            continue
        half = (hi1 - lo1) / 2
        out.append(
            ProjectionCheck(
                seed=seed,
                n=n,
                half_width_n=half,
                projected_2n=projected_half_width(half, n, 2 * n),
                measured_2n=(hi2 - lo2) / 2,
                lower_half_width_n=k1 - lo1,
                projected_lower_2n=projected_half_width(k1 - lo1, n, 2 * n),
                measured_lower_2n=k2 - lo2,
            )
        )
    return out
