"""The items of a calibration run where the panel and the experts disagree most, per
dimension: for the viewer's calibration page, so a person can read what the panel got wrong."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judge.calibration._scored import ScoredItem


@dataclass(frozen=True)
class Disagreement:
    """One item and dimension: the panel's score, each expert's and each judge's label, and
    the gap (ordinal: distance from the experts' median; labels: share of experts the panel
    contradicts)."""

    index: int
    dimension: str
    panel: Any
    experts: dict[str, Any]
    judges: dict[str, Any]
    gap: float


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _gap(panel: Any, experts: list[Any]) -> float:
    if _numeric(panel) and all(_numeric(e) for e in experts):
        return abs(float(panel) - float(statistics.median(experts)))
    return sum(1 for e in experts if e != panel) / len(experts)


def largest_disagreements(items: Sequence[ScoredItem], limit: int = 20) -> list[Disagreement]:
    """Up to ``limit`` (item, dimension) pairs with a gap, largest first (then by item);
    dimensions the panel gave no score are left out (the report counts them as coverage)."""
    found = []
    for index, item in enumerate(items):
        for dim_id, panel in item.aggregate.items():
            experts = {e: labels[dim_id] for e, labels in item.labels.items() if dim_id in labels}
            if panel is None or not experts:
                continue
            gap = _gap(panel, list(experts.values()))
            if gap > 0:
                judges = {m: ratings.get(dim_id) for m, ratings in item.judges.items()}
                found.append(Disagreement(index, dim_id, panel, experts, judges, gap))
    found.sort(key=lambda d: (-d.gap, d.index, d.dimension))
    return found[:limit]
