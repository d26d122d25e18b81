"""Bootstrap resampling as weights: how often each item is drawn in each resample.

Plain bootstrap draws items with replacement. The cluster bootstrap draws *groups* (all
checkpoints of one session, all replies to one post) with replacement and keeps every item
of a drawn group, so items that are not independent are not counted as if they were; with
few groups the interval widens accordingly. Items without a group are their own group.

Weights rather than index lists let every statistic that is a sum over items (contingency
tables, hits, true positives) be computed for all resamples with one matrix product.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Sequence

import numpy as np
from numpy.typing import NDArray

#: resamples are produced in blocks of at most this many rows (bounds memory on big runs)
_BLOCK = 256


def group_codes(n: int, groups: Sequence[Hashable | None] | None) -> NDArray[np.int64]:
    """Each item's group as a code 0..G-1; an item without a group (None) is its own group."""
    if groups is None:
        return np.arange(n, dtype=np.int64)
    if len(groups) != n:
        raise ValueError(f"groups has {len(groups)} entries for {n} items")
    codes: dict[Hashable, int] = {}
    out = np.empty(n, dtype=np.int64)
    for i, g in enumerate(groups):
        key: Hashable = ("__item__", i) if g is None else ("__group__", g)
        out[i] = codes.setdefault(key, len(codes))
    return out


def n_groups(codes: NDArray[np.int64]) -> int:
    return int(codes.max()) + 1 if codes.size else 0


def resample_weights(
    codes: NDArray[np.int64], n_resamples: int, seed: int
) -> Iterator[NDArray[np.float64]]:
    """Blocks of a (resamples x items) matrix: how often each item is drawn.

    Every resample draws as many groups as there are, uniformly with replacement, and an
    item's weight is how often its group was drawn. Deterministic for a given ``seed``.
    """
    for counts in group_draws(n_groups(codes), n_resamples, seed):
        yield counts[:, codes]


def group_draws(units: int, n_resamples: int, seed: int) -> Iterator[NDArray[np.float64]]:
    """Blocks of a (resamples x units) matrix: how often each unit (group) is drawn.

    The draws behind :func:`resample_weights` (same seed, same draws), for statistics kept as
    per-group sums (a group's contingency table), which need no per-item expansion.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_resamples:
        rows = min(_BLOCK, n_resamples - done)
        draws = rng.integers(0, units, size=(rows, units))
        counts = np.zeros((rows, units), dtype=np.float64)
        np.add.at(counts, (np.repeat(np.arange(rows), units), draws.ravel()), 1.0)
        yield counts
        done += rows


def percentile_interval(values: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    """The percentile interval of the finite values; (NaN, NaN) when there are none."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return math.nan, math.nan
    tail = (1 - confidence) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    return float(low), float(high)


def bootstrap_ratio_ci(
    numerator: Sequence[float],
    denominator: Sequence[float],
    *,
    groups: Sequence[Hashable | None] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of ``sum(numerator) / sum(denominator)`` over items.

    Most agreement figures have this form with per-item terms: accuracy (hit / 1), Recall@1,
    MRR (reciprocal rank / 1), F1 (2 TP / (2 TP + FP + FN)), chance-corrected Recall@1
    ((hit - chance) / (1 - chance)). Items (or, with ``groups``, whole groups) are drawn with
    replacement; resamples with a zero denominator are left out. (NaN, NaN) without items.
    """
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    if num.shape != den.shape or num.ndim != 1:
        raise ValueError("numerator and denominator must be sequences of the same length")
    if num.size == 0:
        return math.nan, math.nan
    codes = group_codes(num.size, groups)
    values = []
    for weights in resample_weights(codes, n_resamples, seed):
        top, bottom = weights @ num, weights @ den
        with np.errstate(divide="ignore", invalid="ignore"):
            values.append(np.where(bottom != 0, top / bottom, np.nan))
    return percentile_interval(np.concatenate(values), confidence)
