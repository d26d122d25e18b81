"""Statistics evaluated on many bootstrap resamples at once, and the paired bootstrap CI of a
difference between two raters (or two ways of aggregating the same raters) on the same items.

A statistic here is built once over n items and then evaluated for a (resamples x items)
weight matrix from :func:`judge.reliability._resample.resample_weights`, so every rater in a
comparison sees the same resampled items: the difference's interval is then paired.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from judge.reliability._kappa import Weights
from judge.reliability._missing import label
from judge.reliability._resample import group_codes, percentile_interval, resample_weights
from judge.reliability._scale_kappa import scale_codes, scale_grid

FloatArray = NDArray[np.float64]


class ResampledStatistic(Protocol):
    def point(self) -> float: ...

    def resampled(self, weights: FloatArray) -> FloatArray: ...


def weight_matrix(k: int, weights: Weights) -> FloatArray:
    scores = np.arange(k, dtype=np.float64)
    if weights is None:
        return 1.0 - np.eye(k)
    if weights == "linear":
        return np.abs(scores[:, None] - scores) / (k - 1)
    return (scores[:, None] - scores) ** 2 / (k - 1) ** 2


def kappa_from_counts(counts: FloatArray, k: int, wmat: FloatArray) -> FloatArray:
    """Kappa of each row of ``counts`` (rows: flattened k x k contingency tables); NaN where
    it is undefined (an empty table, or chance disagreement of zero)."""
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        tables = (counts / total).reshape(-1, k, k)
        rows, cols = tables.sum(axis=2), tables.sum(axis=1)
        expected = rows[:, :, None] * cols[:, None, :]
        observed_dis = (tables * wmat).sum(axis=(1, 2))
        expected_dis = (expected * wmat).sum(axis=(1, 2))
        out: FloatArray = 1.0 - observed_dis / expected_dis
    out[~np.isfinite(out)] = np.nan
    return out


@dataclass(frozen=True)
class KappaStatistic:
    """Cohen's kappa (``weights`` None, linear or quadratic) of paired category codes."""

    cells: FloatArray  # items x k*k, one 1 per row
    k: int
    wmat: FloatArray

    def point(self) -> float:
        return float(kappa_from_counts(self.cells.sum(axis=0, keepdims=True), self.k, self.wmat)[0])

    def resampled(self, weights: FloatArray) -> FloatArray:
        return kappa_from_counts(weights @ self.cells, self.k, self.wmat)


def kappa_statistic(a: Sequence[int], b: Sequence[int], k: int, weights: Weights) -> KappaStatistic:
    """From category codes 0..k-1 of two raters on the same items."""
    ca, cb = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    cells = np.zeros((len(ca), k * k), dtype=np.float64)
    cells[np.arange(len(ca)), ca * k + cb] = 1.0
    return KappaStatistic(cells, k, weight_matrix(k, weights))


def ordinal_codes(
    columns: Sequence[Sequence[float]], levels: Sequence[float]
) -> tuple[list[list[int]], int]:
    """Codes of several numeric raters on one grid of the scale (the levels, or the half-step
    grid when a value lies midway): quadratic weights are then comparable across raters."""
    grid = scale_grid(levels, [v for column in columns for v in column])
    return [scale_codes(column, grid).tolist() for column in columns], len(grid)


def label_codes(columns: Sequence[Sequence[Hashable]]) -> tuple[list[list[int]], int]:
    """Codes of several raters' category labels on one shared label index."""
    index: dict[Hashable, int] = {}
    for column in columns:
        for value in column:
            index.setdefault(label(value), len(index))
    return [[index[label(v)] for v in column] for column in columns], len(index)


@dataclass(frozen=True)
class RatioStatistic:
    """``sum(numerator) / sum(denominator)`` over items (accuracy, chance-corrected R@1...)."""

    numerator: FloatArray
    denominator: FloatArray

    def point(self) -> float:
        den = float(self.denominator.sum())
        return float(self.numerator.sum()) / den if den else math.nan

    def resampled(self, weights: FloatArray) -> FloatArray:
        top, bottom = weights @ self.numerator, weights @ self.denominator
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(bottom != 0, top / bottom, np.nan)


def ratio_statistic(numerator: Sequence[float], denominator: Sequence[float]) -> RatioStatistic:
    return RatioStatistic(
        np.asarray(numerator, dtype=np.float64), np.asarray(denominator, dtype=np.float64)
    )


@dataclass(frozen=True)
class PairedComparison:
    """``baseline`` and ``candidate`` (the mean over ``candidates``, e.g. one per repeat of a
    cross-validation) with percentile CIs, and their difference (candidate - baseline) with
    the paired bootstrap CI: every resample draws the same items for both."""

    baseline: float
    baseline_ci95: tuple[float, float]
    candidate: float
    candidate_ci95: tuple[float, float]
    difference: float
    difference_ci95: tuple[float, float]
    n: int
    units: int


def paired_comparison(
    baseline: ResampledStatistic,
    candidates: Sequence[ResampledStatistic],
    *,
    n: int,
    groups: Sequence[Hashable | None] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedComparison:
    """Compare a candidate statistic (averaged over ``candidates``) with a baseline on the
    same ``n`` items. With ``groups`` whole groups are resampled (cluster bootstrap).
    Resamples where a statistic is undefined are left out of that interval."""
    if not candidates:
        raise ValueError("paired_comparison needs at least one candidate")
    codes = group_codes(n, groups)
    base_values, cand_values = [], []
    for weights in resample_weights(codes, n_resamples, seed):
        base = baseline.resampled(weights)
        with np.errstate(invalid="ignore"):
            cand = np.mean(np.stack([c.resampled(weights) for c in candidates]), axis=0)
        base_values.append(base)
        cand_values.append(cand)
    b, c = np.concatenate(base_values), np.concatenate(cand_values)
    base_point = baseline.point()
    cand_point = float(np.mean([s.point() for s in candidates]))
    return PairedComparison(
        baseline=base_point,
        baseline_ci95=percentile_interval(b, confidence),
        candidate=cand_point,
        candidate_ci95=percentile_interval(c, confidence),
        difference=cand_point - base_point,
        difference_ci95=percentile_interval(c - b, confidence),
        n=n,
        units=int(codes.max()) + 1 if n else 0,
    )
