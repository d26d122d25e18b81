"""Chance-corrected Recall@1 with chance from the rater's own marginal of first choices."""

from __future__ import annotations

import pytest

from judge.reliability import candidate_keys, marginal_chance_recall_at_1, marginal_chances

COUPLE = "Couple"


def _sessions() -> tuple[list[list[str]], list[str]]:
    # 12 checkpoints of 4 couples; the gold is the first-listed client 7 times in 12
    candidates, gold = [], []
    for s, (x, y) in enumerate([("ana", "ben"), ("cy", "di"), ("ed", "flo"), ("gus", "hal")]):
        for c in range(3):
            candidates.append([x, y, COUPLE])
            gold.append([x, y, x, COUPLE][(s + c) % 4] if (s, c) != (0, 0) else x)
    return candidates, gold


def test_a_constant_first_client_ranking_scores_zero() -> None:
    candidates, gold = _sessions()
    first = [c[0] for c in candidates]
    result = marginal_chance_recall_at_1(first, gold, candidates, shared=[COUPLE], n_resamples=200)
    assert result.recall_at_1 > 1 / 3  # a uniform 1/k chance would credit it with skill
    assert result.value == pytest.approx(0.0, abs=1e-12)


def test_a_perfect_rater_scores_one_and_a_hand_computed_case() -> None:
    candidates, gold = _sessions()
    assert marginal_chance_recall_at_1(
        gold, gold, candidates, shared=[COUPLE], n_resamples=50
    ).value == pytest.approx(1.0)
    # two items, candidates [p, q]: the rater says p, then q; gold p, p
    result = marginal_chance_recall_at_1(
        ["a", "d"], ["a", "c"], [["a", "b"], ["c", "d"]], n_resamples=50
    )
    # habit: position 0 once, position 1 once -> chance 1/2 per item; hits 1, 0
    assert result.chance == pytest.approx(0.5)
    assert result.value == pytest.approx((1 - 0.5 + 0 - 0.5) / (0.5 + 0.5))


def test_keys_pool_participants_by_position_and_shared_labels_by_id() -> None:
    assert candidate_keys(["maya", "tom", COUPLE], [COUPLE]) == [
        ("position", 0),
        ("position", 1),
        ("label", COUPLE),
    ]


def test_abstentions_are_left_out_and_a_gold_outside_the_candidates_is_an_error() -> None:
    result = marginal_chance_recall_at_1(
        ["a", None], ["a", "c"], [["a", "b"], ["c", "d"]], n_resamples=20
    )
    assert result.n == 1
    with pytest.raises(ValueError, match="not one of the item's candidates"):
        marginal_chance_recall_at_1(["a"], ["z"], [["a", "b"]])


def test_marginal_chances_per_item_match_the_score() -> None:
    first = ["a", "a", "Couple", "b"]
    gold = ["a", "b", "Couple", "a"]
    candidates = [["a", "b", "Couple"]] * 4
    chances = marginal_chances(first, gold, candidates, shared=["Couple"])
    assert chances == pytest.approx([2 / 4, 1 / 4, 1 / 4, 2 / 4])
    result = marginal_chance_recall_at_1(first, gold, candidates, shared=["Couple"])
    assert result.chance == pytest.approx(sum(chances) / 4)
    hits = [1, 0, 1, 0]
    expected = sum(h - c for h, c in zip(hits, chances, strict=True)) / sum(1 - c for c in chances)
    assert result.value == pytest.approx(expected)
    assert marginal_chances([], [], []) == []
