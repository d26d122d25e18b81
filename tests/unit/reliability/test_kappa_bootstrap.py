"""The statistics behind the evidence gate: full-scale weighted kappa (against scikit-learn),
Gwet's AC1 (against a published example and the kappa paradox), the cluster bootstrap, and
ratio bootstrap CIs."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judge.reliability import (
    bootstrap_ci,
    bootstrap_kappa_ci,
    bootstrap_ratio_ci,
    cohens_kappa,
    gwet_ac1,
    scale_grid,
    scale_kappa,
    weighted_kappa,
)

LEVELS = [1, 2, 3, 4, 5]


@pytest.mark.parametrize("weights", ["quadratic", "linear"])
def test_full_scale_kappa_equals_scikit_learn_with_every_level(weights: str) -> None:
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(2, 60)
        used = rng.sample(LEVELS, rng.randint(2, 4))  # some levels never occur
        a = [rng.choice(used) for _ in range(n)]
        b = [rng.choice(used) for _ in range(n)]
        ours = scale_kappa(a, b, LEVELS, weights)  # type: ignore[arg-type]
        theirs = cohen_kappa_score(a, b, weights=weights, labels=LEVELS)
        if math.isnan(theirs):
            assert math.isnan(ours)
        else:
            assert ours == pytest.approx(theirs, abs=1e-12)


def test_full_scale_differs_from_observed_categories_when_a_level_is_unused() -> None:
    # nobody used 3 or 4: observed-category weights treat 2-vs-5 as adjacent, like 1-vs-2
    a = [1, 2, 5, 1, 2, 5, 2, 1]
    b = [2, 2, 5, 1, 5, 5, 1, 1]
    full = scale_kappa(a, b, LEVELS)
    assert full == pytest.approx(cohen_kappa_score(a, b, weights="quadratic", labels=LEVELS))
    assert weighted_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))
    assert abs(full - weighted_kappa(a, b)) > 0.01


def test_midpoints_of_an_even_number_of_experts_use_the_half_step_grid() -> None:
    assert scale_grid(LEVELS, [1, 2.5]) == [1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5]
    assert scale_grid(LEVELS, [1, 2]) == LEVELS
    a, b = [1, 2.5, 3, 4.5, 5, 2], [1.5, 2.5, 3, 4, 5, 1]
    grid = scale_grid(LEVELS, [*a, *b])
    as_text = [str(float(g)) for g in grid]
    sa, sb = [str(float(x)) for x in a], [str(float(x)) for x in b]
    expected = cohen_kappa_score(sa, sb, weights="quadratic", labels=as_text)
    assert scale_kappa(a, b, LEVELS) == pytest.approx(expected)
    with pytest.raises(ValueError, match=r"3\.33 is not a level"):
        scale_kappa([3.33, 1], [1, 2], LEVELS)


def test_full_scale_kappa_edge_cases() -> None:
    assert math.isnan(scale_kappa([3], [3], LEVELS))  # one item
    assert math.isnan(scale_kappa([3, 3, 3], [3, 3, 3], LEVELS))  # one level: kappa is 0/0
    assert scale_kappa([1, None, 5], [1, 2, 5], LEVELS) == pytest.approx(1.0)


def test_unweighted_kappa_on_text_labels_equals_scikit_learn() -> None:
    rng = random.Random(3)
    labels = ["pursue_withdraw", "attack_attack", "repair_softening", "mixed_transition"]
    for _ in range(100):
        n = rng.randint(3, 40)
        a = [rng.choice(labels) for _ in range(n)]
        b = [rng.choice(labels) for _ in range(n)]
        theirs = cohen_kappa_score(a, b)
        assert cohens_kappa(a, b) == pytest.approx(theirs, abs=1e-12) or math.isnan(theirs)


def test_ac1_matches_a_published_agreestat_example() -> None:
    """Two raters, 23 syllabi, categories 3/4/5 (rows rater 1, columns rater 2):
    [[0, 0, 0], [1, 2, 1], [4, 0, 15]]; AgreeStat (Gwet's software) reports AC1 = 0.675."""
    table = {(4, 3): 1, (4, 4): 2, (4, 5): 1, (5, 3): 4, (5, 5): 15}
    a = [r for (r, _), k in table.items() for _ in range(k)]
    b = [c for (_, c), k in table.items() for _ in range(k)]
    assert len(a) == 23
    assert gwet_ac1(a, b, categories=[3, 4, 5]) == pytest.approx(0.675, abs=5e-4)


def test_ac1_resolves_the_kappa_paradox() -> None:
    """Feinstein and Cicchetti's paradox: 118 + 0 agreements out of 125 (94.4%) with a skewed
    prevalence give a kappa below zero; AC1 stays near the raw agreement (by hand:
    pi_yes = (123 + 120) / 250 = 0.972, chance = 2 * 0.972 * 0.028 = 0.054432)."""
    a = ["yes"] * 118 + ["yes"] * 5 + ["no"] * 2
    b = ["yes"] * 118 + ["no"] * 5 + ["yes"] * 2
    assert cohens_kappa(a, b) == pytest.approx(-0.0234, abs=1e-4)
    assert gwet_ac1(a, b) == pytest.approx((0.944 - 0.054432) / (1 - 0.054432), abs=1e-9)
    assert gwet_ac1(a, b) > 0.94


def test_ac1_edge_cases() -> None:
    assert math.isnan(gwet_ac1([], []))
    assert math.isnan(gwet_ac1(["a", "a"], ["a", "a"]))  # one category
    assert gwet_ac1(["a", "a"], ["a", "a"], categories=["a", "b"]) == 1.0
    assert gwet_ac1(["a", None, "b"], ["a", "b", "b"]) == 1.0  # missing pairs dropped
    with pytest.raises(ValueError, match="not one of the categories"):
        gwet_ac1(["a", "c"], ["a", "b"], categories=["a", "b"])


def _clustered() -> tuple[list[int], list[int], list[int]]:
    """20 sessions of 10 checkpoints each; within a session every checkpoint has the same
    (prediction, gold) pair, as strongly correlated checkpoints do."""
    rng = random.Random(11)
    pred, gold, groups = [], [], []
    for g in range(20):
        truth = rng.choice(LEVELS)
        guess = truth if rng.random() < 0.6 else rng.choice(LEVELS)
        pred += [guess] * 10
        gold += [truth] * 10
        groups += [g] * 10
    return pred, gold, groups


def test_the_cluster_bootstrap_widens_the_ci_of_correlated_items() -> None:
    pred, gold, groups = _clustered()
    items = bootstrap_kappa_ci(pred, gold, levels=LEVELS, n_resamples=1000, seed=1)
    clusters = bootstrap_kappa_ci(
        pred, gold, levels=LEVELS, groups=groups, n_resamples=1000, seed=1
    )
    kappa = scale_kappa(pred, gold, LEVELS)
    assert items[0] <= kappa <= items[1]
    assert clusters[0] <= kappa <= clusters[1]
    width_items, width_clusters = items[1] - items[0], clusters[1] - clusters[0]
    # 200 items but only 20 independent sessions: the honest interval is about sqrt(10) wider
    assert width_clusters > 2 * width_items
    hits = [float(p == g) for p, g in zip(pred, gold, strict=True)]
    ones = [1.0] * len(hits)
    acc_items = bootstrap_ratio_ci(hits, ones, n_resamples=1000, seed=1)
    acc_clusters = bootstrap_ratio_ci(hits, ones, groups=groups, n_resamples=1000, seed=1)
    assert acc_clusters[1] - acc_clusters[0] > 2 * (acc_items[1] - acc_items[0])
    generic = bootstrap_ci(
        lambda p, g: scale_kappa(p, g, LEVELS), pred, gold, groups=groups, n_resamples=300
    )
    assert generic[1] - generic[0] > 2 * width_items


def test_singleton_groups_are_the_plain_bootstrap() -> None:
    pred, gold, _ = _clustered()
    plain = bootstrap_kappa_ci(pred, gold, levels=LEVELS, n_resamples=300, seed=4)
    none_grouped = bootstrap_kappa_ci(
        pred, gold, levels=LEVELS, groups=[None] * len(pred), n_resamples=300, seed=4
    )
    assert plain == none_grouped


def test_ratio_bootstrap() -> None:
    num, den = [1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]
    low, high = bootstrap_ratio_ci(num, den, n_resamples=500, seed=2)
    assert 0.0 <= low <= 0.75 <= high <= 1.0
    assert bootstrap_ratio_ci([], [], n_resamples=10) == pytest.approx(
        (math.nan, math.nan), nan_ok=True
    )
    with pytest.raises(ValueError, match="same length"):
        bootstrap_ratio_ci([1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="groups"):
        bootstrap_ratio_ci([1.0], [1.0], groups=[1, 2])
    assert np.isfinite(bootstrap_ratio_ci([1.0, 0.0], [1.0, 1.0], n_resamples=50)[0])
