"""Split conformal prediction for judge scores: ordinal intervals and label prediction sets.

The guarantee. Calibration items (the panel's score and the expert consensus) and a new item
are *exchangeable*: any order of them is as likely as any other. That holds when they are
drawn independently from one population (the same framework and data source, the same
panel, prompts and models as at calibration), and fails when the calibration is a biased
subset, the panel or rubric changed since, or items come in groups that are split between
calibration and use (several responses to one seeker post, turns of one conversation): then
whole groups must be the exchangeable units. Under exchangeability, with the
``k = ceil((n + 1)(1 - alpha))``-th smallest of ``n`` calibration scores as the threshold,
the new item's set contains its expert consensus with probability at least ``1 - alpha``,
*marginally*: averaged over the calibration draw and the new item, not for every item or
every calibration. Discrete scores (ties) only raise the coverage.

Calibration-conditional ("PAC") variant, with ``delta``: the smallest rank ``k`` for which
the coverage *of this calibration*, distributed Beta(k, n + 1 - k) for continuous scores
(Vovk 2012), is at least ``1 - alpha`` with probability at least ``1 - delta`` over
calibrations. It needs more items for the same width.

Nonconformity. Ordinal: ``|aggregate - consensus|`` (the aggregate may be a half level when
an even number of judges split); the interval is every scale level within the quantile of
the aggregate, so its ends are levels (the discrete boundary handling) and lie on the scale.
Nominal: ``1 - the share of the panel's votes for the label``; ranked scales: ``1 - the
label's share of the Borda points`` (its prediction set is for the top choice).

Why not a library: MAPIE, crepes and puncc (PyPI) were tried on discrete ordinal residuals.
crepes fits best (it takes nonconformity scores directly, Mondrian bins included) and
computes the same quantile (the unit tests use it as the oracle; where (n + 1) * alpha is
a whole number its floating-point rank falls one short, e.g. 9 items at 0.9), but its bounds are
real-valued (an interval around 2.5 ends at 4.5), a too-small calibration comes back as a
maximal interval with a UserWarning instead of a status, and it would bring pandas into the
service. MAPIE (1.x) and puncc wrap a fitted scikit-learn-style model, which a judge panel
is not, and also return real-valued bounds. What is left is one order statistic.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
ConformalStatus = Literal["ok", "too_few_calibration_units"]
_EPS = 1e-9


@dataclass(frozen=True)
class ConformalQuantile:
    """The calibrated threshold on the nonconformity score.

    ``value`` is infinite when ``rank > n`` (status ``too_few_calibration_units``): no finite
    threshold keeps the promise, so every interval is the whole scale. ``min_units`` is the
    smallest calibration that would have a finite threshold at this level."""

    value: float
    n: int
    rank: int
    alpha: float
    delta: float | None
    status: ConformalStatus
    min_units: int


def _check_level(alpha: float, delta: float | None) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if delta is not None and not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def conformal_rank(n: int, alpha: float, delta: float | None = None) -> int:
    """The rank (1-based) of the calibration score used as the threshold; ``n + 1`` means
    none is high enough. Marginal: ``ceil((n + 1)(1 - alpha))``. With ``delta``: the
    smallest ``k`` with ``P(Beta(k, n + 1 - k) >= 1 - alpha) >= 1 - delta``."""
    _check_level(alpha, delta)
    if n < 0:
        raise ValueError("n must be non-negative")
    if delta is None:
        return math.ceil((n + 1) * (1 - alpha) - _EPS)
    if n == 0:
        return 1
    from scipy import stats  # lazily: scipy.stats costs ~2 s of CPU per process

    ranks = np.arange(1, n + 1)
    enough = stats.beta.sf(1 - alpha, ranks, n + 1 - ranks) >= 1 - delta
    return int(ranks[np.argmax(enough)]) if enough.any() else n + 1


def conformal_min_units(alpha: float, delta: float | None = None) -> int:
    """The fewest calibration items for which :func:`conformal_rank` is at most ``n``."""
    _check_level(alpha, delta)
    if delta is None:
        return math.ceil(1 / alpha - _EPS) - 1
    # the best a calibration of n can do is k = n: P(Beta(n, 1) >= 1 - alpha) = 1 - (1-alpha)^n
    return math.ceil(math.log(delta) / math.log(1 - alpha) - _EPS)


def conformal_quantile(
    scores: Sequence[float] | FloatArray, alpha: float, delta: float | None = None
) -> ConformalQuantile:
    """The split conformal threshold of calibration ``scores`` (NaN scores are dropped: an
    item without a panel score or without an expert consensus is not a calibration item)."""
    values = np.asarray(scores, dtype=np.float64)
    values = np.sort(values[~np.isnan(values)])
    n = len(values)
    rank = conformal_rank(n, alpha, delta)
    need = conformal_min_units(alpha, delta)
    if rank > n:
        return ConformalQuantile(math.inf, n, rank, alpha, delta, "too_few_calibration_units", need)
    return ConformalQuantile(float(values[rank - 1]), n, rank, alpha, delta, "ok", need)


def ordinal_scores(
    aggregates: Sequence[float] | FloatArray, consensus: Sequence[float] | FloatArray
) -> FloatArray:
    """Nonconformity ``|aggregate - consensus|`` per item (NaN where either is missing)."""
    return np.abs(
        np.asarray(aggregates, dtype=np.float64) - np.asarray(consensus, dtype=np.float64)
    )


def ordinal_intervals(
    aggregates: Sequence[float] | FloatArray, threshold: float, levels: Sequence[float]
) -> tuple[FloatArray, FloatArray]:
    """``(low, high)`` per item: the lowest and highest scale level within ``threshold`` of
    the aggregate (levels are the scale's, e.g. 1..5). An infinite threshold gives the whole
    scale; an item with no aggregate, or whose aggregate is a half level when the threshold
    is below 0.5, has an empty set: NaN, NaN."""
    grid = np.sort(np.asarray(levels, dtype=np.float64))
    agg = np.asarray(aggregates, dtype=np.float64)[:, None]
    inside = np.abs(grid[None, :] - agg) <= threshold + _EPS
    any_in = inside.any(axis=1)
    low = np.where(any_in, grid[np.argmax(inside, axis=1)], np.nan)
    high = np.where(any_in, grid[len(grid) - 1 - np.argmax(inside[:, ::-1], axis=1)], np.nan)
    return low, high


def interval_covers(
    low: FloatArray, high: FloatArray, consensus: Sequence[float] | FloatArray
) -> BoolArray:
    """Whether each interval holds its item's consensus (never for an empty interval)."""
    truth = np.asarray(consensus, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.asarray((low - _EPS <= truth) & (truth <= high + _EPS), dtype=np.bool_)


def interval_widths(low: FloatArray, high: FloatArray) -> FloatArray:
    """``high - low`` in scale steps of one (0 = a single level; NaN for an empty set)."""
    return np.asarray(high - low, dtype=np.float64)


def mondrian_quantiles(
    scores: Sequence[float] | FloatArray,
    bins: Sequence[Hashable],
    alpha: float,
    delta: float | None = None,
) -> dict[Hashable, ConformalQuantile]:
    """One conformal threshold per bin (Mondrian conformal prediction): coverage then holds
    within each bin (items exchangeable within their bin), and a bin with too few
    calibration items gets the whole scale, so narrowing must be checked per bin."""
    values = np.asarray(scores, dtype=np.float64)
    if len(bins) != len(values):
        raise ValueError("one bin per score")
    keys = list(dict.fromkeys(bins))
    labels = np.array([keys.index(b) for b in bins], dtype=np.int64)
    return {
        key: conformal_quantile(values[labels == i], alpha, delta) for i, key in enumerate(keys)
    }


def mondrian_thresholds(
    quantiles: dict[Hashable, ConformalQuantile], bins: Sequence[Hashable]
) -> FloatArray:
    """The threshold of each new item's bin (infinite for a bin never calibrated)."""
    return np.array(
        [quantiles[b].value if b in quantiles else math.inf for b in bins], dtype=np.float64
    )


def vote_share_scores(
    votes: Sequence[Sequence[Hashable | None]], labels: Sequence[Hashable]
) -> FloatArray:
    """Nominal nonconformity per item and label: ``1 - share of the item's valid votes``
    (``None`` is an abstention). Shape (items, labels); an item with no vote scores 1."""
    out = np.ones((len(votes), len(labels)), dtype=np.float64)
    index = {label: j for j, label in enumerate(labels)}
    for i, row in enumerate(votes):
        valid = [v for v in row if v is not None]
        for v in valid:
            if v not in index:
                raise ValueError(f"vote {v!r} is not one of the labels")
            out[i, index[v]] -= 1 / len(valid)
    return np.clip(out, 0.0, 1.0)


def borda_share_scores(
    rankings: Sequence[Sequence[Sequence[Hashable]]], labels: Sequence[Hashable], k: int
) -> FloatArray:
    """Ranked scales, for the top choice: ``1 - the label's share of the Borda points``
    (k points for first place, 1 for k-th) of the item's judges. Shape (items, labels)."""
    out = np.ones((len(rankings), len(labels)), dtype=np.float64)
    index = {label: j for j, label in enumerate(labels)}
    for i, judges in enumerate(rankings):
        points = np.zeros(len(labels), dtype=np.float64)
        for ranking in judges:
            for position, label in enumerate(list(ranking)[:k]):
                points[index[label]] += k - position
        if points.sum() > 0:
            out[i] = 1 - points / points.sum()
    return out


def label_scores_of(label_scores: FloatArray, truth: Sequence[int]) -> FloatArray:
    """The calibration scores: each item's score of its expert label (index into labels)."""
    return np.asarray(label_scores[np.arange(len(truth)), np.asarray(truth)], dtype=np.float64)


def prediction_sets(label_scores: FloatArray, threshold: float | FloatArray) -> BoolArray:
    """Membership (items, labels): a label is in the set when its score is within the
    threshold (one threshold, or one per item for Mondrian)."""
    t = np.asarray(threshold, dtype=np.float64)
    if t.ndim == 1:
        t = t[:, None]
    return np.asarray(label_scores <= t + _EPS, dtype=np.bool_)


def coverage_share_probability(
    n_calibration: int, n_test: int, alpha: float, delta: float | None = None
) -> float:
    """What theory predicts for the share of splits whose held-out coverage is at least
    ``1 - alpha``, for continuous scores (ties only raise it): the calibration's coverage is
    Beta(k, n + 1 - k) and the covered test items are binomial given it (beta-binomial)."""
    k = conformal_rank(n_calibration, alpha, delta)
    if k > n_calibration:
        return 1.0
    from scipy import stats  # lazily: scipy.stats costs ~2 s of CPU per process

    need = math.ceil((1 - alpha) * n_test - _EPS)
    return float(stats.betabinom.sf(need - 1, n_test, k, n_calibration + 1 - k))
