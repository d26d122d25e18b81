"""Copied expert columns, refused before a calibration runs (issue 23, evidence/TRUST.md 6).

Two expert names whose labels of a dimension are identical, or near-identical (exact agreement
above 0.98), on at least ``NEAR_IDENTICAL_MIN_ITEMS`` items both labelled are one annotator
twice (a copied file, one person under two names): counted as two, they would set the experts'
baseline to 1. Real expert pairs agree exactly on at most 0.88 of 50 items (Kumar et al.), so
such a run is refused with the field named. On fewer items identical columns can happen by
chance (a short binary set); there the gate counts the copy once instead (``_trust_gate``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judge.domain.rubric import Rubric
from judge.reliability import NEAR_IDENTICAL_MIN_ITEMS, distinct_annotators


@dataclass(frozen=True)
class CopiedColumn:
    """``copy`` repeats ``original`` on ``dimension``; ``first`` is the first item both
    labelled (by position) and ``reason`` the check's words."""

    copy: str
    original: str
    dimension: str
    first: int
    reason: str


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def copied_expert_column(
    rubric: Rubric, labels: Sequence[Mapping[str, Mapping[str, Any]]]
) -> CopiedColumn | None:
    """The first expert column (in the order experts appear, dimension by dimension) that
    repeats an earlier expert's on enough items, or None. ``labels``: per item, expert ->
    dimension id -> label."""
    experts = list(dict.fromkeys(e for item in labels for e in item))
    for dim in rubric.dimensions:
        columns = {e: [_hashable(item.get(e, {}).get(dim.id)) for item in labels] for e in experts}
        rated = {e: sum(v is not None for v in column) for e, column in columns.items()}
        for i, name in enumerate(experts):
            if rated[name] < NEAR_IDENTICAL_MIN_ITEMS:
                continue
            for other in experts[:i]:
                if rated[other] < NEAR_IDENTICAL_MIN_ITEMS:
                    continue
                check = distinct_annotators(columns[other], columns[name])
                if check.distinct or check.n < NEAR_IDENTICAL_MIN_ITEMS:
                    continue
                first = next(
                    n
                    for n, (x, y) in enumerate(zip(columns[other], columns[name], strict=True))
                    if x is not None and y is not None
                )
                return CopiedColumn(name, other, dim.id, first, check.reason or "")
    return None
