"""A vectorised percentile bootstrap for Cohen's kappa (weighted or not).

:func:`bootstrap_ci` calls a statistic once per resample; for kappa that costs about a
millisecond each, so a calibration report with thousands of resamples took seconds. Here
all resample tables are built at once with ``bincount`` and kappa is computed for all of
them in a few array operations.

One deliberate difference from re-running ``weighted_kappa`` per resample: the categories
(and so the index-distance weights) are those of the full sample, not re-derived from each
resample, so a resample that happens to miss a category is weighted on the same scale.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

from judge.reliability._kappa import Weights
from judge.reliability._missing import as_number, label, paired


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
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of kappa over items both raters rated.

    ``numeric`` ratings are scaled and rounded like :func:`weighted_kappa`; otherwise labels
    are categories (use ``weights=None`` for them). Resamples whose kappa is undefined (a
    single category) are left out; (NaN, NaN) with fewer than 2 paired items or no finite
    resample.
    """
    xa, xb = paired(a, b)
    n = len(xa)
    if n < 2:
        return math.nan, math.nan
    ca, cb, k = _codes(list(xa), list(xb), numeric, scale)
    if k < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(n_resamples, n))
    cells = (np.arange(n_resamples)[:, None] * k * k + ca[draws] * k + cb[draws]).ravel()
    tables = np.bincount(cells, minlength=n_resamples * k * k).reshape(n_resamples, k, k) / n
    rows, cols = tables.sum(axis=2), tables.sum(axis=1)
    expected = rows[:, :, None] * cols[:, None, :]
    scores = np.arange(k, dtype=np.float64)
    if weights is None:
        wmat = 1.0 - np.eye(k)
    elif weights == "linear":
        wmat = np.abs(scores[:, None] - scores) / (k - 1)
    else:
        wmat = (scores[:, None] - scores) ** 2 / (k - 1) ** 2
    observed_dis = (tables * wmat).sum(axis=(1, 2))
    expected_dis = (expected * wmat).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        kappas = 1.0 - observed_dis / expected_dis
    finite = kappas[np.isfinite(kappas)]
    if finite.size == 0:
        return math.nan, math.nan
    tail = (1 - confidence) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    return float(low), float(high)
