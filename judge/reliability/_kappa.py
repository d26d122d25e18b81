"""Cohen's kappa (unweighted and weighted, as statsmodels computes it) and Fleiss' kappa."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from judge.reliability._missing import as_number, check_same_length, is_missing, label, paired

Weights = Literal["quadratic", "linear"] | None
FloatArray = NDArray[np.float64]

_NAN = float("nan")


@dataclass(frozen=True, slots=True)
class KappaResult:
    """Cohen's kappa of two raters with the statsmodels asymptotic statistics.

    ``n`` is the number of items both raters rated; ``n_categories`` the size of the
    contingency table (the union of the categories either rater used).

    ``std_err`` is the asymptotic standard error of kappa (statsmodels ``std_kappa``),
    ``std_err_null`` the one under H0: kappa = 0 (``std_kappa0``); ``z = kappa / std_err_null``
    and ``p_value`` is its two-sided normal p-value (statsmodels ``z_value`` and
    ``pvalue_two_sided``). ``p_value_wald`` is the two-sided p-value of ``kappa / std_err``,
    which is what Kumar et al. (2025) report as "Kappa P-value".

    Every field but ``n`` and ``n_categories`` is NaN when kappa is undefined (fewer than 2
    paired items, or a single category); the test statistics are NaN when their standard
    error is zero or negative by rounding.
    """

    kappa: float
    n: int
    n_categories: int
    weights: str
    std_err: float
    std_err_null: float
    z: float
    p_value: float
    p_value_wald: float

    @property
    def z_wald(self) -> float:
        """``kappa / std_err`` (NaN when the standard error is not positive)."""
        return _ratio(self.kappa, self.std_err)


def _ratio(num: float, den: float) -> float:
    if math.isnan(num) or math.isnan(den) or den <= 0:
        return _NAN
    return num / den


def _two_sided_p(z: float) -> float:
    # == 2 * scipy.stats.norm.sf(|z|), which is what statsmodels computes
    return _NAN if math.isnan(z) else math.erfc(abs(z) / math.sqrt(2.0))


def _sqrt(var: float) -> float:
    return math.sqrt(var) if var >= 0 else _NAN


def kappa_result_undefined(n: int, n_categories: int, weights: Weights) -> KappaResult:
    """A result whose kappa (and every test statistic) is NaN: kappa is undefined."""
    return KappaResult(_NAN, n, n_categories, weights or "none", _NAN, _NAN, _NAN, _NAN, _NAN)


def _scaled(values: Sequence[object], scale: float) -> NDArray[np.int64]:
    numbers = np.array([as_number(v) for v in values], dtype=np.float64)
    # np.round is round-half-to-even, as pandas' Series.round used by Kumar et al.
    return np.round(numbers * scale).astype(np.int64)


def contingency_table(
    a: Sequence[object], b: Sequence[object], *, scale: float = 100
) -> tuple[FloatArray, FloatArray]:
    """The (categories, table) that Kumar et al. feed to statsmodels' ``cohens_kappa``.

    Only items rated by both raters are used. Ratings are multiplied by ``scale`` and rounded
    to integers (so a crowd mean of 3.5 is its own category, 350); the categories are the
    sorted union of both raters' scaled values, returned divided by ``scale`` again. Rater
    ``a`` is the rows, ``b`` the columns. ValueError for a non-numeric or infinite rating.
    """
    xa, xb = paired(a, b)
    sa, sb = _scaled(xa, scale), _scaled(xb, scale)
    cats = np.unique(np.concatenate([sa, sb]))
    table = np.zeros((len(cats), len(cats)), dtype=np.float64)
    np.add.at(table, (np.searchsorted(cats, sa), np.searchsorted(cats, sb)), 1.0)
    return cats.astype(np.float64) / scale, table


def kappa_from_table(table: FloatArray, weights: Weights = "quadratic") -> KappaResult:
    """Cohen's kappa of a square contingency table, as statsmodels' ``cohens_kappa`` computes it.

    Same formulas as statsmodels 0.14-0.15 (``cohens_kappa(table, wt=weights)``), including its
    weight scores: ``linear``/``quadratic`` weights use the category *index* distance
    ``|i - j| / (k - 1)`` (squared for quadratic), not the distance between the rating values.
    ``weights=None`` gives the simple (unweighted) kappa. A 1x1 table (a single category)
    or fewer than 2 items gives NaN kappa (statsmodels returns NaN there too, with a warning).
    """
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError(f"the contingency table must be square, got shape {table.shape}")
    if weights not in ("quadratic", "linear", None):
        raise ValueError(f"weights must be 'quadratic', 'linear' or None, got {weights!r}")
    k = table.shape[0]
    nobs = float(table.sum())
    n = round(nobs)
    if k < 2 or nobs < 2:
        return kappa_result_undefined(n, k, weights)
    probs = table / nobs
    freq_row = table.sum(1) / nobs
    freq_col = table.sum(0) / nobs
    prob_exp = freq_col * freq_row[:, None]
    agree_exp = float(np.diag(prob_exp).sum())
    if weights is None:
        agree = float(np.diag(table).sum())
        kappa = (agree / nobs - agree_exp) / (1 - agree_exp)
        term_a = float((np.diag(probs) * (1 - (freq_row + freq_col) * (1 - kappa)) ** 2).sum())
        term_b_mat = probs * (freq_col[:, None] + freq_row) ** 2
        idx = np.arange(k)
        term_b_mat[idx, idx] = 0
        term_b = (1 - kappa) ** 2 * float(term_b_mat.sum())
        term_c = (kappa - agree_exp * (1 - kappa)) ** 2
        var = (term_a + term_b - term_c) / (1 - agree_exp) ** 2 / nobs
        term_c0 = freq_col * freq_row * (freq_col + freq_row)
        var0 = (agree_exp + agree_exp**2 - float(term_c0.sum())) / ((1 - agree_exp) ** 2 * nobs)
    else:
        scores = np.arange(k, dtype=np.float64)
        if weights == "linear":
            wmat = np.abs(scores[:, None] - scores) / (scores[-1] - scores[0])
        else:
            wmat = (scores[:, None] - scores) ** 2 / (scores[-1] - scores[0]) ** 2
        kappa = 1 - float((wmat * table).sum()) / nobs / float((wmat * prob_exp).sum())
        w = 1.0 - wmat
        w_row = (freq_col * w).sum(1)
        w_col = (freq_row[:, None] * w).sum(0)
        agree_wexp = float((w * freq_col * freq_row[:, None]).sum())
        term_a_mat = probs * (w - (w_col + w_row[:, None]) * (1 - kappa)) ** 2
        fac = 1.0 / ((1 - agree_wexp) ** 2 * nobs)
        var = (float(term_a_mat.sum()) - (kappa - agree_wexp * (1 - kappa)) ** 2) * fac
        freqse = freq_col * freq_row[:, None]
        var0 = (float((freqse * (w - (w_col + w_row[:, None])) ** 2).sum()) - agree_wexp**2) * fac
    std_err, std_err0 = _sqrt(var), _sqrt(var0)
    z = _ratio(kappa, std_err0)
    return KappaResult(
        kappa=kappa,
        n=n,
        n_categories=k,
        weights=weights or "none",
        std_err=std_err,
        std_err_null=std_err0,
        z=z,
        p_value=_two_sided_p(z),
        p_value_wald=_two_sided_p(_ratio(kappa, std_err)),
    )


def kappa_result(
    a: Sequence[object],
    b: Sequence[object],
    weights: Weights = "quadratic",
    *,
    scale: float = 100,
) -> KappaResult:
    """Weighted (default: quadratic) Cohen's kappa of two numeric raters, with SE and p-value.

    Exactly Kumar et al.'s computation: items missing (None/NaN) in either rater are dropped
    (``n`` reports how many remain), ratings are scaled by ``scale`` and rounded to integer
    categories, the table is built over the sorted union of observed categories, and
    statsmodels' ``cohens_kappa(table, wt=weights)`` formulas are applied (index-distance
    weights; see :func:`kappa_from_table`).

    Edge cases: fewer than 2 paired items -> NaN; a single category overall (both raters gave
    the same rating to every item) -> NaN, because chance agreement is then 1 and kappa is
    0/0 (statsmodels also gives NaN); use :func:`accuracy` for raw agreement there.
    ValueError for a non-numeric or infinite rating, or sequences of different lengths.
    """
    _, table = contingency_table(a, b, scale=scale)
    return kappa_from_table(table, weights)


def weighted_kappa(
    a: Sequence[object],
    b: Sequence[object],
    weights: Weights = "quadratic",
    *,
    scale: float = 100,
) -> float:
    """The kappa of :func:`kappa_result` (quadratic, linear or, with None, unweighted)."""
    return kappa_result(a, b, weights, scale=scale).kappa


def cohens_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Unweighted Cohen's kappa of two raters over arbitrary (hashable) labels.

    Items missing in either rater are dropped. Equals statsmodels' ``cohens_kappa(table)``
    and scikit-learn's ``cohen_kappa_score``. Numeric labels are compared as they are (1 and
    1.0 are the same label; no scaling or rounding). NaN with fewer than 2 paired items or a
    single category overall (kappa is 0/0 there).
    """
    xa, xb = paired(a, b)
    if len(xa) < 2:
        return _NAN
    index: dict[Hashable, int] = {}
    for v in (*xa, *xb):
        index.setdefault(label(v), len(index))
    table = np.zeros((len(index), len(index)), dtype=np.float64)
    for x, y in zip(xa, xb, strict=True):
        table[index[label(x)], index[label(y)]] += 1
    return kappa_from_table(table, None).kappa


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float:
    """Fleiss' kappa of an items x raters matrix of labels (None/NaN = not rated).

    With complete data (every item rated by the same number of raters) this equals
    ``statsmodels.stats.inter_rater.fleiss_kappa(aggregate_raters(ratings)[0])``. With missing
    ratings, items rated fewer than twice are dropped and each remaining item's agreement uses
    its own rater count n_i: ``P_i = (sum_j n_ij^2 - n_i) / (n_i (n_i - 1))``; the category
    proportions pool all retained ratings. NaN when no item has two ratings or only one
    category was used (chance agreement 1). ValueError for rows of different lengths.
    """
    check_same_length(*ratings)
    rows = [[label(v) for v in row if not is_missing(v)] for row in ratings]
    rows = [row for row in rows if len(row) >= 2]
    if not rows:
        return _NAN
    index: dict[Hashable, int] = {}
    for row in rows:
        for v in row:
            index.setdefault(v, len(index))
    if len(index) < 2:
        return _NAN
    counts = np.zeros((len(rows), len(index)), dtype=np.float64)
    for i, row in enumerate(rows):
        for v in row:
            counts[i, index[v]] += 1
    n_i = counts.sum(1)
    p_item = ((counts * counts).sum(1) - n_i) / (n_i * (n_i - 1.0))
    p_cat = counts.sum(0) / counts.sum()
    p_exp = float((p_cat * p_cat).sum())
    return (float(p_item.mean()) - p_exp) / (1 - p_exp)
