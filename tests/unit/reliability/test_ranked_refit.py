"""The ranked scale's weighted refit: weighted Borda first choices, chance-corrected Recall@1
with the column's own habit, weights refit inside every resample (against a slow reference)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
import pytest

from judge.reliability import cohens_kappa, compare_weighted, marginal_chances, ranked_design
from judge.reliability._ranked_refit import (
    RankedDesign,
    ranked_answers,
    ranked_judge_scores,
    ranked_score,
)
from judge.reliability._rescue_chance import candidate_keys
from judge.reliability._weighted_refit import cv_difference

Ranking = Sequence[Hashable] | None


def test_borda_ties_split_evenly_and_weights_decide() -> None:
    d = ranked_design(
        [[["a", "b"], ["b", "a"]], [["a", "b"], ["a", "c"]]],
        ["a", "b"],
        [["a", "b", "c"], ["a", "b", "c"]],
        k=2,
    )
    equal = ranked_answers(d, np.ones((1, 2)))[0]
    assert equal[0].tolist() == [0.5, 0.5, 0.0]  # 3 points each: split, no tie rule wins
    assert equal[1].tolist() == [1.0, 0.0, 0.0]
    heavy = ranked_answers(d, np.array([[0.2, 1.0]]))[0]
    assert heavy[0].tolist() == [0.0, 1.0, 0.0]
    # x, y and z tie at 2 points; y, which no judge put first, drops out, x and z split
    three = ranked_design([[["x", "y"], ["z", "y"]]], ["x"], [["x", "y", "z"]], k=2)
    assert ranked_answers(three, np.ones((1, 2)))[0, 0].tolist() == [0.5, 0.0, 0.5]
    assert ranked_answers(three, np.array([[1.0, 0.9]]))[0, 0].tolist() == [1.0, 0.0, 0.0]
    # both answering judges weigh zero: the equal count, as the service does
    assert ranked_answers(d, np.zeros((1, 2)))[0].tolist() == equal.tolist()


def test_fixed_labels_score_is_cohens_kappa_of_first_choices() -> None:
    rng = np.random.default_rng(3)
    labels = ["x", "y", "z"]
    gold = [labels[i] for i in rng.integers(0, 3, 80)]
    firsts = [g if rng.random() < 0.6 else labels[rng.integers(0, 3)] for g in gold]
    d = ranked_design([[[f]] for f in firsts], gold, [labels] * 80, k=3)
    score = ranked_judge_scores(d, np.ones((1, 80)))[0, 0]
    assert score == pytest.approx(cohens_kappa(firsts, gold))


def test_a_constant_habit_scores_zero() -> None:
    """Always the first-listed client: the marginal chance makes that habit worth nothing."""
    rng = np.random.default_rng(4)
    cands = [[f"s{i}-a", f"s{i}-b", "Couple"] for i in range(60)]
    gold = [c[rng.integers(0, 3)] for c in cands]
    d = ranked_design([[[c[0]]] for c in cands], gold, cands, k=1, shared={"Couple"})
    assert ranked_judge_scores(d, np.ones((1, 60)))[0, 0] == pytest.approx(0.0, abs=1e-12)


def _design(seed: int, n: int = 14) -> tuple[RankedDesign, dict[str, list[object]]]:
    """A small random RESCUE-like design: two clients per session (ids differ per item) and a
    shared group label, three judges of different skill, some abstentions, pairs of items in
    one unit."""
    rng = np.random.default_rng(seed)
    cands = [[f"s{i}-a", f"s{i}-b", "Couple"] for i in range(n)]
    gold = [c[rng.integers(0, 3)] for c in cands]
    rankings: list[list[Ranking]] = []
    for c, g in zip(cands, gold, strict=True):
        row: list[Ranking] = []
        for skill in (0.8, 0.5, 0.2):
            if rng.random() < 0.1:
                row.append(None)
                continue
            order = list(rng.permutation(c))
            if rng.random() < skill:
                order.remove(g)
                order.insert(0, g)
            row.append(order[:2])
        rankings.append(row)
    groups = [i // 2 for i in range(n)]
    raw: dict[str, list[object]] = {"cands": cands, "gold": gold, "rankings": rankings}
    return ranked_design(rankings, gold, cands, k=2, shared={"Couple"}, groups=groups), raw


def _slow_score(
    answers: list[dict[Hashable, float]], gold: list[Hashable], cands: list[list[Hashable]],
    mult: list[float],
) -> float:  # fmt: skip
    """The statistic by hand: habit over candidate keys, chance per item, ratio of sums."""
    habit: dict[Hashable, float] = {}
    for ans, c, m in zip(answers, cands, mult, strict=True):
        keys = dict(zip(c, candidate_keys(c, {"Couple"}), strict=True))
        for label, share in ans.items():
            if label in keys:
                habit[keys[label]] = habit.get(keys[label], 0.0) + m * share
    top = bottom = 0.0
    for ans, g, c, m in zip(answers, gold, cands, mult, strict=True):
        keys = dict(zip(c, candidate_keys(c, {"Couple"}), strict=True))
        on_item = sum(habit.get(keys[x], 0.0) for x in c)
        chance = habit.get(keys[g], 0.0) / on_item if ans and on_item > 0 else 1 / len(c)
        top += m * (ans.get(g, 0.0) - chance)
        bottom += m * (1 - chance)
    return top / bottom if bottom > 1e-12 else math.nan


def _slow_judge(raw: dict[str, list[object]], j: int, mult: list[float]) -> float:
    """A judge's score with the service's own chance code on the items repeated by draw."""
    firsts, golds, cands = [], [], []
    for row, g, c, m in zip(raw["rankings"], raw["gold"], raw["cands"], mult, strict=True):
        ranking = row[j]  # type: ignore[index]
        if ranking is None or m == 0:
            continue
        for _ in range(int(m)):
            firsts.append(ranking[0])
            golds.append(g)
            cands.append(c)
    if not firsts:
        return math.nan
    chances = marginal_chances(firsts, golds, cands, shared=["Couple"])
    top = sum((f == g) - ch for f, g, ch in zip(firsts, golds, chances, strict=True))
    bottom = sum(1 - ch for ch in chances)
    return top / bottom if bottom > 1e-12 else math.nan


def _slow_borda(rankings: list[Ranking], weights: list[float]) -> dict[Hashable, float]:
    if not any(w > 0 for r, w in zip(rankings, weights, strict=True) if r):
        weights = [1.0] * len(weights)
    points: dict[Hashable, float] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for position, label in enumerate(ranking or []):
            points[label] = points.get(label, 0.0) + w * (2 - position)
    top = max(points.values(), default=0.0)
    tied = [lb for lb, p in points.items() if p >= top - 1e-12 * max(1.0, top)] if top > 0 else []
    firsts = {lb: sum(w for r, w in zip(rankings, weights, strict=True) if r and r[0] == lb)
              for lb in tied}  # fmt: skip
    most = max(firsts.values(), default=0.0)
    tied = [lb for lb in tied if firsts[lb] >= most - 1e-12 * max(1.0, most)]
    return {lb: 1 / len(tied) for lb in tied}


def _slow_cv(
    raw: dict[str, list[object]], units: list[int], draws: np.ndarray, shuffled: np.ndarray
) -> tuple[list[float], list[float]]:
    """cv_difference's (difference, equal) by loops: 2 folds, one split per resample."""
    gold, cands, rankings = raw["gold"], raw["cands"], raw["rankings"]
    diffs, equals = [], []
    for row, shuffle in zip(draws, shuffled, strict=True):
        mult = [float(row[u]) for u in units]
        fold_of_unit = np.argsort(np.argsort(shuffle)) % 2
        equal = [_slow_borda(r, [1.0, 1.0, 1.0]) for r in rankings]  # type: ignore[arg-type]
        weighted: list[dict[Hashable, float]] = [{}] * len(gold)
        for f in (0, 1):
            train = [m if fold_of_unit[u] != f else 0.0 for m, u in zip(mult, units, strict=True)]
            scores = [_slow_judge(raw, j, train) for j in range(3)]
            w = [max(s, 0.0) for s in scores]
            if not all(math.isfinite(s) for s in scores) or sum(w) <= 0:
                w = [1.0, 1.0, 1.0]
            for i, u in enumerate(units):
                if fold_of_unit[u] == f:
                    weighted[i] = _slow_borda(rankings[i], w)  # type: ignore[arg-type]
        e = _slow_score(equal, gold, cands, mult)  # type: ignore[arg-type]
        equals.append(e)
        diffs.append(_slow_score(weighted, gold, cands, mult) - e)  # type: ignore[arg-type]
    return diffs, equals


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_kernel_equals_a_slow_reference_on_small_random_designs(seed: int) -> None:
    d, raw = _design(seed)
    draws = np.random.default_rng(seed + 100).multinomial(d.n_units, [1 / d.n_units] * d.n_units, 6)
    draws = draws.astype(np.float64)
    diff, equal, single = cv_difference(
        d, draws, folds=2, repeats=1, rng=np.random.default_rng(seed)
    )
    shuffled = np.random.default_rng(seed).random((6, d.n_units))  # the kernel's own split
    slow_diff, slow_equal = _slow_cv(raw, d.units.tolist(), draws, shuffled)
    np.testing.assert_allclose(equal, slow_equal, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(diff, slow_diff, rtol=1e-9, atol=1e-12)
    assert np.isnan(single).all()  # no like-for-like on ranked scales


def test_the_score_of_the_equal_aggregate_on_the_sample() -> None:
    d, raw = _design(7, n=30)
    equal = ranked_score(d, ranked_answers(d, np.ones((1, 3))), np.ones((1, 30)))[0]
    slow = _slow_score(
        [_slow_borda(r, [1.0, 1.0, 1.0]) for r in raw["rankings"]],  # type: ignore[arg-type]
        raw["gold"], raw["cands"], [1.0] * 30,  # type: ignore[arg-type]
    )  # fmt: skip
    assert equal == pytest.approx(slow)


def test_a_clearly_better_judge_is_found_and_exchangeable_ones_are_not() -> None:
    rng = np.random.default_rng(11)
    n = 150
    cands = [[f"s{i}-a", f"s{i}-b", "Couple"] for i in range(n)]
    gold = [c[rng.integers(0, 3)] for c in cands]

    def judge(c: list[str], g: str, skill: float) -> list[str]:
        order = [str(x) for x in rng.permutation(c)]
        if rng.random() < skill:
            order.remove(g)
            order.insert(0, g)
        return order[:2]

    pairs = list(zip(cands, gold, strict=True))
    good = [[judge(c, g, 0.95), judge(c, g, 0.0), judge(c, g, 0.0)] for c, g in pairs]
    d = ranked_design(good, gold, cands, k=2, shared={"Couple"})
    result = compare_weighted(d, n_resamples=200, repeats=2, seed=1)
    assert result.difference > 0.2
    assert result.p_value < 0.025
    same = [[judge(c, g, 0.5) for _ in range(3)] for c, g in pairs]
    d = ranked_design(same, gold, cands, k=2, shared={"Couple"})
    result = compare_weighted(d, n_resamples=200, repeats=2, seed=2)
    assert result.p_value > 0.025
    assert math.isnan(result.single_expert)


def test_design_refuses_a_gold_outside_the_candidates() -> None:
    with pytest.raises(ValueError, match="not one of the item's candidates"):
        ranked_design([[["a"]]], ["z"], [["a", "b"]], k=1)
