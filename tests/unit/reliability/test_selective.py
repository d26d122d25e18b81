"""Selective trust by fixed-sequence testing: hand-computed cases and a synthetic judge
whose agreement at each confidence is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judge.reliability import (
    agreement_within,
    binomial_p_value,
    kept_by,
    selective_min_units,
    selective_threshold,
)


def test_min_units_and_p_value() -> None:
    assert selective_min_units(0.2, 0.1) == 11  # 0.8^11 = 0.086 <= 0.1 < 0.8^10 = 0.107
    assert selective_min_units(0.1, 0.1) == 22
    assert binomial_p_value(0, 11, 0.2) == pytest.approx(0.8**11)
    assert binomial_p_value(1, 20, 0.2) == pytest.approx(0.8**20 + 20 * 0.2 * 0.8**19)
    assert binomial_p_value(0, 0, 0.2) == 1.0
    with pytest.raises(ValueError, match="delta"):
        selective_min_units(0.2, 0.0)


def test_agreement_within_levels() -> None:
    scores = [3, 2.5, 5, math.nan]
    assert agreement_within(scores, [3, 3, 3, 3], 0).tolist() == [True, False, False, False]
    assert agreement_within(scores, [3, 3, 3, 3], 1).tolist() == [True, True, False, False]


def test_hand_case_keeps_the_unanimous_items() -> None:
    # 12 items at confidence 1, all agreeing: p = 0.8^12 = 0.069 <= 0.1, pass.
    # 10 more at 0.5 with 5 disagreements: P(Bin(22, 0.2) <= 5) = 0.73, fail: stop.
    confidence = [1.0] * 12 + [0.5] * 10
    agreed = [True] * 12 + [True, False] * 5
    result = selective_threshold(confidence, agreed, alpha=0.2, delta=0.1)
    assert result.status == "guaranteed"
    assert result.threshold == 1.0
    assert result.coverage == pytest.approx(12 / 22)
    assert result.agreement == 1.0
    assert [(s.threshold, s.kept, s.errors, s.passed) for s in result.curve] == [
        (1.0, 12, 0, True),
        (0.5, 22, 5, False),
    ]
    assert result.curve[0].p_value == pytest.approx(0.8**12)
    assert kept_by(confidence, result.threshold).sum() == 12
    assert kept_by(confidence, None).sum() == 0


def test_the_sequence_stops_at_the_first_failure() -> None:
    # the top threshold keeps 5 items (0.8^5 = 0.33 > 0.1): it fails, and the 35 agreeing
    # items below are never tested although they would pass on their own
    confidence = [1.0] * 5 + [0.5] * 30
    result = selective_threshold(confidence, [True] * 35, alpha=0.2, delta=0.1)
    assert result.status == "no_threshold_passes"
    assert result.threshold is None
    assert result.coverage == 0.0
    assert [s.tested for s in result.curve] == [True, False]
    assert result.curve[1].p_value == pytest.approx(0.8**35)


def test_too_few_calibration_units_is_a_status() -> None:
    result = selective_threshold([1.0] * 10, [True] * 10, alpha=0.2, delta=0.1)
    assert result.status == "too_few_calibration_units"
    assert result.min_units == 11
    assert selective_threshold([1.0] * 11, [True] * 11, 0.2, 0.1).status == "guaranteed"


def test_empty_thresholds_are_passed_over_and_never_chosen() -> None:
    confidence = [0.8] * 15
    empty = selective_threshold(confidence, [True] * 15, 0.2, 0.1, grid=[1.0, 0.9])
    assert empty.status == "no_threshold_passes"  # passed over, but an empty set is no answer
    result = selective_threshold(confidence, [True] * 15, 0.2, 0.1, grid=[1.0, 0.9, 0.8, 0.5])
    assert result.threshold == 0.5  # 1.0 and 0.9 keep nothing; 0.8 and 0.5 the same 15
    assert result.coverage == 1.0
    assert [s.kept for s in result.curve] == [0, 0, 15, 15]
    with pytest.raises(ValueError, match="one agreement per confidence"):
        selective_threshold([1.0], [True, False], 0.2, 0.1)


def _synthetic(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Confidence uniform on {0.2, ..., 1.0}; P(agree | c) = c. Disagreement on the items
    kept at t: 0 (t = 1), 0.1 (t = 0.8), 0.2 (t = 0.6), 0.3, 0.4."""
    confidence = rng.choice([0.2, 0.4, 0.6, 0.8, 1.0], size=n)
    return confidence, rng.random(n) < confidence


def test_simulation_guarantee_fails_at_most_delta_of_the_time() -> None:
    rng = np.random.default_rng(3)
    alpha, delta, runs = 0.15, 0.1, 3000
    true_risk = {1.0: 0.0, 0.8: 0.1, 0.6: 0.2, 0.4: 0.3, 0.2: 0.4}
    violations = guaranteed = 0
    for _ in range(runs):
        confidence, agreed = _synthetic(rng, 100)
        result = selective_threshold(confidence, agreed, alpha, delta)
        if result.threshold is not None:
            guaranteed += 1
            violations += true_risk[round(result.threshold, 1)] > alpha
    assert violations / runs <= delta
    assert guaranteed / runs > 0.9  # and it is not vacuous: 0.8 is usually found


def test_simulation_naive_threshold_would_fail_the_guarantee() -> None:
    """The same data with the most lenient threshold whose observed agreement reaches the
    target (no test): it picks 0.6 (true disagreement 0.2 > 0.15) far more than delta."""
    rng = np.random.default_rng(4)
    wrong = 0
    runs = 1000
    for _ in range(runs):
        confidence, agreed = _synthetic(rng, 100)
        ok = [t for t in (0.2, 0.4, 0.6, 0.8, 1.0) if agreed[confidence >= t].mean() >= 0.85]
        wrong += min(ok) <= 0.6
    assert wrong / runs > 0.1
