"""Independent units per consensus level, and the minimum a level needs to count as measured.

Kappa over a scale says how well a judge separates its levels; a level that holds one or two
units contributes a cell the data cannot estimate (the judge's agreement on it is 0/1, 1/2...)
and makes the bootstrap interval depend on whether those units are drawn. Units, not items:
the checkpoints of one session (one ``group``) at the same consensus level count once for it.

``MIN_UNITS_PER_LEVEL`` is derived in ``evidence.level_minimum`` (evidence/TRUST.md, section 3):
with the gate's interval, the category kappa of a level (the level against the rest) is
covered at 92.6-97.0% from 4 units on (50 items, 1,000 calibrations per count; Monte Carlo
SE 0.7%), where 1-2 units give 77-92%; and from 5 units a bootstrap resample misses the level
with probability (1 - 5/50)^50 = 0.5% (about e^-c), well under the 2.5% tail, so the lower
end is no longer set by resamples where the level is absent (at 4: 1.5%, at 3: 4.5%). Five is
the smallest count with both.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from judge.reliability._missing import is_missing, label

#: independent units a consensus level needs (evidence/TRUST.md, section 3)
MIN_UNITS_PER_LEVEL = 5


def units_per_level(
    consensus: Sequence[Hashable | None],
    groups: Sequence[Hashable | None] | None = None,
    levels: Sequence[Hashable] = (),
) -> dict[Hashable, int]:
    """Per consensus level, the independent units (distinct groups; an item without a group is
    a unit of its own) with at least one item at that level. Items without a consensus are
    skipped. ``levels`` (e.g. the scale's) are listed too, with 0 when absent; order: ``levels``
    first, then the others as first seen. ValueError when ``groups`` differs in length."""
    if groups is not None and len(groups) != len(consensus):
        raise ValueError("consensus and groups must have the same length")
    seen: dict[Hashable, set[tuple[str, Hashable]]] = {label(v): set() for v in levels}
    for i, value in enumerate(consensus):
        if is_missing(value):
            continue
        group = None if groups is None else groups[i]
        unit: tuple[str, Hashable] = ("item", i) if group is None else ("group", group)
        seen.setdefault(label(value), set()).add(unit)
    return {level: len(units) for level, units in seen.items()}


@dataclass(frozen=True)
class LevelCheck:
    """Which consensus levels are present with fewer units than ``minimum`` (``short``), which
    scale levels never occur (``absent``: the calibration says nothing about them)."""

    counts: dict[Hashable, int]
    minimum: int
    short: tuple[Hashable, ...]
    absent: tuple[Hashable, ...]

    @property
    def passes(self) -> bool:
        return not self.short


def check_levels(
    consensus: Sequence[Hashable | None],
    groups: Sequence[Hashable | None] | None = None,
    levels: Sequence[Hashable] = (),
    minimum: int = MIN_UNITS_PER_LEVEL,
) -> LevelCheck:
    """Every level present in the consensus must hold at least ``minimum`` independent units;
    a level of the scale that never occurs is reported as absent (it is not measured, so the
    calibration cannot vouch for it, but it does not block the levels that are)."""
    counts = units_per_level(consensus, groups, levels)
    short = tuple(v for v, c in counts.items() if 0 < c < minimum)
    absent = tuple(v for v, c in counts.items() if c == 0)
    return LevelCheck(counts, minimum, short, absent)
