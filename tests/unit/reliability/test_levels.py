"""Independent units per consensus level."""

from __future__ import annotations

import pytest

from judge.reliability import check_levels, units_per_level


def test_units_count_distinct_groups_and_lone_items() -> None:
    consensus = [1, 1, 1, 2, 2, 3, None]
    groups = ["a", "a", "b", None, None, "a", "c"]
    assert units_per_level(consensus, groups) == {1: 2, 2: 2, 3: 1}
    assert units_per_level(consensus) == {1: 3, 2: 2, 3: 1}
    assert units_per_level(consensus, groups, levels=[1, 2, 3, 4]) == {1: 2, 2: 2, 3: 1, 4: 0}


def test_check_levels_reports_short_and_absent_levels() -> None:
    consensus = [0] * 58 + [2, 2]  # the case on EPITOME's 0-2 scale
    check = check_levels(consensus, levels=[0, 1, 2], minimum=8)
    assert check.short == (2,)
    assert check.absent == (1,)
    assert not check.passes
    assert check_levels([0] * 10 + [2] * 8, levels=[0, 1, 2], minimum=8).passes


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError, match="same length"):
        units_per_level([1, 2], ["a"])
