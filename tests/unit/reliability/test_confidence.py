"""Confidence features and their isotonic calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judge.reliability import fit_confidence_calibration, label_features, ordinal_features

NAN = math.nan


def test_ordinal_features_hand_case() -> None:
    ratings = [[3, 3, 3], [2, 3, 3], [1, 3, 5], [4, NAN, NAN]]
    f = ordinal_features(ratings, 1, 5)
    assert f.judges.tolist() == [3, 3, 3, 1]
    assert f.range_agreement[:3].tolist() == [1.0, 0.75, 0.0]
    assert f.modal_agreement[:3].tolist() == pytest.approx([1.0, 0.5, 0.0])  # (2/3-1/3)/(2/3)
    confidence = f.confidence()
    assert confidence[:3].tolist() == pytest.approx([1.0, 0.625, 0.0])
    assert math.isnan(confidence[3])  # one rating: no agreement signal


def test_self_consistency_from_samples() -> None:
    # one item, two judges sampled twice: judge 1 gives 3, 3 (range 1, modal 1); judge 2
    # gives 2, 4 (range 1 - 2/4 = 0.5, modal 0): self-consistency (1 + 1 + 0.5 + 0) / 4
    samples = np.array([[[3, 3], [2, 4]]], dtype=float)
    f = ordinal_features([[3, 3]], 1, 5, samples=samples)
    assert f.self_consistency.tolist() == [0.625]
    assert f.confidence().tolist() == pytest.approx([(1 + 1 + 0.625) / 3])
    single = ordinal_features([[3, NAN]], 1, 5, samples=np.array([[[3, 4], [NAN, NAN]]]))
    assert single.confidence().tolist() == pytest.approx([(0.75 + 0.0) / 2])  # samples only
    with pytest.raises(ValueError, match="samples"):
        ordinal_features([[3, 3]], 1, 5, samples=np.ones((1, 3, 2)))


def test_label_features() -> None:
    f = label_features([["a", "a", "b"], ["a", None, None], ["x", "y", "z"]])
    assert f.modal_agreement[[0, 2]].tolist() == pytest.approx([0.5, 0.0])
    assert math.isnan(f.modal_agreement[1])
    g = label_features([["a", "b"]], samples=[[["a", "a"], ["b", "c"]]])
    assert g.self_consistency.tolist() == [0.5]  # judge 1 consistent, judge 2 not


def test_calibration_hand_case_with_prior() -> None:
    conf = [0, 0, 0, 0, 1, 1, 1, 1, NAN]
    agreed = [False, False, False, True, True, True, True, True, True]
    cal = fit_confidence_calibration(conf, agreed)
    assert cal.edges == (0.0, 1.0)
    assert cal.counts == (4, 4)
    assert cal.agreed == (1, 4)
    assert cal.probabilities == pytest.approx((2 / 6, 5 / 6))  # Beta(1, 1): (s + 1)/(n + 2)
    assert cal.predict([0, 0.5, 1, -1]).tolist() == pytest.approx([1 / 3, 1 / 3, 5 / 6, 1 / 3])
    assert math.isnan(cal.predict([NAN])[0])


def test_calibration_pools_bins_that_break_the_order() -> None:
    cal = fit_confidence_calibration([0] * 4 + [1] * 4, [True] * 4 + [False] * 4)
    assert cal.probabilities == pytest.approx((0.5, 0.5))  # 5/6 and 1/6 pooled


def test_calibration_recovers_a_known_curve() -> None:
    rng = np.random.default_rng(1)
    conf = rng.choice([0.2, 0.4, 0.6, 0.8, 1.0], size=4000)
    agreed = rng.random(4000) < 0.3 + 0.6 * conf
    cal = fit_confidence_calibration(conf, agreed)
    assert cal.predict([0.2, 0.6, 1.0]).tolist() == pytest.approx([0.42, 0.66, 0.9], abs=0.04)
    many = fit_confidence_calibration(rng.random(500), rng.random(500) < 0.5, max_bins=5)
    assert len(many.edges) == 5
    assert list(many.probabilities) == sorted(many.probabilities)


def test_tolerance_counts_judges_within_k_levels_as_agreeing() -> None:
    # spread 1 is within tolerance 1: range 1; spread 2 on a span of 4: 1 - (2 - 1)/(4 - 1)
    f = ordinal_features([[3, 4, 4], [1, 2, 3], [1, 3, 5]], 1, 5, tolerance=1)
    assert f.range_agreement.tolist() == pytest.approx([1.0, 2 / 3, 1 - 3 / 3])
    # every judge within 1 of the middle judge's 2; for 1, 3, 5 none within 1 of another
    assert f.modal_agreement.tolist() == pytest.approx([1.0, 1.0, 0.0])
    exact = ordinal_features([[3, 4, 4]], 1, 5)
    assert exact.confidence()[0] < f.confidence()[0]
    with pytest.raises(ValueError, match="span more than the tolerance"):
        ordinal_features([[0, 1]], 0, 1, tolerance=1)
