"""Weighted vs equal aggregation with refitting inside the bootstrap; ties; Holm."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from judge.reliability import aggregation_design, compare_weighted, holm, scale_kappa
from judge.reliability._weighted_refit import _answers


def test_ties_split_evenly_or_go_to_the_first_label() -> None:
    d = aggregation_design([[1, 0], [0, 0], [1, 1]], [1, 0, 1], kind="labels", k=2)
    split = _answers(d, np.ones((1, 2)))[0]
    assert split.tolist() == [[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]]
    first = _answers(replace(d, ties="first"), np.ones((1, 2)))[0]
    assert first.tolist()[0] == [1.0, 0.0]
    weighted = _answers(d, np.array([[1.0, 0.5]]))[0]
    assert weighted.tolist()[0] == [0.0, 1.0]  # the heavier judge decides


def test_weighted_median_on_the_half_step_grid() -> None:
    d = aggregation_design([[0, 1, 4], [2, 2, None], [1, 3, None]], [0, 2, 2], kind="ordinal", k=5)
    equal = np.argmax(_answers(d, np.ones((1, 3)))[0], axis=1) / 2
    assert equal.tolist() == [1.0, 2.0, 2.0]  # median; [1, 3] -> the midpoint 2
    heavy = np.argmax(_answers(d, np.array([[1.0, 1.0, 3.0]]))[0], axis=1) / 2
    assert heavy.tolist() == [4.0, 2.0, 2.0]


def test_a_clearly_better_judge_is_found_and_exchangeable_ones_are_not() -> None:
    rng = np.random.default_rng(5)
    n = 150
    gold = rng.integers(0, 5, n)
    good = gold.copy()
    bad = rng.integers(0, 5, (n, 2))  # two judges at chance
    d = aggregation_design(np.c_[good, bad].tolist(), gold.tolist(), kind="ordinal", k=5)
    result = compare_weighted(d, n_resamples=200, repeats=2, seed=1)
    assert result.difference > 0.3
    assert result.lower > 0
    assert result.p_value < 0.025
    same = np.clip(gold[:, None] + rng.integers(-1, 2, (n, 3)), 0, 4)
    d = aggregation_design(same.tolist(), gold.tolist(), kind="ordinal", k=5)
    result = compare_weighted(d, n_resamples=200, repeats=2, seed=2)
    assert result.p_value > 0.025
    assert result.units == n


def test_holm_step_down() -> None:
    assert holm([0.001, 0.02, 0.03], alpha=0.05) == [True, True, True]
    assert holm([0.005, 0.02, 0.04], alpha=0.025) == [True, False, False]  # 0.005 <= 0.025/3
    assert holm([0.3, 0.006, float("nan")], alpha=0.025) == [False, True, False]
    assert holm([], alpha=0.025) == []


def test_design_validates_shapes() -> None:
    with pytest.raises(ValueError, match="one row per item"):
        aggregation_design([[1, 2]], [1, 2], kind="labels", k=3)


def test_the_weighted_aggregate_against_single_experts() -> None:
    """Like for like: the weighted aggregate's mean kappa against each single expert, out of
    fold, with a refit interval; two identical judges make the weighted column their own, so
    it is the mean of their kappas against each expert. Without experts: NaN."""
    rng = np.random.default_rng(8)
    n = 120
    truth = rng.integers(0, 5, n)
    experts = np.clip(truth[:, None] + rng.integers(-1, 2, (n, 2)), 0, 4)
    judge = np.clip(truth + rng.integers(-1, 2, n), 0, 4)
    gold = experts.mean(axis=1)
    d = aggregation_design(
        np.c_[judge, judge].tolist(), gold.tolist(), kind="ordinal", k=5, experts=experts.tolist()
    )
    result = compare_weighted(d, n_resamples=200, repeats=1, seed=4)
    expected = np.mean(
        [scale_kappa(judge.tolist(), experts[:, e].tolist(), [0, 1, 2, 3, 4]) for e in (0, 1)]
    )
    assert result.single_expert == pytest.approx(expected)
    low, high = result.single_expert_ci
    assert low <= result.single_expert_lower <= result.single_expert <= high
    # against the (less noisy) consensus of two experts the same column reads higher
    assert result.weighted > result.single_expert
    bare = aggregation_design(np.c_[judge, judge].tolist(), gold.tolist(), kind="ordinal", k=5)
    assert np.isnan(compare_weighted(bare, n_resamples=50, seed=4).single_expert_lower)
