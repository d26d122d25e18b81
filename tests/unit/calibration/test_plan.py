"""Calibration planning: items needed at a stated assurance, the CI projection, the
stratified proposal, and the projection checked against real ratings (Kumar et al.)."""

from __future__ import annotations

import math
import random
import statistics
from pathlib import Path

import numpy as np
import pytest

from evidence.projection_check import check, kumar_ratings, summary
from judge.calibration import calibration_plan, plan_dimension, predicted_level
from judge.domain.flags import Calibration
from judge.domain.rubric import ReliabilityPolicy
from judge.errors import ItemInvalid
from judge.reliability import (
    ClusterKappa,
    equal_allocation,
    kappa_engine,
    level_mix,
    projected_lower,
    stratified_proposal,
    units_needed,
)
from judge.rubrics import RubricRegistry

EPITOME = RubricRegistry.from_directory().get("epitome")
POLICY = ReliabilityPolicy()


def test_units_needed_inverts_the_projection() -> None:
    # kappa 0.75, lower bound 0.55 on 50 items: (0.20 / 0.17)^2 * 50 = 69.2 -> 70
    assert units_needed(0.75, 0.55, 50, 0.58) == 70
    assert projected_lower(0.75, 0.55, 50, 70) >= 0.58
    assert projected_lower(0.75, 0.55, 50, 69) < 0.58
    assert units_needed(0.75, 0.60, 50, 0.58) == 50  # already cleared
    assert units_needed(0.55, 0.30, 50, 0.58) is None  # the estimate itself is below the line
    assert units_needed(0.58, 0.30, 50, 0.58) is None
    with pytest.raises(ValueError, match="positive"):
        units_needed(0.7, 0.5, 0, 0.58)


def cal(
    kappa: float | None, low: float | None, n: int = 50, units: int | None = None
) -> Calibration:
    ci = (low, 0.9) if low is not None else None
    return Calibration(run_id="r1", judge_kappa=kappa, n=n, ci95=ci, coverage=1.0, units=units)


def engine(agree: float, n: int = 50, seed: int = 3) -> ClusterKappa:
    """Per-unit tables of a panel that copies the consensus with probability ``agree``
    (else a random level), on EPITOME's 0-2 scale."""
    rng = random.Random(seed)
    gold = [rng.choice([0, 0, 1, 1, 2]) for _ in range(n)]
    pred = [g if rng.random() < agree else rng.choice([0, 1, 2]) for g in gold]
    out = kappa_engine(pred, gold, "quadratic", levels=[0.0, 1.0, 2.0])
    assert isinstance(out, ClusterKappa)
    return out


def test_plan_at_a_stated_assurance() -> None:
    """Items needed for the lower bound to reach the target with probability 0.8 (0.9 asks
    more), from the run's per-unit tables; no point projection where no size gets there."""
    dim = EPITOME.dimension("explorations")
    tables = engine(0.7, seed=5)  # kappa 0.74, the gate's bound 0.53 (the CI from 0.48)
    estimate = float(tables.resampled(np.ones((1, tables.units)))[0])
    at_80 = plan_dimension(dim, cal(estimate, 0.48), POLICY, 0.55, tables)
    at_90 = plan_dimension(dim, cal(estimate, 0.48), POLICY, 0.55, tables, assurance=0.9)
    assert at_80["status"] == at_90["status"] == "reachable"
    assert 50 < at_80["items_total"] < at_90["items_total"]
    assert at_80["additional_items"] == at_80["items_total"] - 50
    assert at_80["probability"] >= 0.8
    assert at_90["probability"] >= 0.9
    # sized at the calibration's lower bound at the assurance (0.9's is lower)
    assert 0.55 <= at_90["planning_kappa"] < at_80["planning_kappa"] < estimate
    assert (at_80["planning_confidence"], at_90["planning_confidence"]) == (0.8, 0.9)
    assert f"if the true kappa is at least {at_80['planning_kappa']:.3f}" in at_80["why"]
    assert "projected_lower_at_total" not in at_80
    # the evidence gate (lower bound at the floor, 50 units, coverage) is already met
    assert at_80["evidence_gate"]["status"] == "cleared"
    # grouped items: the plan is in units, converted at the measured items per unit
    grouped = plan_dimension(dim, cal(estimate, 0.48, n=100, units=50), POLICY, 0.55, tables)
    assert grouped["items_total"] == pytest.approx(2 * grouped["units_total"], abs=1)
    # a weak panel: no size reaches 0.58 with probability 0.8
    weak = engine(0.3)
    low = float(weak.resampled(np.ones((1, weak.units)))[0])
    unreachable = plan_dimension(dim, cal(low, low - 0.2), POLICY, 0.58, weak)
    assert unreachable["status"] == "unreachable_at_assurance"
    assert unreachable["items_total"] is None
    assert unreachable["planning_kappa"] < 0.58
    assert unreachable["planning_confidence"] == 0.8
    assert "lower bound of kappa" in unreachable["why"]
    # a planning kappa a hair above the target: no size up to 20,000 units gets there
    hair = at_80["planning_kappa"] - 0.0005
    too_close = plan_dimension(dim, cal(estimate, 0.48), POLICY, hair, tables)
    assert too_close["status"] == "unreachable_at_assurance"
    assert too_close["items_total"] is None
    assert "20,000 units" in too_close["why"]
    assert plan_dimension(dim, cal(0.8, 0.5), POLICY, 0.58)["status"] == "no_assurance_plan"
    assert plan_dimension(dim, None, POLICY, 0.58)["additional_items"] == 50
    assert plan_dimension(dim, cal(0.8, None, n=4), POLICY, 0.58)["status"] == "no_interval"


def test_coverage_below_the_minimum_is_never_cleared() -> None:
    """A dimension whose interval clears the line but whose panel answered too few items:
    neither the plan nor its evidence gate says cleared."""
    dim = EPITOME.dimension("explorations")
    tables = engine(0.95)
    covered = plan_dimension(dim, cal(0.9, 0.7), POLICY, 0.58, tables)
    assert covered["status"] == covered["evidence_gate"]["status"] == "cleared"
    short = cal(0.9, 0.7).model_copy(update={"coverage": 0.7})
    blocked = plan_dimension(dim, short, POLICY, 0.58, tables)
    assert blocked["status"] == "coverage_below_minimum"
    assert blocked["evidence_gate"]["status"] == "coverage_below_minimum"
    assert "70%" in blocked["why"]


def test_assurance_outside_its_range_is_refused() -> None:
    for bad in (0.3, 0.995):
        with pytest.raises(ItemInvalid) as refused:
            calibration_plan(EPITOME, "p", {}, POLICY, assurance=bad)
        assert refused.value.field == "assurance"


def test_equal_allocation_water_fills() -> None:
    assert equal_allocation({"a": 100, "b": 3, "c": 40}, 30) == {"b": 3, "a": 13.5, "c": 13.5}
    assert equal_allocation({"a": 2, "b": 3}, 10) == {"a": 2, "b": 3}


def test_proposal_covers_rare_levels() -> None:
    levels = [0] * 900 + [1] * 80 + [2] * 20
    chosen = stratified_proposal({"d": levels}, 60, seed=4)
    assert len(set(chosen)) == 60
    mix = level_mix([levels[i] for i in chosen])
    assert {k: v["count"] for k, v in mix.items()} == {"0": 20, "1": 20, "2": 20}
    assert level_mix(levels)["2"]["share"] == 0.02
    # within a stratum the choice is random, not the file order
    assert chosen != sorted(chosen)
    assert stratified_proposal({"d": levels}, 60, seed=4) == chosen
    # a budget larger than the pool takes it all
    assert sorted(stratified_proposal({"d": [0, 1, None]}, 10)) == [0, 1, 2]


def test_proposal_over_two_dimensions_fills_both() -> None:
    a = [0] * 95 + [1] * 5
    b = [0] * 50 + [1] * 40 + [2] * 10
    chosen = stratified_proposal({"a": a, "b": b}, 30, seed=0)
    assert sum(a[i] for i in chosen) == 5  # every rare item of a
    counts = level_mix([b[i] for i in chosen])
    assert min(v["count"] for v in counts.values()) >= 8


def result(item_id: str, scores: dict[str, object], rubric: str = "epitome") -> dict[str, object]:
    return {
        "id": "job-" + item_id,
        "item_id": item_id,
        "rubric": {"id": rubric},
        "panel_name": "p",
        "dimensions": {d: {"score": s} for d, s in scores.items()},
    }


def test_calibration_plan_with_a_pool() -> None:
    pool = [
        result(str(i), {"emotional_reactions": 0, "interpretations": 1.5, "explorations": 0})
        for i in range(40)
    ] + [
        result(f"r{i}", {"emotional_reactions": 2, "interpretations": 0, "explorations": 2})
        for i in range(4)
    ]
    cals = {"explorations": cal(0.9, 0.7), "emotional_reactions": cal(0.7, 0.5)}
    plan = calibration_plan(EPITOME, "p", cals, POLICY, pool=pool, budget=10, seed=1)
    assert plan["dimensions"]["explorations"]["status"] == "cleared"
    proposal = plan["proposal"]
    # stratified on the dimensions still short of the target
    assert proposal["stratified_on"] == ["emotional_reactions", "interpretations"]
    assert {item["id"] for item in proposal["items"]} >= {"r0", "r1", "r2", "r3"}
    mix = proposal["mix"]["emotional_reactions"]
    assert mix["pool"]["2"] == {"count": 4, "share": round(4 / 44, 4)}
    assert mix["proposal"]["2"]["count"] == 4
    assert predicted_level(EPITOME.dimension("interpretations"), 1.5) == 2
    with pytest.raises(ItemInvalid) as bad:
        calibration_plan(
            EPITOME, "p", cals, POLICY, pool=[result("x", {}, "lend-an-ear")], budget=1
        )
    assert bad.value.field == "pool[0].rubric.id"
    with pytest.raises(ItemInvalid) as bad:
        calibration_plan(EPITOME, "p", cals, POLICY, pool=[{"id": "x"}], budget=1)
    assert bad.value.field == "pool[0].dimensions"
    with pytest.raises(ItemInvalid) as bad:
        calibration_plan(EPITOME, "p", cals, POLICY, pool=pool)
    assert bad.value.field == "budget"
    with pytest.raises(ItemInvalid) as bad:
        calibration_plan(EPITOME, "p", cals, POLICY, dimensions=["empathy"])
    assert bad.value.field == "dimensions[0]"


@pytest.mark.data
def test_projected_ci_half_width_matches_the_measured_one_on_real_ratings(
    shared_data: Path,
) -> None:
    """Kumar et al.'s real LLM and expert ratings, 21 dimensions x 12 seeds: calibrate on 20
    items, project the CI half-width to 40, measure it on 40. The projection must be right on
    the whole (median ratio within 10%) and per dimension within a factor of 1.5."""
    rows = []
    for ratings in kumar_ratings(shared_data):
        got = check(ratings, 20, 12)
        assert len(got) >= 10, ratings.dimension
        s = summary(got)
        assert 1 / 1.5 < s["projected"] / s["measured"] < 1.5, (ratings.dimension, s)
        rows.extend(got)
        print(f"  {ratings.rubric:21s} {ratings.dimension:28s} projected {s['projected']:.3f} "
              f"measured {s['measured']:.3f}")  # fmt: skip
    ratios = [r.projected_2n / r.measured_2n for r in rows]
    lower = [r.projected_lower_2n / r.measured_lower_2n for r in rows if r.measured_lower_2n > 0]
    assert 0.9 < statistics.median(ratios) < 1.1
    assert 0.9 < statistics.median(lower) < 1.1
    assert all(math.isfinite(r) for r in ratios)
