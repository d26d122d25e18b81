"""Cascade: routing, cost accounting, and joint calibration (hand cases and simulation)."""

from __future__ import annotations

import numpy as np
import pytest

from judge.reliability import cascade_cost, cascade_threshold, route


def test_route_takes_the_first_confident_stage() -> None:
    conf = np.array([[1.0, 0.5], [0.5, 1.0], [0.5, 0.5], [np.nan, 0.9]])
    assert route(conf, (0.8, 0.8)).tolist() == [0, 1, 2, 1]
    assert route(conf, None).tolist() == [2, 2, 2, 2]
    with pytest.raises(ValueError, match="one threshold per stage"):
        route(conf, (0.8,))


def test_cost_per_item_counts_the_stages_reached() -> None:
    # stage 1 adds 2 calls (0.02), stage 2 one more (0.03); items at stages 0, 1, human, 0
    cost = cascade_cost([0, 1, 2, 0], [2, 1], [0.02, 0.03])
    assert cost.calls_per_item == pytest.approx(2.5)  # (2 + 3 + 3 + 2) / 4
    assert cost.cost_per_item == pytest.approx(0.035)  # (0.02 + 0.05 + 0.05 + 0.02) / 4
    assert cost.reached == (1.0, 0.5)
    assert (cost.full_calls_per_item, cost.full_cost_per_item) == (3, pytest.approx(0.05))


def test_joint_calibration_hand_case() -> None:
    # 12 items: stage 1 confident and right. 8 items: stage 1 unsure (wrong on 6), stage 2
    # confident and right on 7. Common threshold 1: 20 kept, 1 error, P(Bin(20, .2) <= 1) =
    # 0.069 <= 0.1: pass. Threshold 0: stage 1 answers all 20, 6 errors: fail.
    conf = np.array([[1.0, 1.0]] * 12 + [[0.0, 1.0]] * 8)
    agreed = np.array(
        [[True, True]] * 12 + [[True, True]] * 2 + [[False, True]] * 5 + [[False, False]]
    )
    result = cascade_threshold(conf, agreed, alpha=0.2, delta=0.1)
    assert result.status == "guaranteed"
    assert result.thresholds == (1.0, 1.0)
    assert result.coverage == 1.0
    assert result.agreement == pytest.approx(19 / 20)
    assert result.stage_shares == (0.6, 0.4, 0.0)
    assert [(s.kept, s.errors, s.passed) for s in result.curve] == [(20, 1, True), (20, 6, False)]


def test_cascade_without_a_passing_threshold_escalates_everything() -> None:
    conf = np.array([[1.0, 1.0]] * 5)
    result = cascade_threshold(conf, np.ones((5, 2), dtype=bool), 0.2, 0.1)
    assert result.status == "too_few_calibration_units"
    assert result.thresholds is None
    assert result.stage_shares == (0.0, 0.0, 1.0)


def test_simulation_cascade_guarantee() -> None:
    """Stage 1 is right w.p. 0.95 when confident (c = 1) and 0.5 otherwise; stage 2 is right
    w.p. 0.9 when confident and 0.5 otherwise; each confident half the time. At alpha = 0.2
    the common threshold 1 has disagreement (0.5 * 0.05 + 0.25 * 0.1) / 0.75 = 0.067 and
    threshold 0 has 0.275: the cascade must not choose 0 in more than delta of runs."""
    rng = np.random.default_rng(9)
    alpha, delta, runs, n = 0.2, 0.1, 2000, 60
    chose_zero = chose_one = 0
    escalated = 0.0
    for _ in range(runs):
        sure = rng.random((n, 2)) < 0.5
        p_right = np.where(sure, [0.95, 0.9], 0.5)
        agreed = rng.random((n, 2)) < p_right
        result = cascade_threshold(sure.astype(float), agreed, alpha, delta)
        chose_zero += result.thresholds == (0.0, 0.0)
        if result.thresholds == (1.0, 1.0):
            chose_one += 1
            escalated += result.stage_shares[-1]
    assert chose_zero / runs <= delta
    assert chose_one / runs > 0.8  # not vacuous: threshold 1 is usually found
    assert escalated / chose_one == pytest.approx(0.25, abs=0.01)  # neither stage sure
