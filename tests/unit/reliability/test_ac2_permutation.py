"""The AC2 test under the prevalence paradox: D against its permutation distribution."""

from __future__ import annotations

import numpy as np
import pytest

from judge.reliability import AC2_CONFIDENCE, ac2_reasons, ac2_versus_experts
from judge.reliability._paired import weight_matrix
from judge.reliability._prevalence_trust import (
    _differences,
    ac2_difference,
    permutation_differences,
    rater_codes,
)

SHARES = [0.85, 0.06, 0.04, 0.03, 0.02]
LEVELS = [1.0, 2.0, 3.0, 4.0, 5.0]


def _raters(seed: int, n: int, panel_noise: float, expert_noise: float = 0.8):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    truth = rng.choice(5, n, p=SHARES) + 1.0
    experts = {
        e: np.clip(truth + np.round(rng.normal(0, expert_noise, n)), 1, 5).tolist() for e in "abc"
    }
    panel = np.clip(truth + np.round(rng.normal(0, panel_noise, n)), 1, 5).tolist()
    return panel, experts


def test_the_unpermuted_codes_give_d() -> None:
    panel, experts = _raters(1, 120, 0.7)
    experts["a"][3] = None  # a missing rating: that pair leaves the item out
    codes, k = rater_codes([panel, *experts.values()], LEVELS)
    assert k == 5
    assert codes[3, 1] == -1
    d = ac2_difference(panel, list(experts.values()), levels=LEVELS)
    same = _differences(codes[None], k, weight_matrix(k, "quadratic"))
    assert same[0] == pytest.approx(d.point(), abs=1e-12)


def test_a_permutation_relabels_raters_within_an_item_only() -> None:
    """Every permuted item holds the same ratings (a missing one stays missing), so the
    labels' overall mix is unchanged; only who gave which rating moves."""
    panel, experts = _raters(2, 60, 0.7)
    experts["b"][5] = None
    codes, k = rater_codes([panel, *experts.values()], LEVELS)
    rng_seed = 3
    values = permutation_differences(codes, k, weight_matrix(k, "quadratic"), 300, seed=rng_seed)
    assert values.shape == (300,)
    assert np.isfinite(values).all()
    # the permutation distribution is centred near 0 (exchangeable relabellings)
    assert abs(float(np.median(values))) < 0.02
    assert values.std() > 0
    assert np.array_equal(
        values, permutation_differences(codes, k, weight_matrix(k, "quadratic"), 300, seed=3)
    )


def test_a_better_panel_passes_a_worse_one_does_not() -> None:
    levels = LEVELS
    good, experts = _raters(5, 300, 0.2)
    found = ac2_versus_experts(good, experts, levels=levels, n_resamples=1000)
    assert found.confidence == AC2_CONFIDENCE == 0.95
    assert found.method.startswith("permutation")
    assert found.lower >= 0
    assert found.lower < found.estimate  # the margin over the permutation 95th percentile
    assert found.lower_mc is not None
    assert found.lower_mc.low <= found.lower <= found.lower_mc.high
    assert found.low < found.estimate < found.high  # the bootstrap interval of D
    assert ac2_reasons(found) == []
    worse, experts = _raters(5, 300, 1.6)
    found = ac2_versus_experts(worse, experts, levels=levels, n_resamples=1000)
    assert found.lower < 0
    assert "ac2_lower_bound_below_experts" in ac2_reasons(found)


def test_labels_and_too_few_units() -> None:
    rng = np.random.default_rng(7)
    truth = rng.choice(["no", "yes"], 80, p=[0.9, 0.1])
    flip = {"no": "yes", "yes": "no"}
    experts = {e: [flip[t] if rng.random() < 0.1 else t for t in truth] for e in "ab"}
    panel = [flip[t] if rng.random() < 0.1 else t for t in truth]
    found = ac2_versus_experts(panel, experts, weights=None, n_resamples=500)
    assert np.isfinite(found.lower)
    four = ["no", "yes", "no", "no"]
    few = ac2_versus_experts(four, {"a": four, "b": ["no", "yes", "yes", "no"]}, weights=None)
    assert few.refused is not None
    with pytest.raises(ValueError, match="two or more experts"):
        ac2_versus_experts(panel, {"a": experts["a"]}, weights=None)
