"""Split conformal prediction: hand-computed cases, crepes as the oracle, and simulations
whose coverage is known."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from judge.reliability import (
    borda_share_scores,
    conformal_min_units,
    conformal_quantile,
    conformal_rank,
    coverage_share_probability,
    interval_covers,
    interval_widths,
    label_scores_of,
    mondrian_quantiles,
    mondrian_thresholds,
    ordinal_intervals,
    ordinal_scores,
    prediction_sets,
    vote_share_scores,
)

LEVELS = [1, 2, 3, 4, 5]


def test_rank_is_the_finite_sample_quantile() -> None:
    assert conformal_rank(19, 0.1) == 18  # ceil(20 * 0.9)
    assert conformal_rank(9, 0.1) == 9  # ceil(10 * 0.9)
    assert conformal_rank(8, 0.1) == 9  # ceil(8.1): beyond the calibration
    assert conformal_min_units(0.1) == 9
    assert conformal_min_units(0.2) == 4


def test_calibration_conditional_rank() -> None:
    # Beta(24, 2) holds 0.9 with probability 0.729 < 0.9; Beta(25, 1) with 1 - 0.9^25 = 0.928
    assert conformal_rank(25, 0.1, delta=0.1) == 25
    # 1 - 0.9^22 = 0.9015 >= 0.9 but 1 - 0.9^21 = 0.891 < 0.9
    assert conformal_min_units(0.1, delta=0.1) == 22
    assert conformal_rank(22, 0.1, delta=0.1) == 22
    assert conformal_rank(21, 0.1, delta=0.1) == 22


def test_quantile_hand_case_and_status() -> None:
    scores = [0, 0, 0, 1, 1, 2, 0, 0, 0, 3, math.nan]  # the NaN item is not calibration
    q = conformal_quantile(scores, 0.2)  # n = 10, k = ceil(11 * 0.8) = 9: sorted[8] = 2
    assert (q.value, q.n, q.rank, q.status) == (2.0, 10, 9, "ok")
    few = conformal_quantile([0, 1, 0], 0.2)  # k = ceil(4 * 0.8) = 4 > 3
    assert few.status == "too_few_calibration_units"
    assert math.isinf(few.value)
    assert few.min_units == 4
    with pytest.raises(ValueError, match="alpha"):
        conformal_quantile([0.0], 1.5)


def test_ordinal_intervals_end_on_levels_and_clip_to_the_scale() -> None:
    low, high = ordinal_intervals([1, 3, 2.5, 5], 1.0, LEVELS)
    assert low.tolist() == [1, 2, 2, 4]
    assert high.tolist() == [2, 4, 3, 5]  # 2.5 +- 1: levels 2 and 3 only (1.5 and 3.5 are not)
    assert interval_widths(low, high).tolist() == [1, 2, 1, 1]
    assert interval_covers(low, high, [3, 4, 2, 5]).tolist() == [False, True, True, True]
    low, high = ordinal_intervals([2.5, 3], 0.0, LEVELS)
    assert math.isnan(low[0])
    assert math.isnan(high[0])
    assert (low[1], high[1]) == (3, 3)
    assert not interval_covers(low, high, [2, 3])[0]
    low, high = ordinal_intervals([2], math.inf, LEVELS)
    assert (low[0], high[0]) == (1, 5)
    assert ordinal_scores([1, 2.5], [3, 2]).tolist() == [2.0, 0.5]


def test_quantile_matches_crepes() -> None:
    crepes = pytest.importorskip("crepes")
    rng = np.random.default_rng(7)
    for n, alpha in [(10, 0.1), (25, 0.1), (30, 0.2), (51, 0.05)]:
        residuals = rng.integers(0, 4, n).astype(float)  # discrete, with ties
        regressor = crepes.ConformalRegressor()
        regressor.fit(residuals)
        upper = regressor.predict_int(np.zeros(1), confidence=1 - alpha)[0, 1]
        assert conformal_quantile(residuals, alpha).value == upper
        bins = np.arange(n) % 2
        regressor = crepes.ConformalRegressor()
        regressor.fit(residuals, bins=bins)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # crepes warns when a bin is too small
            ends = regressor.predict_int(np.zeros(2), bins=np.array([0, 1]), confidence=1 - alpha)
        ours = mondrian_thresholds(mondrian_quantiles(residuals, bins.tolist(), alpha), [0, 1])
        assert ours.tolist() == ends[:, 1].tolist()
    # Where (n + 1) * alpha is a whole number crepes computes 1 - (1 - alpha) in floating
    # point and falls one rank short: n = 9 at 0.9 has a finite threshold (k = 9), not none.
    regressor = crepes.ConformalRegressor()
    regressor.fit(np.arange(9, dtype=float))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isinf(regressor.predict_int(np.zeros(1), confidence=0.9)[0, 1])
    assert conformal_quantile(np.arange(9, dtype=float), 0.1).value == 8.0


def test_mondrian_bins_have_their_own_status() -> None:
    scores = [0.0] * 10 + [2.0] * 3
    bins = ["sure"] * 10 + ["split"] * 3
    q = mondrian_quantiles(scores, bins, 0.1)
    assert q["sure"].value == 0.0
    assert q["sure"].status == "ok"
    assert q["split"].status == "too_few_calibration_units"
    assert mondrian_thresholds(q, ["sure", "split", "unseen"]).tolist() == [0, math.inf, math.inf]


def test_label_prediction_sets() -> None:
    labels = ["a", "b", "c"]
    scores = vote_share_scores([["a", "a", "b"], ["c", None, "c"], [None, None, None]], labels)
    assert scores[0].tolist() == pytest.approx([1 / 3, 2 / 3, 1])
    assert scores[1].tolist() == pytest.approx([1, 1, 0])
    assert scores[2].tolist() == [1, 1, 1]
    assert label_scores_of(scores, [1, 2, 0]).tolist() == pytest.approx([2 / 3, 0, 1])
    sets = prediction_sets(scores, 0.5)
    assert sets.tolist() == [[True, False, False], [False, False, True], [False, False, False]]
    per_item = prediction_sets(scores, np.array([0.7, 0.0, 1.0]))
    assert per_item.tolist() == [[True, True, False], [False, False, True], [True, True, True]]
    with pytest.raises(ValueError, match="not one of the labels"):
        vote_share_scores([["z"]], labels)


def test_borda_scores_for_the_top_choice() -> None:
    scores = borda_share_scores([[["a", "b"], ["b", "a"]], [["c", "a"], ["c", "b"]]], "abc", 2)
    assert scores[0].tolist() == pytest.approx([0.5, 0.5, 1.0])  # 3 points each of 6
    assert scores[1].tolist() == pytest.approx([5 / 6, 5 / 6, 2 / 6])


def test_coverage_share_probability_hand_case() -> None:
    # n = 9, alpha = 0.1: k = 9, coverage ~ Beta(9, 1) with mean 0.9; one test item
    assert coverage_share_probability(9, 1, 0.1) == pytest.approx(0.9)
    assert coverage_share_probability(5, 10, 0.1) == 1.0  # whole-scale intervals


def test_simulation_continuous_scores_known_coverage() -> None:
    """Exchangeable continuous scores: mean coverage lies in [1 - alpha, 1 - alpha + 1/(n+1)]
    and the share of splits covering >= 1 - alpha matches the beta-binomial prediction."""
    rng = np.random.default_rng(2024)
    n_cal, n_test, alpha, splits = 25, 25, 0.1, 4000
    coverage = np.empty(splits)
    for s in range(splits):
        scores = rng.exponential(size=n_cal + n_test)
        q = conformal_quantile(scores[:n_cal], alpha).value
        coverage[s] = np.mean(scores[n_cal:] <= q)
    se = coverage.std() / math.sqrt(splits)
    assert 1 - alpha - 3 * se <= coverage.mean() <= 1 - alpha + 1 / (n_cal + 1) + 3 * se
    predicted = coverage_share_probability(n_cal, n_test, alpha)
    observed = float(np.mean(coverage >= 1 - alpha - 1e-9))
    assert abs(observed - predicted) < 3 * math.sqrt(predicted * (1 - predicted) / splits)


def test_simulation_calibration_conditional_holds_in_1_minus_delta_of_calibrations() -> None:
    rng = np.random.default_rng(11)
    n_cal, alpha, delta, splits = 40, 0.1, 0.1, 4000
    # exponential scores: the population coverage of threshold q is 1 - exp(-q)
    qs = np.array(
        [conformal_quantile(rng.exponential(size=n_cal), alpha, delta).value for _ in range(splits)]
    )
    held = np.mean(1 - np.exp(-qs) >= 1 - alpha)
    assert held >= 1 - delta - 3 * math.sqrt(delta * (1 - delta) / splits)
    marginal = np.array(
        [conformal_quantile(rng.exponential(size=n_cal), alpha).value for _ in range(splits)]
    )
    assert np.mean(1 - np.exp(-marginal) >= 1 - alpha) < held  # the marginal rank is weaker


def test_simulation_synthetic_ordinal_judge() -> None:
    """A judge whose error is 0 w.p. 0.6, +-1 w.p. 0.32 and +-2 w.p. 0.08 (before clipping):
    intervals of +-1 level cover 92% of items; the calibrated ones cover >= 90% on average."""
    rng = np.random.default_rng(5)
    n_cal, n_test, alpha, splits = 30, 200, 0.1, 600
    covered, widths = [], []
    for _ in range(splits):
        truth = rng.integers(1, 6, n_cal + n_test).astype(float)
        error = rng.choice([0, -1, 1, -2, 2], size=truth.size, p=[0.6, 0.16, 0.16, 0.04, 0.04])
        aggregate = np.clip(truth + error, 1, 5)
        q = conformal_quantile(ordinal_scores(aggregate[:n_cal], truth[:n_cal]), alpha)
        low, high = ordinal_intervals(aggregate[n_cal:], q.value, LEVELS)
        covered.append(np.mean(interval_covers(low, high, truth[n_cal:])))
        widths.append(np.nanmean(interval_widths(low, high)))
    assert np.mean(covered) >= 1 - alpha
    assert np.mean(covered) < 0.99  # not the whole scale every time
    assert 1.0 < np.mean(widths) < 4.0
