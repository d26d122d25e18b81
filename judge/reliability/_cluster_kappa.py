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
from functools import cached_property
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
        """Cluster-robust linearised standard error of the coefficient, per resample
        (``draws``) or, with None, of the sample itself (a one-element array). NaN where the
        coefficient is undefined. See :meth:`unit_influence` and :func:`linearised_se`."""
        m = self.multiplicities(draws)
        return linearised_se(self.unit_influence(m), m, self.units, self.n)

    def multiplicities(self, draws: FloatArray | None) -> FloatArray:
        out: FloatArray = np.ones((1, self.units)) if draws is None else np.atleast_2d(draws)
        return out

    def resampled_se(self, draws: FloatArray) -> tuple[FloatArray, FloatArray]:
        """:meth:`resampled` and :meth:`std_err` of the same resamples (one table product)."""
        values, influence = self.resampled_influence(draws)
        return values, linearised_se(influence, draws, self.units, self.n)

    def resampled_influence(self, draws: FloatArray) -> tuple[FloatArray, FloatArray]:
        tables = draws @ self.cells
        return self.kappa(tables), self.unit_influence(draws, tables)

    @cached_property
    def _item_cell(self) -> NDArray[np.int64] | None:
        """Each unit's one cell (-1: no item) when no unit holds more than one item."""
        if self.cells.size and float(self.cells.sum(axis=1).max()) > 1:
            return None
        return np.where(self.cells.sum(axis=1) > 0, self.cells.argmax(axis=1), -1)

    def unit_influence(self, draws: FloatArray, tables: FloatArray | None = None) -> FloatArray:
        """Per resample (rows of ``draws``) and unit: the summed influence of the unit's items
        on the coefficient, over the resample's item count (resamples x units; NaN rows where
        the coefficient is undefined), so that the linearised variance is
        ``sum_u m_u * influence_u**2``.

        Kappa = 1 - D_o / D_e with D_o = sum w p (observed disagreement) and D_e = sum w r c
        (chance disagreement from the row and column shares r, c). An item in cell (a, b) has
        influence ``(D_o * IF_e - D_e * IF_o) / D_e**2`` with ``IF_o = w_ab - D_o`` and
        ``IF_e = (W c)_a + (r W)_b - 2 D_e``. AC2 = (p_a - p_e) / (1 - p_e) with agreement
        weights A = 1 - W: an item in (a, b) has influence ``g_ab - sum p g`` with
        ``g_ab = A_ab / (1 - p_e) + (p_a - 1) / (1 - p_e)**2 * c (1 - pi_a - pi_b)``,
        ``c = sum A / (k (k - 1))`` and ``pi`` the mean of the two raters' shares.
        """
        k = self.k
        tables = draws @ self.cells if tables is None else tables
        total = tables.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = (tables / total[:, None]).reshape(-1, k, k)
            if self.coefficient == "ac2":
                influence, defined = _ac2_influence(p, self.wmat, k)
            else:
                influence, defined = _kappa_influence(p, self.wmat)
            flat = influence.reshape(len(total), k * k)
            cell = self._item_cell
            if cell is None:
                per_unit = flat @ self.cells.T
            else:  # one item per unit: a gather, not a matrix product
                per_unit = np.where(cell >= 0, flat[:, np.maximum(cell, 0)], 0.0)
            out: FloatArray = per_unit / total[:, None]
        out[~defined] = np.nan
        return out


def _kappa_influence(p: FloatArray, wmat: FloatArray) -> tuple[FloatArray, NDArray[np.bool_]]:
    rows, cols = p.sum(axis=2), p.sum(axis=1)
    observed = (p * wmat).sum(axis=(1, 2))
    expected = np.einsum("ra,ab,rb->r", rows, wmat, cols)
    if_o = wmat[None, :, :] - observed[:, None, None]
    if_e = (cols @ wmat.T)[:, :, None] + (rows @ wmat)[:, None, :] - 2 * expected[:, None, None]
    influence = (observed[:, None, None] * if_e - expected[:, None, None] * if_o) / (
        expected[:, None, None] ** 2
    )
    return influence, np.asarray(expected > 0) & np.isfinite(expected)


def _ac2_influence(p: FloatArray, wmat: FloatArray, k: int) -> tuple[FloatArray, NDArray[np.bool_]]:
    agree = 1.0 - wmat
    c = float(agree.sum()) / (k * (k - 1))
    pa = (p * agree).sum(axis=(1, 2))
    pi = (p.sum(axis=2) + p.sum(axis=1)) / 2
    pe = c * (pi * (1 - pi)).sum(axis=1)
    free = (1 - pe)[:, None, None]
    grad = agree[None, :, :] / free + (pa[:, None, None] - 1) / free**2 * c * (
        1 - pi[:, :, None] - pi[:, None, :]
    )
    influence = grad - (p * grad).sum(axis=(1, 2))[:, None, None]
    return influence, np.asarray(pe < 1) & np.isfinite(pe)


def linearised_se(influence: FloatArray, draws: FloatArray, units: int, n: int) -> FloatArray:
    """``sqrt(sum_u m_u * influence_u**2)`` per resample (rows), times ``G / (G - 1)`` under
    the root when there are groups (``units`` fewer than the ``n`` items): the cluster-robust
    ("sandwich") variance. For independent items and kappa it is the Fleiss-Cohen-Everitt
    asymptotic variance that statsmodels reports. NaN where the statistic is undefined."""
    with np.errstate(invalid="ignore"):
        variance = (draws * influence**2).sum(axis=1)
        if units < n:
            variance *= units / (units - 1) if units > 1 else np.nan
        out: FloatArray = np.sqrt(variance)
    out[~np.isfinite(out)] = np.nan
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

    def unit_influence(self, draws: FloatArray) -> FloatArray:
        out: FloatArray = np.mean(np.stack([p.unit_influence(draws) for p in self.parts]), axis=0)
        return out

    def resampled_influence(self, draws: FloatArray) -> tuple[FloatArray, FloatArray]:
        both = [p.resampled_influence(draws) for p in self.parts]
        values: FloatArray = np.mean(np.stack([v for v, _ in both]), axis=0)
        influence: FloatArray = np.mean(np.stack([i for _, i in both]), axis=0)
        return values, influence

    def resampled_se(self, draws: FloatArray) -> tuple[FloatArray, FloatArray]:
        values, influence = self.resampled_influence(draws)
        return values, linearised_se(influence, draws, self.units, self.n)

    def std_err(self, draws: FloatArray | None = None) -> FloatArray:
        """The linearised standard error of the mean (the parts' influences averaged unit by
        unit, so their correlation over the shared units is counted)."""
        m = self.parts[0].multiplicities(draws)
        return linearised_se(self.unit_influence(m), m, self.units, self.n)


@dataclass(frozen=True)
class DifferenceStatistic:
    """``plus - minus`` of two means over the same units."""

    plus: MeanStatistic
    minus: MeanStatistic

    @property
    def units(self) -> int:
        return self.plus.units

    @property
    def n(self) -> int:
        return self.plus.n

    def point(self) -> float:
        return self.plus.point() - self.minus.point()

    def resampled(self, draws: FloatArray) -> FloatArray:
        out: FloatArray = self.plus.resampled(draws) - self.minus.resampled(draws)
        return out

    def jackknife(self) -> FloatArray:
        out: FloatArray = self.plus.jackknife() - self.minus.jackknife()
        return out

    def resampled_se(self, draws: FloatArray) -> tuple[FloatArray, FloatArray]:
        plus, plus_influence = self.plus.resampled_influence(draws)
        minus, minus_influence = self.minus.resampled_influence(draws)
        influence = plus_influence - minus_influence
        return plus - minus, linearised_se(influence, draws, self.units, self.n)

    def std_err(self, draws: FloatArray | None = None) -> FloatArray:
        """The linearised standard error of the difference (unit by unit, as the mean's)."""
        m = self.plus.parts[0].multiplicities(draws)
        influence = self.plus.unit_influence(m) - self.minus.unit_influence(m)
        return linearised_se(influence, m, self.units, self.n)
