"""Independent units: items linked by a group or by the same content are one unit."""

from __future__ import annotations

import pytest

from judge.calibration._report import repeated_items, with_units
from judge.calibration._scored import ScoredItem
from judge.calibration._units import unit_ids


def test_repeated_content_is_one_unit() -> None:
    units = unit_ids([None, None, None], ["a", "b", "a"])
    assert units[0] == units[2] != units[1]


def test_a_group_and_content_join_transitively() -> None:
    """s1's checkpoint repeats a conversation submitted under s2: s1 and s2 are one unit."""
    units = unit_ids(["s1", "s1", "s2", None], ["x", "y", "y", "z"])
    assert units[0] == units[1] == units[2] != units[3]


def test_items_with_neither_are_units_of_their_own() -> None:
    assert unit_ids([None, None], [None, None]) == [None, None]


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError, match="same length"):
        unit_ids([None], [])


def test_scored_items_resample_by_their_unit() -> None:
    items = [
        ScoredItem(labels={}, judges={}, aggregate={}, content="a"),
        ScoredItem(labels={}, judges={}, aggregate={}, content="a", group="g"),
        ScoredItem(labels={}, judges={}, aggregate={}, content="b"),
    ]
    united = with_units(items)
    assert united[0].resampling_group == united[1].resampling_group
    assert united[2].resampling_group != united[0].resampling_group
    assert repeated_items(items) == 1
