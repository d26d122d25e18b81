"""Abstentions counted as misses: worst-case answers and the kappa over every labelled item."""

from __future__ import annotations

import pytest

from judge.reliability import (
    ABSTAINED,
    abstain_as_miss_interval,
    cohens_kappa,
    scale_kappa,
    worst_case_answers,
)

LEVELS = [1, 2, 3, 4, 5]


def test_worst_case_is_the_far_end_of_the_scale_or_a_label_of_its_own() -> None:
    pred = [None, None, None, 4, None]
    gold = [1, 5, 3, 4, None]
    assert worst_case_answers(pred, gold, LEVELS) == [5, 1, 1, 4, None]
    assert worst_case_answers(["a", None], ["a", "b"]) == ["a", ABSTAINED]


def test_abstaining_where_it_would_disagree_cannot_raise_kappa() -> None:
    gold = [1, 2, 3, 4, 5] * 12
    answered = [g if i % 5 else min(5, g + 2) for i, g in enumerate(gold)]  # every 5th is off
    selective = [None if i % 5 == 0 else g for i, g in enumerate(gold)]  # abstains there
    assert scale_kappa(selective, gold, LEVELS) == 1.0  # over answered items: perfect
    honest = abstain_as_miss_interval(answered, gold, levels=LEVELS, n_resamples=200)
    gamed = abstain_as_miss_interval(selective, gold, levels=LEVELS, n_resamples=200)
    assert gamed.n == 60
    assert gamed.estimate < honest.estimate < 1.0
    assert gamed.estimate == pytest.approx(
        scale_kappa(worst_case_answers(selective, gold, LEVELS), gold, LEVELS)
    )
    assert gamed.lower < gamed.estimate


def test_labels_and_ac2() -> None:
    gold = ["yes", "no"] * 20
    pred = [None if i < 4 else g for i, g in enumerate(gold)]
    result = abstain_as_miss_interval(pred, gold, weights=None, n_resamples=200)
    assert result.estimate == pytest.approx(cohens_kappa(worst_case_answers(pred, gold), gold))
    assert result.estimate < 1.0
    ac2 = abstain_as_miss_interval(
        [None, 2, 3, 4, 5] * 10,
        [1, 2, 3, 4, 5] * 10,
        levels=LEVELS,
        coefficient="ac2",
        n_resamples=200,
    )
    assert ac2.estimate < 1.0
