"""Sums of weights by code, shared by the weighted-refit kernels."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def column_sums(weights: FloatArray, codes: NDArray[np.int64], size: int) -> FloatArray:
    """``out[..., c] = sum of weights[..., i] over items i with codes[i] == c`` (codes < 0
    left out), by sorted segments (no matrix product: BLAS threads contend on a busy host)."""
    keep = np.flatnonzero(codes >= 0)
    order = keep[np.argsort(codes[keep], kind="stable")]
    out = np.zeros((*weights.shape[:-1], size), dtype=np.float64)
    if order.size == 0:
        return out
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    out[..., sorted_codes[starts]] = np.add.reduceat(weights[..., order], starts, axis=-1)
    return out
