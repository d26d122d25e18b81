"""The Monte Carlo interval of a bootstrap bound and the threshold check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judge.reliability import (
    MonteCarloInterval,
    kappa_interval,
    quantile_mc_interval,
    within_mc_error,
)


def test_interval_is_a_pair_of_order_statistics_around_the_quantile() -> None:
    values = np.arange(2000, dtype=np.float64)  # the quantile at 2.5% is about 50
    mc = quantile_mc_interval(values, 0.025)
    # Binomial(2000, 0.025): mean 50, sd 7: the 95% interval spans about +-14 ranks
    assert 30 <= mc.low < 50 < mc.high <= 70
    assert mc.error == pytest.approx((mc.high - mc.low) / 2)
    assert mc.low in values
    assert mc.high in values


def test_more_resamples_give_a_smaller_error() -> None:
    rng = np.random.default_rng(1)
    small = quantile_mc_interval(rng.normal(size=500), 0.05)
    large = quantile_mc_interval(rng.normal(size=8000), 0.05)
    assert large.error < small.error / 2


def test_within_mc_error() -> None:
    mc = MonteCarloInterval(0.571, 0.589)
    assert within_mc_error(mc, 0.58)
    assert not within_mc_error(mc, 0.60)
    assert not within_mc_error(None, 0.58)
    assert not within_mc_error(MonteCarloInterval(math.nan, math.nan), 0.58)
    assert math.isnan(quantile_mc_interval([], 0.05).low)


@pytest.mark.parametrize("method", ["robust", "percentile"])
def test_the_two_sided_low_end_has_its_monte_carlo_interval(method: str) -> None:
    rng = np.random.default_rng(3)
    gold = rng.integers(1, 6, 80)
    pred = np.clip(gold + rng.integers(-1, 2, 80), 1, 5)
    iv = kappa_interval(
        pred.tolist(), gold.tolist(), levels=[1, 2, 3, 4, 5], method=method, n_resamples=2000
    )
    assert iv.low_mc is not None
    assert iv.low_mc.low <= iv.low <= iv.low_mc.high
    assert 0 < iv.low_mc.error < 0.03  # 2,000 resamples place the bound to about +-0.01
