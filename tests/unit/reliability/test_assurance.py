"""Planning at a stated assurance."""

from __future__ import annotations

import numpy as np

from judge.reliability import cluster_kappa, units_for_assurance
from judge.reliability._assurance import gate_widening
from judge.reliability._kappa_interval import engine_interval


def _engine(seed: int, n: int, noise: float):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 5, n)
    judge = np.clip(gold + np.round(rng.normal(0, noise, n)).astype(int), 0, 4)
    return cluster_kappa(judge.tolist(), gold.tolist(), 5, "quadratic")


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
    assert high.ceiling > 0.8


def test_the_follow_up_keeps_the_calibrated_units() -> None:
    """The plan counts the calibrated units in the follow-up (its additional units are the
    difference), never asks for no new unit, and plans for the gate's wider bound."""
    engine = _engine(1, 50, 0.9)
    assert gate_widening(engine, 0.95) > 1.0
    plan = units_for_assurance(engine, engine.point() - 0.15, simulations=400, seed=3)
    assert plan.units == 51  # one more unit: the calibrated ones carry the estimate


def test_no_plan_when_the_estimate_is_below_the_target() -> None:
    engine = _engine(2, 50, 0.9)
    plan = units_for_assurance(engine, engine.point() + 0.05, simulations=400, max_units=2000)
    assert plan.units is None
    assert plan.ceiling < 0.8
