"""Agreement between a round's annotators: kappa per dimension and pair, with n, units and a
CI over the units."""

from __future__ import annotations

import random
from typing import Any

from judge.calibration import annotator_agreement
from judge.rubrics import RubricRegistry

EPITOME = RubricRegistry.from_directory().get("epitome")


def _item(i: int, labels: dict[str, dict[str, int]], group: str | None = None) -> dict[str, Any]:
    item = {"seeker_post": "a", "response": "b"} | ({"group": group} if group else {})
    return {"id": f"t{i}", "item": item, "labels": labels}


def test_pairs_carry_kappa_n_units_and_a_ci() -> None:
    items = [
        _item(i, {"ana": {"explorations": i % 3}, "ben": {"explorations": i % 3}}, f"g{i // 2}")
        for i in range(20)
    ]
    items.append(_item(20, {"ana": {"explorations": 0}}))  # one annotator only: not a pair item
    (pair,) = annotator_agreement(EPITOME, items)
    assert (pair.dimension, pair.a, pair.b) == ("explorations", "ana", "ben")
    assert pair.kappa == 1.0
    assert (pair.n, pair.units) == (20, 10)
    assert pair.ci95 == (1.0, 1.0)


def test_disagreeing_annotators_have_a_low_kappa_and_a_wide_ci() -> None:
    rng = random.Random(3)
    items = [
        _item(
            i,
            {
                "ana": {"emotional_reactions": rng.randint(0, 2)},
                "ben": {"emotional_reactions": rng.randint(0, 2)},
            },
        )
        for i in range(30)
    ]
    (pair,) = annotator_agreement(EPITOME, items)
    assert pair.kappa is not None
    assert pair.kappa < 0.4
    low, high = pair.ci95
    assert low is not None
    assert high is not None
    assert low < pair.kappa < high
