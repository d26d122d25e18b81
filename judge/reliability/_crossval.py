"""Repeated K-fold splits that keep a group's items together (pure, seeded)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
from numpy.typing import NDArray

from judge.reliability._resample import group_codes, n_groups


def fold_assignments(
    groups: Sequence[Hashable | None] | None,
    n: int,
    *,
    folds: int = 2,
    repeats: int = 10,
    seed: int = 0,
) -> list[NDArray[np.int64]]:
    """Per repeat, each item's fold (0..folds-1). Groups (items of one session or post; None
    = an item of its own) are shuffled and dealt round-robin to the folds, so every group lies
    in one fold and fold sizes differ by at most one group. ValueError with fewer groups than
    folds, fewer than 2 folds or no repeat."""
    if folds < 2:
        raise ValueError(f"folds must be at least 2, got {folds}")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    codes = group_codes(n, groups)
    g = n_groups(codes)
    if g < folds:
        raise ValueError(f"{g} independent units cannot fill {folds} folds")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(repeats):
        fold_of_group = np.empty(g, dtype=np.int64)
        fold_of_group[rng.permutation(g)] = np.arange(g) % folds
        out.append(fold_of_group[codes])
    return out
