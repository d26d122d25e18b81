"""Planning at a stated assurance: sized at the calibration's lower bound."""

from __future__ import annotations

import numpy as np
import pytest

from judge.reliability import cluster_kappa, units_for_assurance
from judge.reliability._assurance import gate_widening, population_at
from judge.reliability._kappa_interval import engine_interval


def _engine(seed: int, n: int, noise: float, groups: list[int] | None = None):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 5, n)
    judge = np.clip(gold + np.round(rng.normal(0, noise, n)).astype(int), 0, 4)
    return cluster_kappa(judge.tolist(), gold.tolist(), 5, "quadratic", groups=groups)


@pytest.mark.parametrize("groups", [None, [i // 3 for i in range(60)]])
def test_the_population_has_the_planning_kappa_and_the_marginals(
    groups: list[int] | None,
) -> None:
    engine = _engine(4, 60, 0.9, groups)
    for kappa in (0.7, 0.4, 0.0):
        population, probs = population_at(engine, kappa)
        assert probs.sum() == pytest.approx(1.0)
        table = (probs @ population.cells).reshape(5, 5)
        calibrated = engine.cells.sum(axis=0).reshape(5, 5) / engine.n
        assert population.kappa(table.ravel())[0] == pytest.approx(kappa, abs=1e-12)
        expected = calibrated.sum() * table / table.sum()
        assert expected.sum(axis=0) == pytest.approx(calibrated.sum(axis=0))
        assert expected.sum(axis=1) == pytest.approx(calibrated.sum(axis=1))
    # the calibrated units come first, unchanged
    population, _ = population_at(engine, 0.5)
    assert np.array_equal(population.cells[: engine.units], engine.cells)


def test_more_units_for_a_higher_target_or_assurance() -> None:
    """Targets above the gate's bound on the 50 calibrated units (0.79; estimate 0.87)."""
    engine = _engine(1, 50, 0.9)
    estimate = engine.point()
    assert engine_interval(engine).lower < estimate - 0.07
    low = units_for_assurance(engine, estimate - 0.07, simulations=400, seed=3)
    high = units_for_assurance(engine, estimate - 0.05, simulations=400, seed=3)
    surer = units_for_assurance(engine, estimate - 0.07, assurance=0.9, simulations=400, seed=3)
    assert low.units is not None
    assert high.units is not None
    assert surer.units is not None
    assert 50 < low.units < high.units
    assert low.units < surer.units
    assert high.probability >= 0.8
    # sized at the lower bound at the assurance's confidence (or a stated one)
    assert low.planning_kappa == engine_interval(engine, confidence=0.8, seed=3).lower
    assert surer.planning_kappa == engine_interval(engine, confidence=0.9, seed=3).lower
    assert estimate - 0.07 <= surer.planning_kappa < low.planning_kappa < estimate
    median = units_for_assurance(
        engine, estimate - 0.07, planning_confidence=0.5, simulations=400, seed=3
    )
    assert median.units is not None
    assert median.units < low.units


def test_the_follow_up_keeps_the_calibrated_units() -> None:
    """The plan counts the calibrated units in the follow-up (its additional units are the
    difference), never asks for no new unit, and plans for the gate's wider bound."""
    engine = _engine(1, 50, 0.9)
    assert gate_widening(engine, 0.95) > 1.0
    plan = units_for_assurance(engine, engine.point() - 0.15, simulations=400, seed=3)
    assert plan.units == 51  # one more unit: the calibrated ones carry the estimate


def test_no_plan_when_the_lower_bound_is_below_the_target() -> None:
    """Below the target even with the estimate above it: the calibration does not support a
    truth at the target at the assurance's confidence."""
    engine = _engine(2, 50, 0.9)
    below = units_for_assurance(engine, engine.point() + 0.05, simulations=400, max_units=2000)
    assert below.units is None
    assert below.planning_kappa < below.target
    target = engine.point() - 0.02
    above_estimate = units_for_assurance(engine, target, simulations=400)
    assert above_estimate.units is None
    assert above_estimate.planning_kappa < target < engine.point()
    with pytest.raises(ValueError, match="planning_confidence"):
        units_for_assurance(engine, target, planning_confidence=0.3)


def test_a_follow_up_at_the_planning_kappa_reaches_the_target_as_often_as_stated() -> None:
    """Follow-ups drawn item by item from a population at the planning kappa, read by the
    gate's own robust bound: the plan's 80% holds (up to this check's Monte Carlo error)."""
    engine = _engine(1, 50, 0.9)
    target = engine.point() - 0.06
    plan = units_for_assurance(engine, target, simulations=1000, seed=5)
    assert plan.units is not None
    population, probs = population_at(engine, plan.planning_kappa)
    rng = np.random.default_rng(8)
    reached = []
    for rep in range(120):
        draws = rng.multinomial(plan.units - engine.units, probs).astype(np.float64)
        draws[: engine.units] += 1.0
        keep = draws > 0
        follow_up = type(engine)(
            np.repeat(population.cells[keep], draws[keep].astype(int), axis=0),
            engine.k,
            engine.wmat,
        )
        reached.append(engine_interval(follow_up, n_resamples=500, seed=rep).lower >= target)
    # 120 follow-ups: MC SE 3.7% at 80%; the margin is widened to the gate's bound
    assert np.mean(reached) >= 0.8 - 2 * 0.037
