"""Percentile bootstrap confidence intervals over items."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from judge.reliability._missing import check_same_length
from judge.reliability._resample import group_codes, n_groups


def bootstrap_ci(
    statistic: Callable[..., float],
    *paired_sequences: Sequence[Any],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    groups: Sequence[Hashable | None] | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap CI of ``statistic(*paired_sequences)``, resampling items.

    With ``groups`` (one entry per item, None = a group of its own) whole groups are drawn
    with replacement and keep all their items (cluster bootstrap).

    Each resample draws item indices with replacement (the same indices for every
    sequence, so pairs stay paired) and calls ``statistic`` on lists of the drawn items;
    missing values are passed through for the statistic to handle. Deterministic for a
    given ``seed`` (numpy ``default_rng``). NaN-safe: resamples whose statistic is NaN or
    infinite (e.g. kappa on a single-category resample) are left out, and the interval is
    taken over the rest; (NaN, NaN) when there are no items or no finite resample.
    ValueError for sequences of different lengths, ``n_resamples < 1`` or a confidence
    outside (0, 1).
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if not paired_sequences:
        raise ValueError("bootstrap_ci needs at least one sequence")
    n = check_same_length(*paired_sequences)
    if n == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    if groups is None:
        indices = rng.integers(0, n, size=(n_resamples, n)).tolist()
    else:
        codes = group_codes(n, groups)
        members: list[list[int]] = [[] for _ in range(n_groups(codes))]
        for i, code in enumerate(codes.tolist()):
            members[code].append(i)
        draws = rng.integers(0, len(members), size=(n_resamples, len(members))).tolist()
        indices = [[i for g in row for i in members[g]] for row in draws]
    values: list[float] = []
    for row in indices:
        value = float(statistic(*([seq[i] for i in row] for seq in paired_sequences)))
        if math.isfinite(value):
            values.append(value)
    if not values:
        return math.nan, math.nan
    tail = (1 - confidence) / 2
    low, high = np.quantile(np.array(values, dtype=np.float64), [tail, 1 - tail])
    return float(low), float(high)
