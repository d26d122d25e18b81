"""The like-for-like trust decision."""

from __future__ import annotations

import numpy as np
import pytest

from judge.reliability import like_for_like_trust, median_rater, scale_kappa

LEVELS = [1, 2, 3, 4, 5]


def _experts(seed: int, n: int, noise: float) -> tuple[list[float], dict[str, list[float]]]:
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 1, n)
    cuts = [-0.9, -0.3, 0.3, 0.9]

    def rate(extra: float) -> list[float]:
        return (np.searchsorted(cuts, z + rng.normal(0, extra, n)) + 1).astype(float).tolist()

    return rate(noise), {f"e{j}": rate(0.5) for j in range(3)}


def test_statistic_is_the_mean_kappa_against_single_experts_not_the_consensus() -> None:
    panel, experts = _experts(1, 120, 0.4)
    decision = like_for_like_trust(panel, experts, line=0.58, levels=LEVELS, n_resamples=300)
    singles = [scale_kappa(panel, column, LEVELS) for column in experts.values()]
    assert decision.interval.estimate == pytest.approx(float(np.mean(singles)))
    assert dict(decision.per_expert) == pytest.approx(dict(zip(experts, singles, strict=True)))
    consensus = median_rater(*experts.values())
    assert decision.consensus_kappa == pytest.approx(scale_kappa(panel, consensus, LEVELS))
    assert decision.consensus_kappa > decision.interval.estimate  # the consensus flatters
    assert decision.interval.units == 120


def test_trusted_only_when_the_lower_bound_clears_the_line() -> None:
    panel, experts = _experts(2, 200, 0.3)
    good = like_for_like_trust(panel, experts, line=0.58, levels=LEVELS, n_resamples=300)
    assert good.interval.lower >= 0.58
    assert good.trusted
    assert good.reasons == ()
    strict = like_for_like_trust(panel, experts, line=0.95, levels=LEVELS, n_resamples=300)
    assert not strict.trusted
    assert "lower_bound_below_line" in strict.reasons


def test_point_above_the_line_is_not_enough() -> None:
    panel, experts = _experts(3, 50, 0.6)
    decision = like_for_like_trust(panel, experts, line=0.58, levels=LEVELS, n_resamples=300)
    assert decision.interval.estimate > 0.58
    assert decision.interval.lower < 0.58
    assert not decision.trusted
    assert "lower_bound_below_line" in decision.reasons


def test_rare_levels_and_too_few_units_block_trust() -> None:
    gold = [1.0] * 58 + [3.0, 3.0]
    experts = {"e1": gold, "e2": gold}
    decision = like_for_like_trust(gold, experts, line=0.58, levels=LEVELS, n_resamples=300)
    assert not decision.trusted
    assert "levels_below_minimum_units" in decision.reasons
    assert decision.interval.lower == -1.0  # 13% of resamples miss level 3: undefined
    few = like_for_like_trust(
        [1.0, 2.0, 3.0] * 4,
        {"e1": [1.0, 2.0, 3.0] * 4},
        line=0.58,
        levels=LEVELS,
        groups=[i // 3 for i in range(12)],
        n_resamples=100,
    )
    assert "too_few_units" in few.reasons


def test_needs_an_expert() -> None:
    with pytest.raises(ValueError, match="at least one expert"):
        like_for_like_trust([1], {}, line=0.58, levels=LEVELS)
