"""Cluster-robust kappa intervals: the issue's rare-level cases, refusals, agreement with scipy's
bootstrap, the jackknife-t by hand, and the Monte Carlo interval of the lower bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from judge.reliability import scale_kappa
from judge.reliability._cluster_kappa import cluster_kappa
from judge.reliability._kappa_interval import (
    METHODS,
    engine_interval,
    kappa_interval,
    shared_unit_kappas,
)

EPITOME = [0, 1, 2]
#: the issue's case: 58 items at level 0 and 2 at level 2
CONSENSUS = [0] * 58 + [2, 2]


@pytest.mark.parametrize("method", METHODS)
def test_a_perfect_judge_on_two_rare_items_gets_no_evidence(method: str) -> None:
    result = kappa_interval(CONSENSUS, CONSENSUS, levels=EPITOME, method=method, n_resamples=400)  # type: ignore[arg-type]
    assert result.estimate == 1.0
    # (58/60)**60 = 13% of resamples miss both rare items: kappa undefined, counted at -1
    assert result.undefined / result.resamples == pytest.approx(0.13, abs=0.04)
    assert result.lower == -1.0
    assert result.low == -1.0


@pytest.mark.parametrize("method", METHODS)
def test_a_judge_that_never_gets_the_rare_level_right_is_not_trusted(method: str) -> None:
    judge = [0] * 58 + [1, 1]
    result = kappa_interval(judge, CONSENSUS, levels=EPITOME, method=method, n_resamples=400)  # type: ignore[arg-type]
    assert result.estimate == pytest.approx(0.7945, abs=1e-4)
    assert result.lower == -1.0  # it was [0.786, 0.797] with undefined resamples dropped


def test_refused_below_the_minimum_of_units_and_on_an_undefined_sample() -> None:
    a = [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]
    groups = [i // 2 for i in range(10)]  # 5 sessions
    ok = kappa_interval(a, a, levels=[1, 2, 3, 4, 5], groups=groups, min_units=5, n_resamples=50)
    assert ok.refused is None
    assert ok.units == 5
    short = kappa_interval(a, a, levels=[1, 2, 3, 4, 5], groups=groups, min_units=6)
    assert short.refused == "5 independent units (at least 6 needed)"
    assert math.isnan(short.lower)
    assert short.estimate == 1.0
    constant = kappa_interval([3] * 10, [3] * 10, levels=[1, 2, 3, 4, 5])
    assert constant.refused is not None
    assert math.isnan(constant.estimate)
    assert kappa_interval([1], [1], levels=[1, 2]).refused == "1 paired item(s)"


def _clustered(seed: int) -> tuple[list[int], list[int], list[int]]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, 80)
    b = np.clip(a + rng.integers(-1, 2, 80), 0, 4)
    return a.tolist(), b.tolist(), rng.integers(0, 16, 80).tolist()


@pytest.mark.parametrize(("ours", "theirs"), [("bca", "BCa"), ("percentile", "percentile")])
def test_bca_and_percentile_agree_with_scipy_bootstrap_over_clusters(
    ours: str, theirs: str
) -> None:
    a, b, groups = _clustered(3)
    engine = cluster_kappa(a, b, 5, "quadratic", groups)

    def statistic(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        index = np.asarray(idx).astype(int)
        tables = engine.cells[index].sum(axis=-2)
        return engine.kappa(tables.reshape(-1, 25)).reshape(index.shape[:-1])

    reference = stats.bootstrap(
        (np.arange(engine.units),),
        statistic,
        vectorized=True,
        method=theirs,
        n_resamples=4000,
        rng=11,
    ).confidence_interval
    result = engine_interval(engine, method=ours, n_resamples=4000, seed=12)  # type: ignore[arg-type]
    assert result.low == pytest.approx(reference.low, abs=0.01)
    assert result.high == pytest.approx(reference.high, abs=0.01)


def test_jackknife_t_by_hand() -> None:
    a, b, groups = _clustered(4)
    result = kappa_interval(
        a, b, levels=[0, 1, 2, 3, 4], groups=groups, method="jackknife_t", n_resamples=100
    )
    units = sorted(set(groups))
    loo = np.array(
        [
            scale_kappa(
                [x for x, g in zip(a, groups, strict=True) if g != u],
                [y for y, g in zip(b, groups, strict=True) if g != u],
                [0, 1, 2, 3, 4],
            )
            for u in units
        ]
    )
    g = len(units)
    se = math.sqrt((g - 1) / g * ((loo - loo.mean()) ** 2).sum())
    estimate = scale_kappa(a, b, [0, 1, 2, 3, 4])
    assert result.estimate == pytest.approx(estimate)
    assert result.lower == pytest.approx(estimate - stats.t.ppf(0.95, g - 1) * se)
    assert result.low == pytest.approx(estimate - stats.t.ppf(0.975, g - 1) * se)
    assert result.high == pytest.approx(estimate + stats.t.ppf(0.975, g - 1) * se)
    assert result.lower_mc is not None
    assert result.lower_mc.error == 0.0


def test_one_sided_lower_bound_lies_between_the_two_sided_ends() -> None:
    a, b, groups = _clustered(5)
    for method in ("percentile", "bca", "studentized"):
        r = kappa_interval(
            a,
            b,
            levels=[0, 1, 2, 3, 4],
            groups=groups,
            method=method,  # type: ignore[arg-type]
            n_resamples=500,
        )
        assert r.low < r.lower < r.estimate < r.high


def test_the_lower_bounds_monte_carlo_interval_brackets_other_seeds() -> None:
    a, b, groups = _clustered(6)
    first = kappa_interval(
        a, b, levels=[0, 1, 2, 3, 4], groups=groups, method="percentile", n_resamples=2000, seed=0
    )
    assert first.lower_mc is not None
    assert first.lower_mc.low < first.lower < first.lower_mc.high
    others = [
        kappa_interval(
            a,
            b,
            levels=[0, 1, 2, 3, 4],
            groups=groups,
            method="percentile",
            n_resamples=2000,
            seed=s,
        ).lower
        for s in range(1, 21)
    ]
    inside = sum(first.lower_mc.low - 0.01 <= x <= first.lower_mc.high + 0.01 for x in others)
    assert inside >= 18
    assert 0.002 < first.lower_mc.error < 0.05


def test_shared_unit_kappas_resample_the_same_units() -> None:
    a, b, groups = _clustered(7)
    c = [None if i % 7 == 0 else v for i, v in enumerate(b)]  # the second expert skipped some
    first, second = shared_unit_kappas(
        [(a, b), (a, c)], "quadratic", levels=[0, 1, 2, 3, 4], groups=groups
    )
    assert first.units == second.units == len(set(groups))
    assert first.n == 80
    assert second.n == 80 - len(range(0, 80, 7))
    assert first.point() == pytest.approx(scale_kappa(a, b, [0, 1, 2, 3, 4]))
    assert second.point() == pytest.approx(scale_kappa(a, c, [0, 1, 2, 3, 4]))
