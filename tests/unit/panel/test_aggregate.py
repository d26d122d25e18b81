"""Reliability-weighted aggregation: weighted median, vote and Borda; which aggregation a
dimension uses; the cross-validated equal-vs-weighted comparison."""

from __future__ import annotations

import itertools
import random
import statistics
from typing import Any

import numpy as np
import pytest

from judge.calibration import ComparisonStopped, ScoredItem, apply_holm, compare_aggregation
from judge.domain.aggregation_choice import choose_aggregation, reliability_weights
from judge.domain.calibration_report import AggregationComparison
from judge.domain.flags import Calibration
from judge.domain.rubric import ReliabilityPolicy, Tolerance
from judge.panel.aggregate import aggregate, weighted_aggregate, weighted_median
from judge.reliability import (
    fold_assignments,
    kappa_statistic,
    paired_comparison,
    ratio_statistic,
    scale_kappa,
)
from tests.unit.domain.test_flags import BINARY, NOMINAL, ORDINAL, RANKED, dim

POLICY = ReliabilityPolicy()
JUDGES = ["good", "weak", "bad"]


# -- weighted median, vote, Borda ------------------------------------------------------------
def test_equal_weights_reproduce_the_plain_aggregates() -> None:
    rng = random.Random(3)
    for size in range(1, 6):
        for _ in range(40):
            ratings = [rng.randint(1, 5) for _ in range(size)]
            assert weighted_median(ratings, [1.0] * size) == statistics.median(ratings)
            plain = aggregate(ORDINAL, ratings, Tolerance())
            assert weighted_aggregate(ORDINAL, ratings, [0.7] * size, Tolerance()) == plain
            labels = [rng.choice(["a", "b"]) for _ in range(size)]
            assert weighted_aggregate(NOMINAL, labels, [2.0] * size, Tolerance()) == aggregate(
                NOMINAL, labels, Tolerance()
            )
    rankings = [["p", "q", "r"], ["q", "p", "s"], ["p", "s"]]
    assert weighted_aggregate(RANKED, rankings, [1, 1, 1], Tolerance()) == aggregate(
        RANKED, rankings, Tolerance()
    )


def test_a_judge_holding_more_than_half_the_weight_decides_the_median() -> None:
    assert weighted_median([1, 4, 5], [0.8, 0.3, 0.3]) == 1
    assert weighted_median([1, 4, 5], [0.5, 0.3, 0.3]) == 4
    # an exact split between two values gives their midpoint, as the plain median does
    assert weighted_median([2, 4], [0.5, 0.5]) == 3
    assert weighted_median([1, 3, 5], [0.25, 0.25, 0.5]) == 4
    # zero weight: no say at all
    assert weighted_median([1, 5, 5], [1.0, 0.0, 0.0]) == 1
    with pytest.raises(ValueError, match="positive weight"):
        weighted_median([1, 2], [0, 0])


def test_weighted_vote_counts_weight_and_reports_weighted_ties() -> None:
    agg = weighted_aggregate(NOMINAL, ["a", "b", "b"], [0.9, 0.3, 0.3], Tolerance())
    assert (agg.score, agg.modal_share, agg.tie) == ("a", pytest.approx(0.6), False)
    tie = weighted_aggregate(NOMINAL, ["b", "a", "b"], [0.2, 0.4, 0.2], Tolerance())
    assert (tie.score, tie.tie, tie.tied_labels, tie.disagreement) == ("a", True, ["a", "b"], True)
    binary = weighted_aggregate(BINARY, [True, False, False], [0.7, 0.3, 0.3], Tolerance())
    assert binary.score is True


def test_weighted_borda_multiplies_points_by_weight() -> None:
    rankings = [["s", "r", "q"], ["p", "q", "r"], ["p", "q", "r"]]
    assert aggregate(RANKED, rankings, Tolerance()).score[0] == "p"
    agg = weighted_aggregate(RANKED, rankings, [1.0, 0.2, 0.2], Tolerance())
    assert agg.score == ["s", "r", "q"]
    assert agg.top1_agreement == pytest.approx(1.0 / 1.4, abs=1e-4)


def test_no_positive_weight_falls_back_to_the_plain_aggregate() -> None:
    assert weighted_aggregate(ORDINAL, [1, 2, 5], [0, 0, 0], Tolerance()).score == 2
    with pytest.raises(ValueError, match="one weight per rating"):
        weighted_aggregate(ORDINAL, [1, 2], [1.0], Tolerance())


# -- which aggregation a dimension uses ------------------------------------------------------
def calibration(
    *,
    n: int = 60,
    low: float = 0.5,
    agreements: dict[str, float | None] | None = None,
    helps: bool | None = True,
) -> Calibration:
    return Calibration(
        run_id="run7",
        judge_kappa=0.7,
        n=n,
        ci95=(low, 0.8),
        coverage=1.0,
        judge_agreement=agreements or {"good": 0.8, "weak": 0.3, "bad": -0.1},
        weighting_helps=helps,
    )


def test_weights_are_max_kappa_zero_and_need_every_judge() -> None:
    assert reliability_weights({"good": 0.8, "weak": 0.3, "bad": -0.1}, JUDGES) == {
        "good": 0.8,
        "weak": 0.3,
        "bad": 0.0,
    }
    assert reliability_weights({"good": 0.8, "weak": 0.3}, JUDGES) is None
    assert reliability_weights({"good": 0.8, "weak": float("nan"), "bad": 0.1}, JUDGES) is None
    assert reliability_weights({"good": -0.2, "weak": 0.0, "bad": -0.1}, JUDGES) is None


@pytest.mark.parametrize(
    ("mode", "cal", "method", "reason"),
    [
        ("equal", calibration(), "equal", "configured_equal"),
        ("auto", None, "equal", "uncalibrated"),
        ("auto", calibration(), "weighted", "calibrated_gain"),
        ("auto", calibration(n=20), "equal", "evidence_gate_not_passed"),
        ("auto", calibration(low=0.3), "equal", "evidence_gate_not_passed"),
        ("auto", calibration(helps=False), "equal", "weighting_not_shown_to_help"),
        ("auto", calibration(helps=None), "equal", "weighting_not_evaluated"),
        ("auto", calibration(agreements={"good": 0.8}), "equal", "no_weights"),
        ("weighted", calibration(n=5, helps=False), "weighted", "configured_weighted"),
        ("weighted", None, "equal", "uncalibrated"),
    ],
)
def test_choose_aggregation(mode: str, cal: Calibration | None, method: str, reason: str) -> None:
    choice = choose_aggregation(mode, cal, JUDGES, POLICY)  # type: ignore[arg-type]
    assert (choice.method, choice.reason) == (method, reason)
    assert (choice.weights is not None) == (method == "weighted")
    if cal is not None and reason != "configured_equal":
        assert choice.run_id == "run7"


# -- folds and the paired comparison ---------------------------------------------------------
def test_folds_keep_groups_together_and_balance_units() -> None:
    groups = [f"s{i // 3}" for i in range(30)] + [None] * 6  # 10 sessions + 6 loose items
    for assignment in fold_assignments(groups, 36, folds=2, repeats=5, seed=1):
        for g in {x for x in groups if x}:
            assert len({assignment[i] for i, x in enumerate(groups) if x == g}) == 1
        units = [len({groups[i] or i for i in range(36) if assignment[i] == f}) for f in (0, 1)]
        assert abs(units[0] - units[1]) <= 1
    with pytest.raises(ValueError, match="cannot fill"):
        fold_assignments(["a", "a", "b"], 3, folds=3)


def test_paired_comparison_of_identical_raters_is_exactly_zero() -> None:
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 3, 40).tolist()
    pred = [g if rng.random() < 0.7 else int(rng.integers(0, 3)) for g in gold]
    stat = kappa_statistic(pred, gold, 3, "quadratic")
    result = paired_comparison(stat, [stat, stat], n=40, n_resamples=300)
    assert result.difference == 0
    assert result.difference_ci95 == (0.0, 0.0)
    assert result.baseline == pytest.approx(scale_kappa(pred, gold, [0, 1, 2]))
    low, high = result.baseline_ci95
    assert low < result.baseline < high


def test_paired_ci_is_narrower_than_the_unpaired_spread() -> None:
    """Two raters that differ on a few items: the paired CI of the difference is far tighter
    than either rater's own CI, because every resample draws the same items for both."""
    rng = np.random.default_rng(5)
    gold = rng.integers(0, 2, 80).tolist()
    a = [g if rng.random() < 0.75 else 1 - g for g in gold]
    b = list(a)
    for i in range(80):
        if a[i] != gold[i] and rng.random() < 0.5:
            b[i] = gold[i]  # b fixes half of a's mistakes
    result = paired_comparison(
        ratio_statistic([float(x == g) for x, g in zip(a, gold, strict=True)], [1.0] * 80),
        [ratio_statistic([float(x == g) for x, g in zip(b, gold, strict=True)], [1.0] * 80)],
        n=80,
        n_resamples=500,
    )
    assert result.difference > 0
    assert result.difference_ci95[0] > 0
    width = result.difference_ci95[1] - result.difference_ci95[0]
    assert width < result.baseline_ci95[1] - result.baseline_ci95[0]


# -- the cross-validated comparison ----------------------------------------------------------
def scored(gold: list[int], columns: dict[str, list[int]], quorum: int = 2) -> list[ScoredItem]:
    items = []
    for i, g in enumerate(gold):
        judges = {m: {"d": col[i]} for m, col in columns.items()}
        ratings = [col[i] for col in columns.values()]
        agg = aggregate(ORDINAL, ratings, Tolerance()).score if len(ratings) >= quorum else None
        items.append(ScoredItem(labels={"e1": {"d": g}}, judges=judges, aggregate={"d": agg}))
    return items


def test_weighting_a_dominant_judge_helps_and_agreement_is_held_out() -> None:
    """One judge matches the experts, two others are noise: the weighted aggregate follows the
    good judge and the paired CI shows the gain. Held-out agreement stays below what weights
    fit on all items would reach in-sample (here 1.0)."""
    rng = random.Random(11)
    gold = [rng.randint(1, 5) for _ in range(80)]
    columns = {
        "good": list(gold),
        "weak": [rng.randint(1, 5) for _ in gold],
        "bad": [rng.randint(1, 5) for _ in gold],
    }
    items = scored(gold, columns)
    out = compare_aggregation(ORDINAL, items, gold, JUDGES, Tolerance(), repeats=5, resamples=400)
    assert out.evaluated is True
    assert out.weights is not None
    assert out.weights["good"] == 1.0
    assert out.weighted is not None
    assert out.equal is not None
    assert out.difference is not None
    weighted, equal, low = out.weighted.agreement, out.equal.agreement, out.difference.ci95[0]
    assert weighted is not None
    assert equal is not None
    assert weighted > equal + 0.2
    assert low is not None
    assert low > 0
    assert out.weighting_helps is True
    assert out.n == 80


def test_a_comparison_stops_when_asked() -> None:
    """The API asks between repeats whether its client is still there."""
    rng = random.Random(2)
    gold = [rng.randint(1, 5) for _ in range(60)]
    noisy = {m: [min(5, max(1, g + rng.choice([-1, 0, 1]))) for g in gold] for m in JUDGES}
    asked: list[int] = []

    def gone() -> bool:
        asked.append(1)
        return len(asked) > 2

    with pytest.raises(ComparisonStopped):
        compare_aggregation(
            ORDINAL, scored(gold, noisy), gold, JUDGES, Tolerance(), repeats=50, should_stop=gone
        )
    assert len(asked) == 3  # stopped at the third repeat, not after all fifty


def test_equal_judges_show_no_gain() -> None:
    rng = random.Random(2)
    gold = [rng.randint(1, 5) for _ in range(60)]
    noisy = {m: [min(5, max(1, g + rng.choice([-1, 0, 0, 1]))) for g in gold] for m in JUDGES}
    out = compare_aggregation(ORDINAL, scored(gold, noisy), gold, JUDGES, Tolerance(), repeats=5)
    assert out.weighting_helps is False
    assert out.difference is not None
    low, high = out.difference.ci95
    assert low is not None
    assert high is not None
    assert low <= 0 <= high


def test_too_few_units_or_one_judge_are_not_evaluated() -> None:
    gold = [1, 2, 3, 4, 5, 1, 2, 3]
    few = compare_aggregation(
        ORDINAL, scored(gold, dict.fromkeys(JUDGES, gold)), gold, JUDGES, Tolerance()
    )
    assert (few.evaluated, few.weighting_helps) == (False, None)
    assert "fewer than 5 per fold" in few.why
    gold = list(itertools.islice(itertools.cycle([1, 2, 3, 4, 5]), 30))
    one = compare_aggregation(
        ORDINAL, scored(gold, {"good": gold}, quorum=1), gold, ["good"], Tolerance()
    )
    assert (one.evaluated, one.why) == (False, "a single judge")


def test_an_even_split_of_an_ordinal_panel_is_reported_as_a_tie() -> None:
    split = aggregate(ORDINAL, [1, 2], Tolerance())
    assert (split.score, split.tie, split.tied_labels) == (1.5, True, [1, 2])
    # the same with equal weights, and no tie where the middle ratings agree
    assert weighted_aggregate(ORDINAL, [1, 2], [0.5, 0.5], Tolerance()) == split
    agreed = aggregate(ORDINAL, [1, 2, 2, 3], Tolerance())
    assert (agreed.score, agreed.tie, agreed.tied_labels) == (2, None, None)
    assert aggregate(ORDINAL, [1, 1, 3, 3], Tolerance()).tied_labels == [1, 3]


def _ranked_items(
    dimension: Any, skills: dict[str, float], n: int, seed: int
) -> tuple[list[ScoredItem], list[Any]]:
    """Ranked items of a RESCUE-like scale (participants ``s{i}-a``, ``s{i}-b`` and the group
    label) or of fixed labels: each judge puts the gold first with its skill, else a random
    order; the panel's aggregate is the service's Borda count."""
    rng = random.Random(seed)
    items, gold = [], []
    for i in range(n):
        participants = (f"s{i}-a", f"s{i}-b") if dimension.scale.include_participants else ()
        candidates = list(dimension.scale.label_ids(participants))
        g = rng.choice(candidates)
        judges = {}
        for model, skill in skills.items():
            order = rng.sample(candidates, len(candidates))
            if rng.random() < skill:
                order.remove(g)
                order.insert(0, g)
            judges[model] = {"d": order[: dimension.scale.k]}
        agg = aggregate(dimension, [j["d"] for j in judges.values()], Tolerance(), participants)
        items.append(
            ScoredItem(
                labels={"e1": {"d": [g]}},
                judges=judges,
                aggregate={"d": agg.score},
                participants=participants,
            )
        )
        gold.append([g])
    return items, gold


COUPLE = dim({"type": "ranked", "k": 2, "include_participants": True, "group_label": "Couple"})


@pytest.mark.parametrize("dimension", [RANKED, COUPLE], ids=["fixed labels", "participants"])
def test_a_ranked_scale_is_decided_by_the_refit_test(dimension: Any) -> None:
    """Weighted Borda: a dominant judge among two at chance is shown to help (a p-value, the
    weights refit in every resample); three exchangeable judges are not."""
    items, gold = _ranked_items(dimension, {"good": 0.95, "weak": 0.0, "bad": 0.0}, 120, 4)
    out = compare_aggregation(dimension, items, gold, JUDGES, Tolerance(), resamples=300)
    assert out.evaluated is True
    assert out.p_value is not None
    assert out.p_value < 0.025
    assert out.weighting_helps is True
    assert out.ties == "split"
    assert out.weighted is not None
    assert out.equal is not None
    assert (out.weighted.agreement or 0) > (out.equal.agreement or 0) + 0.2
    assert out.weighted_like_for_like is None  # no single-expert columns on ranked scales
    same, gold = _ranked_items(dimension, dict.fromkeys(JUDGES, 0.5), 120, 5)
    out = compare_aggregation(dimension, same, gold, JUDGES, Tolerance(), resamples=300)
    assert out.p_value is not None
    assert out.p_value > 0.025
    assert out.weighting_helps is False
    # a ranked dimension joins the rubric's Holm family
    family = {"ranked": out, "ordinal": _ordinal_comparison()}
    apply_holm(family)
    assert out.holm is not None
    assert out.holm.dimensions == 2


def _ordinal_comparison() -> AggregationComparison:
    rng = random.Random(6)
    gold = [rng.randint(1, 5) for _ in range(40)]
    noisy = {m: [min(5, max(1, g + rng.choice([-1, 0, 1]))) for g in gold] for m in JUDGES}
    return compare_aggregation(ORDINAL, scored(gold, noisy), gold, JUDGES, Tolerance())


def test_holm_across_dimensions_decides_weighting_helps() -> None:
    """Holm's step-down over the rubric's tested dimensions: a p of 0.02 helps alone, not
    among three (first threshold 0.025 / 3); the step stops at the first p not rejected;
    dimensions without a p-value (ranked, not evaluated) are outside the family."""

    def tested(p: float | None) -> AggregationComparison:
        return AggregationComparison(
            weight_method="w", weights=None, folds=2, repeats=1, seed=0, resamples=1000, n=50,
            units=50, note="", evaluated=p is not None, weighting_helps=None, why="", p_value=p,
        )  # fmt: skip

    alone = {"a": tested(0.02)}
    apply_holm(alone)
    assert alone["a"].weighting_helps is True
    family = {"a": tested(0.02), "b": tested(0.001), "c": tested(0.5), "r": tested(None)}
    apply_holm(family)
    assert family["b"].holm is not None
    assert (family["b"].holm.threshold, family["b"].weighting_helps) == (0.008333, True)
    assert family["a"].holm is not None
    assert (family["a"].holm.threshold, family["a"].holm.reached) == (0.0125, True)
    assert family["a"].weighting_helps is False  # 0.02 > 0.025 / 2
    assert family["c"].holm is not None
    assert family["c"].holm.reached is False
    assert family["r"].holm is None
    assert family["r"].weighting_helps is None
