"""Cluster-robust bootstrap intervals of kappa that count undefined resamples against them.

Five intervals are implemented, all vectorised over resamples (per-unit tables:
:mod:`judge.reliability._cluster_kappa`), so that ``evidence.cluster_coverage`` compares them
on the same resamples:

- ``percentile``: quantiles of the resampled kappas;
- ``bca``: bias-corrected and accelerated (Efron 1987); the acceleration comes from the
  jackknife over *units* (leave one group out), the bias correction from the share of
  resamples below the estimate (ties count half: kappa's bootstrap distribution has atoms);
- ``studentized``: bootstrap-t with the cluster-robust linearised standard error of every
  resample;
- ``jackknife_t``: no resampling, the cluster jackknife's standard error with Student-t
  quantiles on G - 1 degrees of freedom;
- ``robust``: the union of the jackknife-t and the percentile intervals (the lower of the
  two lower bounds, the higher of the upper ones), the default. The jackknife-t keeps its
  coverage with few clusters, where the percentile interval is too narrow; the percentile
  interval keeps it on a rare level and with few independent items, where the jackknife-t
  claims too much (a level of 5 units that the judge happened to get right). A bound of the
  union misses only when both miss.

Undefined resamples. A resample whose kappa is undefined (a rare level not drawn, so both
raters are constant) is *not* dropped: it counts as the worst value of kappa's range (-1),
and in the bootstrap-t as an infinitely large t; whatever the method, a bound whose tail
holds a larger share of undefined resamples than its level (2.5% for the two-sided 95% ends,
5% for the one-sided bound) is -1, i.e. no evidence. Dropping them would make the interval
conditional on the rare level being drawn.

Scipy's ``scipy.stats.bootstrap`` has percentile and BCa intervals but no bootstrap-t, no
cluster jackknife distinct from its resampling unit, and no rule for undefined resamples;
the formulas are short, so they are written here (checked against scipy in the tests).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from judge.reliability._cluster_kappa import (
    KAPPA_WORST,
    ClusterKappa,
    Coefficient,
    DifferenceStatistic,
    MeanStatistic,
    UnitStatistic,
    cluster_kappa,
)
from judge.reliability._kappa import Weights
from judge.reliability._kappa_bootstrap import _codes
from judge.reliability._mc_error import MonteCarloInterval, quantile_mc_interval
from judge.reliability._missing import is_missing, label
from judge.reliability._paired import weight_matrix
from judge.reliability._resample import group_codes, group_draws
from judge.reliability._scale_kappa import scale_codes, scale_grid

FloatArray = NDArray[np.float64]
Method = Literal["percentile", "bca", "studentized", "jackknife_t", "robust"]
METHODS: tuple[Method, ...] = ("percentile", "bca", "studentized", "jackknife_t", "robust")

#: the interval method the evidence gate uses (evidence/TRUST.md, section 1)
DEFAULT_METHOD: Method = "robust"
#: fewer independent units than this give no interval (evidence/TRUST.md, section 1)
MIN_UNITS = 5
#: bootstrap resamples by default (the deciding bound's Monte Carlo error: evidence/TRUST.md)
DEFAULT_RESAMPLES = 2000
#: the statistics with a linearised standard error (the studentized interval's)
LINEARISED = (ClusterKappa, MeanStatistic, DifferenceStatistic)
#: a t-statistic standing for "undefined": larger than any real one, finite for np.quantile
_T_UNDEFINED = 1e12


@dataclass(frozen=True)
class KappaInterval:
    """A kappa with its two-sided interval (``low``, ``high``) and one-sided lower bound
    (``lower``), both at ``confidence``; ``n`` items in ``units`` independent units.
    ``undefined`` counts the resamples whose kappa was undefined (counted at -1).
    ``refused`` says why there is no interval (bounds NaN). ``lower_mc`` is the Monte Carlo
    interval of ``lower``: where the bound of infinitely many resamples lies (95%);
    ``low_mc`` that of ``low`` (percentile and robust intervals; None otherwise)."""

    estimate: float
    low: float
    high: float
    lower: float
    method: str
    confidence: float
    n: int
    units: int
    resamples: int
    undefined: int
    refused: str | None = None
    lower_mc: MonteCarloInterval | None = None
    low_mc: MonteCarloInterval | None = None


def worst_case(values: FloatArray, worst: float = KAPPA_WORST) -> FloatArray:
    """``values`` with every undefined (NaN) entry replaced by ``worst``."""
    return np.where(np.isfinite(values), values, worst)


def tail_levels(confidence: float) -> FloatArray:
    """The quantile levels of (two-sided low, two-sided high, one-sided lower)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    alpha = 1 - confidence
    return np.array([alpha / 2, 1 - alpha / 2, alpha])


def percentile_bounds(boot: FloatArray, levels: FloatArray) -> FloatArray:
    out: FloatArray = np.quantile(worst_case(boot), levels)
    return out


def bca_levels(
    estimate: float, boot: FloatArray, jack: FloatArray, levels: FloatArray
) -> FloatArray:
    """The BCa-adjusted quantile levels. ``boot`` and ``jack`` count undefined values at the
    worst value; ties with the estimate count half in the bias correction."""
    from scipy import special  # lazily: scipy costs ~1 s of CPU per process

    values, jackknife = worst_case(boot), worst_case(jack)
    r = values.size
    below = (np.sum(values < estimate) + 0.5 * np.sum(values == estimate)) / r
    z0 = float(special.ndtri(np.clip(below, 0.5 / r, 1 - 0.5 / r)))
    d = jackknife.mean() - jackknife
    denominator = 6.0 * float((d**2).sum()) ** 1.5
    accel = float((d**3).sum()) / denominator if denominator > 0 else 0.0
    z = special.ndtri(levels)
    adjusted: FloatArray = special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    return adjusted


def bca_bounds(
    estimate: float, boot: FloatArray, jack: FloatArray, levels: FloatArray
) -> FloatArray:
    return np.quantile(worst_case(boot), bca_levels(estimate, boot, jack, levels))


def _t_values(estimate: float, boot: FloatArray, boot_se: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (boot - estimate) / boot_se
    return np.where(np.isfinite(t), t, _T_UNDEFINED)


def studentized_bounds(
    estimate: float, se: float, boot: FloatArray, boot_se: FloatArray, levels: FloatArray
) -> FloatArray:
    """Bootstrap-t: ``estimate - q_t(1 - level) * se``; an undefined resample (kappa or its
    standard error) has t = +inf, which lowers the lower bound."""
    return estimate - np.quantile(_t_values(estimate, boot, boot_se), 1 - levels) * se


def jackknife_se(jack: FloatArray) -> float:
    """The jackknife standard error from the leave-one-unit-out values (undefined at -1)."""
    g = jack.size
    values = worst_case(jack)
    return math.sqrt((g - 1) / g * float(((values - values.mean()) ** 2).sum()))


def jackknife_t_bounds(estimate: float, jack: FloatArray, levels: FloatArray) -> FloatArray:
    """``estimate + t_{G-1}(level) * jackknife SE`` (G units)."""
    from scipy import stats  # lazily: scipy.stats costs ~2 s of CPU per process

    quantiles = np.asarray(stats.t.ppf(levels, jack.size - 1), dtype=np.float64)
    out: FloatArray = estimate + quantiles * jackknife_se(jack)
    return out


def kappa_engine(
    a: Sequence[object],
    b: Sequence[object],
    weights: Weights,
    *,
    numeric: bool = True,
    scale: float = 100,
    levels: Sequence[float] | None = None,
    groups: Sequence[Hashable | None] | None = None,
    coefficient: Coefficient = "kappa",
) -> ClusterKappa | str:
    """Per-unit tables of ``a`` vs ``b`` over the items both rated, or why there are none."""
    if len(a) != len(b) or (groups is not None and len(groups) != len(a)):
        raise ValueError("a, b (and groups) must have the same length")
    keep = [i for i in range(len(a)) if not is_missing(a[i]) and not is_missing(b[i])]
    xa, xb = [a[i] for i in keep], [b[i] for i in keep]
    if len(xa) < 2:
        return f"{len(xa)} paired item(s)"
    if numeric and levels is not None:
        grid = scale_grid(levels, [*xa, *xb])
        ca, cb, k = scale_codes(xa, grid), scale_codes(xb, grid), len(grid)
    else:
        ca, cb, k = _codes(xa, xb, numeric, scale)
    if k < 2:
        return "a single category"
    kept_groups = None if groups is None else [groups[i] for i in keep]
    return cluster_kappa(ca.tolist(), cb.tolist(), k, weights, kept_groups, coefficient)


def shared_unit_kappas(
    pairs: Sequence[tuple[Sequence[object], Sequence[object]]],
    weights: Weights,
    *,
    levels: Sequence[float] | None = None,
    groups: Sequence[Hashable | None] | None = None,
    coefficient: Coefficient = "kappa",
) -> list[ClusterKappa]:
    """One per-unit table statistic per (a, b) pair of rating columns over the same items,
    all on one category grid and one set of units, so that they can be resampled together
    (every pair sees the same units in every resample). Each pair uses the items both of its
    columns rated; units with no such item in any pair are left out. ``levels``: an ordinal
    scale (its full grid), else the ratings are labels. ValueError for columns of different
    lengths, no pair, or fewer than two categories overall."""
    if not pairs:
        raise ValueError("no pair of columns")
    n = len(pairs[0][0])
    if any(len(a) != n or len(b) != n for a, b in pairs):
        raise ValueError("every column must have one entry per item")
    keeps = [
        [i for i in range(n) if not is_missing(a[i]) and not is_missing(b[i])] for a, b in pairs
    ]
    values = [
        col[i] for (a, b), keep in zip(pairs, keeps, strict=True) for col in (a, b) for i in keep
    ]
    if levels is not None:
        grid = scale_grid(levels, values)
        k = len(grid)

        def code(column: Sequence[object], keep: list[int]) -> NDArray[np.int64]:
            return scale_codes([column[i] for i in keep], grid)

    else:
        index: dict[Hashable, int] = {}
        for v in values:
            index.setdefault(label(v), len(index))
        k = len(index)

        def code(column: Sequence[object], keep: list[int]) -> NDArray[np.int64]:
            return np.array([index[label(column[i])] for i in keep], dtype=np.int64)

    if k < 2:
        raise ValueError("fewer than two categories")
    units = group_codes(n, groups)
    used = np.unique(np.concatenate([units[keep] for keep in keeps if keep] or [units[:0]]))
    remap = np.full(int(units.max()) + 1 if n else 0, -1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    out = []
    for (a, b), keep in zip(pairs, keeps, strict=True):
        cells = np.zeros((used.size, k * k), dtype=np.float64)
        if keep:
            np.add.at(cells, (remap[units[keep]], code(a, keep) * k + code(b, keep)), 1.0)
        out.append(ClusterKappa(cells, k, weight_matrix(k, weights), coefficient))
    return out


def undefined_cap(undefined: int, resamples: int, levels: FloatArray) -> NDArray[np.bool_]:
    """Per quantile level: does the share of undefined resamples exceed it? Counted at the
    worst value, they then hold that quantile at -1."""
    return np.asarray(undefined / resamples > levels) if resamples else np.zeros(3, dtype=bool)


def engine_interval(
    engine: UnitStatistic,
    *,
    method: Method = DEFAULT_METHOD,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
    min_units: int = MIN_UNITS,
) -> KappaInterval:
    """:func:`kappa_interval` of a prepared statistic of per-unit tables."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "studentized" and not isinstance(engine, LINEARISED):
        raise ValueError("the studentized interval needs a statistic with a linearised SE")
    levels = tail_levels(confidence)
    estimate = engine.point()
    nan = math.nan
    head = KappaInterval(estimate, nan, nan, nan, method, confidence, engine.n, engine.units, 0, 0)
    if not math.isfinite(estimate):
        why = "the coefficient is undefined on the sample (a single category)"
        return replace(head, refused=why)
    if engine.units < min_units:
        why = f"{engine.units} independent units (at least {min_units} needed)"
        return replace(head, refused=why)
    boot_parts, se_parts = [], []
    for draws in group_draws(engine.units, n_resamples, seed):
        if method == "studentized":
            assert isinstance(engine, LINEARISED)
            values, se_values = engine.resampled_se(draws)
            boot_parts.append(values)
            se_parts.append(se_values)
        else:
            boot_parts.append(engine.resampled(draws))
    boot = np.concatenate(boot_parts)
    undefined = int(np.sum(~np.isfinite(boot)))
    quantile_levels = levels
    low_mc: MonteCarloInterval | None = None
    if method == "jackknife_t":
        bounds = jackknife_t_bounds(estimate, engine.jackknife(), levels)
        mc = _cap_mc_interval(undefined, n_resamples, levels[2], float(bounds[2]))
    elif method == "percentile":
        bounds = percentile_bounds(boot, levels)
        mc = quantile_mc_interval(worst_case(boot), float(levels[2]))
        low_mc = quantile_mc_interval(worst_case(boot), float(levels[0]))
    elif method == "robust":
        jk = jackknife_t_bounds(estimate, engine.jackknife(), levels)
        pc = percentile_bounds(boot, levels)
        bounds = np.array([min(jk[0], pc[0]), max(jk[1], pc[1]), min(jk[2], pc[2])])
        # the bound is min(percentile, jackknife-t): only the percentile part moves with the seed
        pc_mc = quantile_mc_interval(worst_case(boot), float(levels[2]))
        mc = MonteCarloInterval(min(pc_mc.low, float(jk[2])), min(pc_mc.high, float(jk[2])))
        pc_low_mc = quantile_mc_interval(worst_case(boot), float(levels[0]))
        low_mc = MonteCarloInterval(
            min(pc_low_mc.low, float(jk[0])), min(pc_low_mc.high, float(jk[0]))
        )
    elif method == "bca":
        quantile_levels = bca_levels(estimate, boot, engine.jackknife(), levels)
        bounds = np.quantile(worst_case(boot), quantile_levels)
        mc = quantile_mc_interval(worst_case(boot), float(quantile_levels[2]))
    else:
        assert isinstance(engine, LINEARISED)
        se = float(engine.std_err()[0])
        boot_se = np.concatenate(se_parts)
        bounds = studentized_bounds(estimate, se, boot, boot_se, levels)
        t_mc = quantile_mc_interval(_t_values(estimate, boot, boot_se), float(1 - levels[2]))
        mc = MonteCarloInterval(estimate - t_mc.high * se, estimate - t_mc.low * se)
    # whatever the method, a bound whose tail holds more undefined resamples than its level
    # is the worst value (as in the percentile interval, where they count at -1)
    bounds = np.where(undefined_cap(undefined, n_resamples, levels), KAPPA_WORST, bounds)
    low, high, lower = (float(np.clip(x, KAPPA_WORST, 1.0)) for x in bounds)
    capped = bool(undefined_cap(undefined, n_resamples, levels)[0])
    return replace(
        head,
        low=low,
        high=high,
        lower=lower,
        resamples=n_resamples,
        undefined=undefined,
        lower_mc=_clipped(mc),
        low_mc=None if low_mc is None or capped else _clipped(low_mc),
    )


def _clipped(mc: MonteCarloInterval) -> MonteCarloInterval:
    return MonteCarloInterval(
        float(np.clip(mc.low, KAPPA_WORST, 1.0)), float(np.clip(mc.high, KAPPA_WORST, 1.0))
    )


def _cap_mc_interval(
    undefined: int, resamples: int, level: float, bound: float
) -> MonteCarloInterval:
    """The jackknife-t bound is exact but for the cap: when the binomial 95% interval of the
    undefined share contains the tail level, another seed could flip the cap."""
    if not resamples:
        return MonteCarloInterval(bound, bound)
    from scipy import stats  # lazily: scipy.stats costs ~2 s of CPU per process

    share = stats.binomtest(undefined, resamples).proportion_ci(0.95)
    if share.low <= level <= share.high:
        return MonteCarloInterval(KAPPA_WORST, max(bound, KAPPA_WORST))
    return MonteCarloInterval(bound, bound)


def kappa_interval(
    a: Sequence[object],
    b: Sequence[object],
    weights: Weights = "quadratic",
    *,
    numeric: bool = True,
    scale: float = 100,
    levels: Sequence[float] | None = None,
    groups: Sequence[Hashable | None] | None = None,
    method: Method = DEFAULT_METHOD,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
    min_units: int = MIN_UNITS,
    coefficient: Coefficient = "kappa",
) -> KappaInterval:
    """Kappa of ``a`` vs ``b`` over the items both rated, with a cluster-robust interval.

    Ratings are coded as in :func:`bootstrap_kappa_ci` (``levels``: the scale's full grid).
    With ``groups`` (one per item; None = its own group) whole groups are the independent
    units that are resampled and left out. Returns the two-sided interval and the one-sided
    lower bound at ``confidence`` by ``method`` (module docstring); undefined resamples count
    at -1. No interval (``refused`` says why) with fewer than ``min_units`` units, fewer than
    two paired items, or an undefined kappa on the sample itself. Deterministic per ``seed``.
    ``coefficient="ac2"`` gives Gwet's AC2 (AC1 with ``weights=None``) the same way.
    """
    engine = kappa_engine(
        a,
        b,
        weights,
        numeric=numeric,
        scale=scale,
        levels=levels,
        groups=groups,
        coefficient=coefficient,
    )
    if isinstance(engine, str):
        nan = math.nan
        return KappaInterval(nan, nan, nan, nan, method, confidence, 0, 0, 0, 0, engine)
    return engine_interval(
        engine,
        method=method,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        min_units=min_units,
    )
