"""Linearised (delta-method) cluster-robust standard errors of AC2, of means and differences
of coefficients over shared units, and the studentized AC2 test that uses them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from judge.reliability._cluster_kappa import (
    ClusterKappa,
    DifferenceStatistic,
    MeanStatistic,
    cluster_kappa,
)
from judge.reliability._kappa_interval import engine_interval, jackknife_se, shared_unit_kappas

SHARES = [0.85, 0.06, 0.04, 0.03, 0.02]


def _ratings(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    gold = rng.choice(5, n, p=SHARES)
    judge = np.clip(gold + np.round(rng.normal(0, 0.8, n)).astype(int), 0, 4)
    return judge, gold


@pytest.mark.parametrize("weights", ["quadratic", "linear", None])
@pytest.mark.parametrize("grouped", [False, True])
def test_ac2_linearised_se_agrees_with_the_jackknife(weights: str | None, grouped: bool) -> None:
    """The delta-method SE of AC2 (influence of each unit) and the cluster jackknife's SE are
    two estimates of the same quantity: on 600 items they agree within 2%."""
    judge, gold = _ratings(1, 600)
    groups = [i // 6 for i in range(600)] if grouped else None
    engine = cluster_kappa(
        judge.tolist(), gold.tolist(), 5, weights, groups=groups, coefficient="ac2"
    )  # type: ignore[arg-type]
    se = float(engine.std_err()[0])
    assert se > 0
    assert se == pytest.approx(jackknife_se(engine.jackknife()), rel=0.02)


def test_one_item_units_take_the_gather_path_with_the_same_result() -> None:
    """Independent items read each unit's one cell; the general table product (forced, on
    the same units plus one without items) gives the same standard errors."""
    judge, gold = _ratings(2, 80)
    for coefficient in ("kappa", "ac2"):
        engine = cluster_kappa(
            judge.tolist(), gold.tolist(), 5, "quadratic", coefficient=coefficient
        )  # type: ignore[arg-type]
        cells = np.vstack([engine.cells, np.zeros((1, 25))])
        draws = np.random.default_rng(3).multinomial(80, np.full(80, 1 / 80), size=50)
        padded = np.hstack([draws, np.zeros((50, 1))]).astype(np.float64)
        assert engine._item_cell is not None
        forced = ClusterKappa(cells, 5, engine.wmat, engine.coefficient)
        forced.__dict__["_item_cell"] = None  # the matrix product
        assert np.allclose(engine.std_err(draws.astype(np.float64)), forced.std_err(padded))
        values, se = engine.resampled_se(draws.astype(np.float64))
        assert np.allclose(values, engine.resampled(draws.astype(np.float64)), equal_nan=True)
        assert np.allclose(se, engine.std_err(draws.astype(np.float64)), equal_nan=True)


def _difference(seed: int, n: int, panel_noise: float) -> DifferenceStatistic:
    rng = np.random.default_rng(seed)
    truth = rng.choice(5, n, p=SHARES)
    experts = [np.clip(truth + np.round(rng.normal(0, 0.7, n)).astype(int), 0, 4) for _ in "abc"]
    panel = np.clip(truth + np.round(rng.normal(0, panel_noise, n)).astype(int), 0, 4)
    cols = [e.tolist() for e in experts]
    parts = shared_unit_kappas(
        [*((panel.tolist(), c) for c in cols), *itertools.combinations(cols, 2)],
        "quadratic",
        levels=[0.0, 1.0, 2.0, 3.0, 4.0],
        coefficient="ac2",
    )
    return DifferenceStatistic(MeanStatistic(tuple(parts[:3])), MeanStatistic(tuple(parts[3:])))


def test_the_difference_of_means_has_the_jackknifes_se() -> None:
    """D = mean AC2(panel, expert) - mean AC2(expert, expert): the influences are combined
    unit by unit (the parts share the units, and their correlation is counted): the SE is
    the jackknife's and the bootstrap's."""
    d = _difference(3, 500, 0.7)
    se = float(d.std_err()[0])
    assert se == pytest.approx(jackknife_se(d.jackknife()), rel=0.02)
    draws = np.random.default_rng(4).multinomial(d.units, np.full(d.units, 1 / d.units), 2000)
    assert se == pytest.approx(float(np.std(d.resampled(draws.astype(np.float64)))), rel=0.1)
    values, per_resample = d.resampled_se(np.ones((1, d.units)))
    assert values[0] == pytest.approx(d.point())
    assert per_resample[0] == pytest.approx(se)


def test_the_studentized_interval_of_the_difference() -> None:
    """The bootstrap-t of D (evidence.prevalence_trust compared it with the gate's rule)."""
    d = _difference(6, 120, 0.7)
    interval = engine_interval(d, method="studentized", n_resamples=500)
    assert interval.refused is None
    assert interval.method == "studentized"
    assert interval.low < interval.estimate < interval.high
    assert interval.lower <= interval.estimate
    assert interval.lower_mc is not None
