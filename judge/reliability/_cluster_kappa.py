"""Cohen's kappa and Gwet's AC2 (weighted or not) kept as one contingency table per
independent unit.

A unit is a group (a session's checkpoints, a post's replies) or an item of its own. Every
quantity the cluster-robust intervals need is then a matrix product over units:

- a bootstrap resample is a row of unit multiplicities, its table that row times the units'
  tables (no per-item work, no Python loop over resamples);
- leaving one unit out (the cluster jackknife) subtracts that unit's table from the total;
- the linearised (delta-method) standard error adds up, per unit, the influence of its items
  on kappa and squares the unit sums, which is the cluster-robust ("sandwich") variance.

For independent items the linearised variance is the Fleiss-Cohen-Everitt asymptotic variance
that statsmodels reports (``std_kappa``); with groups it is its cluster-robust analogue.

Kappa is undefined when a table is empty or its chance disagreement is zero (both raters
constant on one level, e.g. a resample that missed the only rare item): such values are NaN
here; :mod:`judge.reliability._kappa_interval` decides how they count.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from judge.reliability._kappa import Weights
from judge.reliability._paired import kappa_from_counts, weight_matrix
from judge.reliability._resample import group_codes, n_groups

FloatArray = NDArray[np.float64]

#: the smallest value kappa (weighted or not) can take: the worst value of its range
KAPPA_WORST = -1.0
Coefficient = Literal["kappa", "ac2"]


def ac2_from_counts(counts: FloatArray, k: int, wmat: FloatArray) -> FloatArray:
    """Gwet's AC2 of each row of ``counts`` (flattened k x k tables of two raters) with
    agreement weights ``1 - wmat``: ``(p_a - p_e) / (1 - p_e)``, ``p_a`` the weighted observed
    agreement, ``p_e = T_w / (k (k - 1)) * sum_c pi_c (1 - pi_c)`` with ``pi_c`` the mean of the
    two raters' shares of category c and ``T_w`` the sum of all agreement weights (Gwet 2014,
    two raters). Identity weights give AC1. NaN for an empty table."""
    agree = 1.0 - wmat
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = (counts / total).reshape(-1, k, k)
        observed = (p * agree).sum(axis=(1, 2))
        pi = (p.sum(axis=2) + p.sum(axis=1)) / 2
        chance = agree.sum() / (k * (k - 1)) * (pi * (1 - pi)).sum(axis=1)
        out: FloatArray = (observed - chance) / (1 - chance)
    out[~np.isfinite(out)] = np.nan
    return out


@dataclass(frozen=True)
class ClusterKappa:
    """Per-unit contingency tables of two raters' category codes (``cells``: units x k*k)."""

    cells: FloatArray
    k: int
    wmat: FloatArray
    coefficient: Coefficient = "kappa"

    @property
    def units(self) -> int:
        return int(self.cells.shape[0])

    @property
    def n(self) -> int:
        return round(float(self.cells.sum()))

    def kappa(self, tables: FloatArray) -> FloatArray:
        """The coefficient of each row of ``tables`` (flattened k x k counts); NaN where it is
        undefined."""
        if self.coefficient == "ac2":
            return ac2_from_counts(np.atleast_2d(tables), self.k, self.wmat)
        return kappa_from_counts(np.atleast_2d(tables), self.k, self.wmat)

    def point(self) -> float:
        return float(self.kappa(self.cells.sum(axis=0))[0])

    def resampled(self, draws: FloatArray) -> FloatArray:
        """Kappa of each resample; ``draws`` is (resamples x units) multiplicities."""
        return self.kappa(draws @ self.cells)

    def jackknife(self) -> FloatArray:
        """Kappa with each unit left out in turn (one value per unit)."""
        return self.kappa(self.cells.sum(axis=0) - self.cells)

    def std_err(self, draws: FloatArray | None = None) -> FloatArray:
        """Cluster-robust linearised standard error of kappa, per resample (``draws``) or, with
        None, of the sample itself (a one-element array). NaN where kappa is undefined.

        Kappa = 1 - D_o / D_e with D_o = sum w p (observed disagreement) and D_e = sum w r c
        (chance disagreement from the row and column shares r, c). An item in cell (a, b) has
        influence ``(D_o * IF_e - D_e * IF_o) / D_e**2`` with ``IF_o = w_ab - D_o`` and
        ``IF_e = (W c)_a + (r W)_b - 2 D_e``; the variance is ``sum_u (sum of its items'
        influence)**2 / n**2`` over the units, times ``G / (G - 1)`` (small-sample factor)
        when there are groups (``G`` units fewer than items). Kappa only.
        """
        if self.coefficient != "kappa":
            raise ValueError("the linearised standard error is implemented for kappa only")
        m = np.ones((1, self.units)) if draws is None else np.atleast_2d(draws)
        k = self.k
        tables = m @ self.cells
        total = tables.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = (tables / total[:, None]).reshape(-1, k, k)
            rows, cols = p.sum(axis=2), p.sum(axis=1)
            observed = (p * self.wmat).sum(axis=(1, 2))
            expected = np.einsum("ra,ab,rb->r", rows, self.wmat, cols)
            if_o = self.wmat[None, :, :] - observed[:, None, None]
            if_e = (
                (cols @ self.wmat.T)[:, :, None]
                + (rows @ self.wmat)[:, None, :]
                - 2 * expected[:, None, None]
            )
            influence = (observed[:, None, None] * if_e - expected[:, None, None] * if_o) / (
                expected[:, None, None] ** 2
            )
            per_unit = influence.reshape(len(total), k * k) @ self.cells.T  # resamples x units
            variance = (m * per_unit**2).sum(axis=1) / total**2
            if self.units < self.n:
                variance *= self.units / (self.units - 1) if self.units > 1 else np.nan
            out: FloatArray = np.sqrt(variance)
        out[~np.isfinite(out) | ~(expected > 0)] = np.nan
        return out


def cluster_kappa(
    a: Sequence[int],
    b: Sequence[int],
    k: int,
    weights: Weights,
    groups: Sequence[Hashable | None] | None = None,
    coefficient: Coefficient = "kappa",
) -> ClusterKappa:
    """From category codes 0..k-1 of two raters on the same items (no missing values) and
    each item's group (None, or no ``groups``: the item is its own unit)."""
    ca, cb = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    if ca.shape != cb.shape or ca.ndim != 1:
        raise ValueError("a and b must be sequences of the same length")
    codes = group_codes(len(ca), groups)
    cells = np.zeros((n_groups(codes), k * k), dtype=np.float64)
    np.add.at(cells, (codes, ca * k + cb), 1.0)
    return ClusterKappa(cells, k, weight_matrix(k, weights), coefficient)


class UnitStatistic(Protocol):
    """A statistic of per-unit tables, evaluated on the sample, on resamples of units
    (``draws``: resamples x units multiplicities) and with each unit left out."""

    @property
    def units(self) -> int: ...

    @property
    def n(self) -> int: ...

    def point(self) -> float: ...

    def resampled(self, draws: FloatArray) -> FloatArray: ...

    def jackknife(self) -> FloatArray: ...


@dataclass(frozen=True)
class MeanStatistic:
    """The mean of several statistics over the same units (e.g. a panel's kappa against each
    single expert); undefined (NaN) wherever one of them is. ``n`` is the largest item count
    of the parts (the items of the best-covered pair)."""

    parts: tuple[ClusterKappa, ...]

    def __post_init__(self) -> None:
        if not self.parts or len({p.units for p in self.parts}) != 1:
            raise ValueError("a mean needs one or more statistics over the same units")

    @property
    def units(self) -> int:
        return self.parts[0].units

    @property
    def n(self) -> int:
        return max(p.n for p in self.parts)

    def point(self) -> float:
        return float(np.mean([p.point() for p in self.parts]))

    def resampled(self, draws: FloatArray) -> FloatArray:
        out: FloatArray = np.mean(np.stack([p.resampled(draws) for p in self.parts]), axis=0)
        return out

    def jackknife(self) -> FloatArray:
        out: FloatArray = np.mean(np.stack([p.jackknife() for p in self.parts]), axis=0)
        return out
