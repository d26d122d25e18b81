"""Copied expert columns are found before a run (judge/calibration/_copied_experts.py)."""

from __future__ import annotations

from typing import Any

from judge.calibration import copied_expert_column
from judge.rubrics import RubricRegistry

EPITOME = RubricRegistry.from_directory().get("epitome")


def labels(columns: dict[str, list[Any]], dim: str = "emotional_reactions") -> list[dict[str, Any]]:
    n = len(next(iter(columns.values())))
    return [
        {e: {dim: col[i]} for e, col in columns.items() if col[i] is not None} for i in range(n)
    ]


def test_an_identical_column_on_twenty_items_is_a_copy() -> None:
    a = [n % 3 for n in range(20)]
    found = copied_expert_column(EPITOME, labels({"e1": a, "e2": [(v + 1) % 3 for v in a], "x": a}))
    assert found is not None
    assert (found.copy, found.original, found.dimension, found.first) == (
        "x",
        "e1",
        "emotional_reactions",
        0,
    )
    assert found.reason == "identical columns on all 20 items both rated"


def test_a_near_identical_column_is_a_copy_and_a_real_second_expert_is_not() -> None:
    a = [n % 3 for n in range(100)]
    near = list(a)
    near[5] = (a[5] + 1) % 3  # 99/100 agree exactly
    found = copied_expert_column(EPITOME, labels({"e1": a, "e2": near}))
    assert found is not None
    assert found.reason.startswith("near-identical")
    distinct = [(v + 1) % 3 if n % 6 == 0 else v for n, v in enumerate(a)]  # 0.83 exact
    assert copied_expert_column(EPITOME, labels({"e1": a, "e2": distinct})) is None


def test_few_items_or_few_shared_items_are_not_refused() -> None:
    a = [n % 3 for n in range(19)]
    assert copied_expert_column(EPITOME, labels({"e1": a, "e2": list(a)})) is None
    # 30 items each, identical where both rated, but only 10 items in common
    e1 = [n % 3 if n < 30 else None for n in range(50)]
    e2 = [n % 3 if n >= 20 else None for n in range(50)]
    assert copied_expert_column(EPITOME, labels({"e1": e1, "e2": e2})) is None
    first = [n % 3 if n >= 5 else None for n in range(30)]
    found = copied_expert_column(EPITOME, labels({"e1": first, "e2": [n % 3 for n in range(30)]}))
    assert found is not None
    assert found.first == 5
