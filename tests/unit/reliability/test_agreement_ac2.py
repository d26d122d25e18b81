"""Gwet's AC2 against irrCAC, and when the gate reads it instead of kappa."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from irrCAC.raw import CAC  # type: ignore[import-untyped]

from judge.reliability import (
    PARADOX_SHARE,
    agreement_for_gate,
    dominant_level,
    gwet_ac1,
    gwet_ac2,
    kappa_interval,
    scale_kappa,
)

LEVELS = [1, 2, 3, 4, 5]


@pytest.mark.parametrize(("weights", "irr"), [("quadratic", "quadratic"), ("linear", "linear")])
def test_ac2_equals_irrcac_with_every_level_of_the_scale(weights: str, irr: str) -> None:
    rng = np.random.default_rng(8)
    for _ in range(10):
        n = int(rng.integers(10, 80))
        a = rng.integers(1, 4, n)  # levels 4 and 5 unused: the categories still count
        b = np.clip(a + rng.integers(-1, 2, n), 1, 5)
        ours = gwet_ac2(a.tolist(), b.tolist(), LEVELS, weights)  # type: ignore[arg-type]
        frame = pd.DataFrame({"a": a, "b": b})
        theirs = CAC(frame, weights=irr, categories=LEVELS).gwet()["est"]["coefficient_value"]
        assert ours == pytest.approx(theirs, abs=5e-6)  # irrCAC rounds to 5 decimals


def test_unweighted_ac2_is_ac1_and_missing_items_are_dropped() -> None:
    a = [1, 2, 3, None, 5, 1, 1]
    b = [1, 2, 2, 4, 5, 2, 1]
    assert gwet_ac2(a, b, LEVELS, None) == pytest.approx(
        gwet_ac1([1, 2, 3, 5, 1, 1], [1, 2, 2, 5, 2, 1], categories=LEVELS)
    )


def test_prevalence_paradox_rule_reads_ac2_only_beyond_chance() -> None:
    # 90% of the consensus at level 1: a judge right on 90% of each level, and one that
    # always answers 1
    gold = [1] * 90 + [3] * 10
    good = [1] * 81 + [2] * 9 + [3] * 9 + [2]
    constant = [1] * 100
    prevalence = dominant_level(gold)
    assert prevalence is not None
    assert prevalence.share == 0.9
    assert prevalence.share > PARADOX_SHARE
    assert prevalence.paradox
    for judge, metric in ((good, "ac2"), (constant, "kappa")):
        kappa = kappa_interval(judge, gold, levels=LEVELS, n_resamples=300)
        ac2 = kappa_interval(judge, gold, levels=LEVELS, n_resamples=300, coefficient="ac2")
        decision = agreement_for_gate(kappa, ac2, prevalence)
        assert decision.metric == metric
    assert scale_kappa(constant, gold, LEVELS) == 0.0
    assert gwet_ac2(constant, gold, LEVELS) > 0.8  # AC2 alone would trust a constant judge


def test_no_paradox_reads_kappa() -> None:
    gold = [1, 2, 3, 4, 5] * 10
    kappa = kappa_interval(gold, gold, levels=LEVELS, n_resamples=100)
    ac2 = kappa_interval(gold, gold, levels=LEVELS, n_resamples=100, coefficient="ac2")
    assert agreement_for_gate(kappa, ac2, dominant_level(gold)).metric == "kappa"
    assert agreement_for_gate(kappa, ac2, None).metric == "kappa"


def test_dominant_level_counts_units_of_groups_once() -> None:
    gold = [1, 1, 1, 2, None]
    prevalence = dominant_level(gold, groups=["s1", "s1", "s2", "s3", "s3"])
    assert prevalence is not None
    assert (prevalence.level, prevalence.units, prevalence.total_units) == (1, 2, 3)
    assert prevalence.share == 0.75
    assert dominant_level([None, None]) is None
