"""The line test under kappa's prevalence paradox: AC2, like for like (issue 23, part 4).

When one consensus level holds more than ``PARADOX_SHARE`` of the items, kappa falls faster
than the judge's skill (evidence/TRUST.md, section 4), so a kappa line of 0.58 asks more of a
judge there than of one on a balanced dimension. Gwet's AC2 is not so distorted, but 0.58 in
AC2 is no standard either: under the paradox even a constant judge has a high AC2. So the
line is replaced by the experts themselves, in AC2:

    D = mean AC2 of the panel against each single distinct expert
        - mean AC2 of the pairs of distinct experts.

The test: a permutation test of "the panel is one more expert". If the panel and the experts
were exchangeable raters, relabelling who is the panel item by item (a random permutation of
the raters of each item) would leave D's distribution unchanged; so D is compared with its
permutation distribution, and the panel is trusted when D is above that distribution's 95th
percentile (``AC2_CONFIDENCE``; ``lower`` = D minus it, the *margin*, must be >= 0), outside
its Monte Carlo error, *and* the panel's like-for-like kappa has a one-sided lower bound above
0 (agreement beyond chance by kappa's own correction; a constant judge has kappa 0). At the
boundary (a panel exchangeable with the experts) the test's size is 5% by construction,
whatever the number of items; a worse panel is trusted less often. Measured
(``evidence.prevalence_trust``, evidence/TRUST.md section 4c): 3.5-4.8% at 50-400 items, where
the bootstrap bounds it replaces were not flat (a percentile 99% bound: 1.0-3.6%; every 95%
bound, the studentized bootstrap of D included: 9-17%). D's two-sided interval (``low``,
``high``) stays the cluster-robust bootstrap's (descriptive). It needs two distinct experts;
with one, kappa's line test stands.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from judge.reliability._cluster_kappa import (
    DifferenceStatistic,
    FloatArray,
    MeanStatistic,
    ac2_from_counts,
)
from judge.reliability._kappa import Weights
from judge.reliability._kappa_interval import (
    DEFAULT_RESAMPLES,
    MIN_UNITS,
    KappaInterval,
    Method,
    engine_interval,
    shared_unit_kappas,
)
from judge.reliability._mc_error import MonteCarloInterval, quantile_mc_interval
from judge.reliability._missing import is_missing, label
from judge.reliability._paired import weight_matrix
from judge.reliability._scale_kappa import scale_codes, scale_grid

IntArray = NDArray[np.int64]

#: the permutation test's level: trusted when D is above this quantile of its permutation
#: distribution (evidence/TRUST.md, section 4c)
AC2_CONFIDENCE = 0.95
#: D's two-sided interval (descriptive; the decision is the permutation test's)
AC2_METHOD: Method = "robust"
#: permutations per batch (memory: batch x items x raters codes)
_BATCH = 250
#: the reasons of the AC2 test when it does not pass
AC2_BELOW_EXPERTS = "ac2_lower_bound_below_experts"
AC2_WITHIN_MC_ERROR = "ac2_lower_bound_within_monte_carlo_error"


def ac2_versus_experts(
    panel: Sequence[object],
    experts: Mapping[str, Sequence[object]],
    *,
    levels: Sequence[float] | None = None,
    weights: Weights = "quadratic",
    groups: Sequence[Hashable | None] | None = None,
    confidence: float = AC2_CONFIDENCE,
    method: Method = AC2_METHOD,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    min_units: int = MIN_UNITS,
) -> KappaInterval:
    """D of the module docstring: ``estimate``, its two-sided 95% interval by ``method``, and
    ``lower`` = D minus the ``confidence`` quantile of D's permutation distribution
    (``n_resamples`` permutations; >= 0: the test passes) with its Monte Carlo interval.
    ``levels``: an ordinal scale (``weights`` as given), else labels (``weights=None``: AC1).
    ValueError with fewer than two experts or fewer than two categories."""
    columns = list(experts.values())
    statistic = ac2_difference(panel, columns, levels=levels, weights=weights, groups=groups)
    interval = engine_interval(
        statistic, method=method, n_resamples=n_resamples, seed=seed, min_units=min_units
    )
    if interval.refused is not None:
        return replace(interval, confidence=confidence)
    codes, k = rater_codes([panel, *columns], levels)
    permuted = permutation_differences(codes, k, weight_matrix(k, weights), n_resamples, seed=seed)
    critical = float(np.quantile(permuted, confidence))
    mc = quantile_mc_interval(permuted, confidence)
    estimate = interval.estimate
    return replace(
        interval,
        lower=estimate - critical,
        lower_mc=MonteCarloInterval(estimate - mc.high, estimate - mc.low),
        method=f"permutation ({method} interval)",
        confidence=confidence,
    )


def ac2_difference(
    panel: Sequence[object],
    experts: Sequence[Sequence[object]],
    *,
    levels: Sequence[float] | None = None,
    weights: Weights = "quadratic",
    groups: Sequence[Hashable | None] | None = None,
) -> DifferenceStatistic:
    """D as a statistic of per-unit tables (all pairs on the same units), for its bootstrap
    interval. ValueError with fewer than two experts or fewer than two categories."""
    if len(experts) < 2:
        raise ValueError("the AC2 test needs two or more experts")
    parts = shared_unit_kappas(
        [*((panel, c) for c in experts), *itertools.combinations(experts, 2)],
        weights,
        levels=levels,
        groups=groups,
        coefficient="ac2",
    )
    n = len(experts)
    return DifferenceStatistic(MeanStatistic(tuple(parts[:n])), MeanStatistic(tuple(parts[n:])))


def rater_codes(
    columns: Sequence[Sequence[object]], levels: Sequence[float] | None
) -> tuple[IntArray, int]:
    """The columns' category codes on one grid (items x raters, -1 = missing) and the
    number of categories: the ordinal scale's grid (``levels``), else the labels."""
    values = [v for col in columns for v in col if not is_missing(v)]
    out = np.full((len(columns[0]), len(columns)), -1, dtype=np.int64)
    if levels is not None:
        grid = scale_grid(levels, values)
        for j, col in enumerate(columns):
            keep = [i for i, v in enumerate(col) if not is_missing(v)]
            out[keep, j] = scale_codes([col[i] for i in keep], grid)
        return out, len(grid)
    index: dict[Hashable, int] = {}
    for v in values:
        index.setdefault(label(v), len(index))
    for j, col in enumerate(columns):
        for i, v in enumerate(col):
            if not is_missing(v):
                out[i, j] = index[label(v)]
    return out, len(index)


def _differences(codes: FloatArray | IntArray, k: int, wmat: FloatArray) -> FloatArray:
    """D of each row of ``codes`` (batch x items x raters; rater 0 the panel, -1 missing)."""
    batch, _, raters = codes.shape
    size = k * k + 1  # the last cell collects the items a pair does not share
    offsets = (np.arange(batch) * size)[:, None]
    ac2 = []
    for a, b in [*((0, j) for j in range(1, raters)), *itertools.combinations(range(1, raters), 2)]:
        x, y = codes[:, :, a], codes[:, :, b]
        cell = np.where((x >= 0) & (y >= 0), x * k + y, k * k)
        counts = np.bincount((offsets + cell).ravel(), minlength=batch * size)
        ac2.append(ac2_from_counts(counts.reshape(batch, size)[:, : k * k].astype(float), k, wmat))
    panel = np.mean(ac2[: raters - 1], axis=0)
    out: FloatArray = panel - np.mean(ac2[raters - 1 :], axis=0)
    return out


def permutation_differences(
    codes: IntArray, k: int, wmat: FloatArray, permutations: int, *, seed: int = 0
) -> FloatArray:
    """D under ``permutations`` relabellings: on every item, the raters who rated it are
    permuted at random (the panel's rating may become an expert's and vice versa; a missing
    rating stays missing). Undefined values count at +1 (against the panel)."""
    rng = np.random.default_rng(seed)
    n, raters = codes.shape
    present = codes >= 0
    # per item: the rated positions first (ascending), then the missing ones
    slots = np.argsort(np.where(present, 0, 1) * raters + np.arange(raters), axis=1)
    out = []
    for start in range(0, permutations, _BATCH):
        batch = min(_BATCH, permutations - start)
        keys = np.where(present[None], rng.random((batch, n, raters)), np.inf)
        order = np.argsort(keys, axis=2)  # the rated positions in random order, then missing
        sources = np.empty((batch, n, raters), dtype=np.int64)
        np.put_along_axis(sources, np.broadcast_to(slots, (batch, n, raters)), order, axis=2)
        permuted = np.take_along_axis(np.broadcast_to(codes, (batch, n, raters)), sources, axis=2)
        out.append(_differences(permuted, k, wmat))
    values = np.concatenate(out)
    result: FloatArray = np.where(np.isfinite(values), values, 1.0)
    return result


def ac2_reasons(interval: KappaInterval) -> list[str]:
    """Why the AC2 test does not pass (empty: it passes); a refused interval is the caller's
    ``too_few_units``."""
    if interval.refused is not None:
        return []
    out = []
    if not interval.lower >= 0:
        out.append(AC2_BELOW_EXPERTS)
    mc = interval.lower_mc
    if mc is not None and np.isfinite(mc.low) and mc.contains(0.0):
        out.append(AC2_WITHIN_MC_ERROR)
    return out
