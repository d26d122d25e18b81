"""A vectorised percentile bootstrap for Cohen's kappa (weighted or not), items or clusters.

:func:`bootstrap_ci` calls a statistic once per resample; for kappa that costs about a
millisecond each, so a calibration report with thousands of resamples took seconds. Here
every resample's contingency table is one row of a matrix product (resample weights times
the items' cells) and kappa is computed for all of them in a few array operations.

One deliberate difference from re-running ``weighted_kappa`` per resample: the categories
(and so the weights) are those of the full sample or of the given scale, not re-derived from
each resample, so a resample that happens to miss a category is weighted on the same scale.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

from judge.reliability._kappa import Weights
from judge.reliability._missing import as_number, is_missing, label
from judge.reliability._paired import kappa_from_counts, weight_matrix
from judge.reliability._resample import group_codes, percentile_interval, resample_weights
from judge.reliability._scale_kappa import scale_codes, scale_grid


def _codes(
    xa: list[object], xb: list[object], numeric: bool, scale: float
) -> tuple[np.ndarray, np.ndarray, int]:
    if numeric:
        sa = np.round(np.array([as_number(v) for v in xa]) * scale).astype(np.int64)
        sb = np.round(np.array([as_number(v) for v in xb]) * scale).astype(np.int64)
        cats = np.unique(np.concatenate([sa, sb]))
        return np.searchsorted(cats, sa), np.searchsorted(cats, sb), len(cats)
    index: dict[Hashable, int] = {}
    for v in (*xa, *xb):
        index.setdefault(label(v), len(index))
    ca = np.array([index[label(v)] for v in xa], dtype=np.int64)
    cb = np.array([index[label(v)] for v in xb], dtype=np.int64)
    return ca, cb, len(index)


def bootstrap_kappa_ci(
    a: Sequence[object],
    b: Sequence[object],
    weights: Weights = "quadratic",
    *,
    numeric: bool = True,
    scale: float = 100,
    levels: Sequence[float] | None = None,
    groups: Sequence[Hashable | None] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of kappa over items both raters rated.

    ``numeric`` ratings are scaled and rounded like :func:`weighted_kappa` (observed
    categories), or, with ``levels``, placed on the scale's full grid like
    :func:`scale_kappa`; otherwise labels are categories (use ``weights=None`` for them).
    With ``groups`` (one entry per item; None = its own group) whole groups are resampled
    (cluster bootstrap). Resamples whose kappa is undefined are left out; (NaN, NaN) with
    fewer than 2 paired items or no finite resample.
    """
    if len(a) != len(b) or (groups is not None and len(groups) != len(a)):
        raise ValueError("a, b (and groups) must have the same length")
    keep = [i for i in range(len(a)) if not is_missing(a[i]) and not is_missing(b[i])]
    xa, xb = [a[i] for i in keep], [b[i] for i in keep]
    n = len(xa)
    if n < 2:
        return math.nan, math.nan
    if numeric and levels is not None:
        grid = scale_grid(levels, [*xa, *xb])
        ca, cb, k = scale_codes(xa, grid), scale_codes(xb, grid), len(grid)
    else:
        ca, cb, k = _codes(list(xa), list(xb), numeric, scale)
    if k < 2:
        return math.nan, math.nan
    codes = group_codes(n, None if groups is None else [groups[i] for i in keep])
    cells = np.zeros((n, k * k), dtype=np.float64)
    cells[np.arange(n), ca * k + cb] = 1.0
    wmat = weight_matrix(k, weights)
    values = [
        kappa_from_counts(resample @ cells, k, wmat)
        for resample in resample_weights(codes, n_resamples, seed)
    ]
    return percentile_interval(np.concatenate(values), confidence)
