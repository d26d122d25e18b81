"""Aggregate valid ratings of one dimension, per scale type, and measure agreement.

- ordinal: the median (a .5 value when an even number of judges split), spread = max - min;
- binary and nominal: the majority label; a tie is reported, and resolved deterministically
  by the label order of the rubric (for binary: false before true, the conservative answer);
- ranked: Borda count over the judges' top-k lists (k points for first place, 1 for k-th),
  ties broken by label order; top-1 agreement = share of judges whose first choice wins;
- free_text: no aggregate score (the judges' texts are returned as they are).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from judge.domain.rubric import Dimension, Tolerance


@dataclass(frozen=True)
class Aggregate:
    score: Any
    spread: float | None = None
    modal_share: float | None = None
    tie: bool | None = None
    tied_labels: list[Any] | None = None
    top1_agreement: float | None = None
    disagreement: bool = False


def _label_order(dim: Dimension, participants: tuple[str, ...]) -> list[Any]:
    scale = dim.scale
    if scale.type == "binary":
        return [False, True]
    if scale.type == "nominal":
        return list(scale.label_ids)
    if scale.type == "ranked":
        return list(scale.label_ids(participants))
    return []


def aggregate(
    dim: Dimension, ratings: list[Any], tolerance: Tolerance, participants: tuple[str, ...] = ()
) -> Aggregate:
    """Aggregate ``ratings`` (valid ones only; abstentions are never passed in)."""
    if not ratings:
        return Aggregate(score=None)
    kind = dim.scale.type
    if kind == "ordinal":
        median = statistics.median(ratings)
        score = int(median) if float(median).is_integer() else float(median)
        spread = float(max(ratings) - min(ratings))
        return Aggregate(score=score, spread=spread, disagreement=spread > tolerance.max_spread)
    if kind in ("binary", "nominal"):
        order = _label_order(dim, participants)
        counts = Counter(ratings)
        top = max(counts.values())
        tied = [label for label in order if counts.get(label) == top]
        share = top / len(ratings)
        return Aggregate(
            score=tied[0],
            modal_share=round(share, 4),
            tie=len(tied) > 1,
            tied_labels=tied if len(tied) > 1 else None,
            disagreement=len(tied) > 1 or share < tolerance.min_modal_share,
        )
    if kind == "ranked":
        k = getattr(dim.scale, "k", 3)
        order = _label_order(dim, participants)
        points: Counter[Any] = Counter()
        for ranking in ratings:
            for position, label in enumerate(ranking[:k]):
                points[label] += k - position
        position_of = {label: i for i, label in enumerate(order)}
        ranked = sorted(points, key=lambda lb: (-points[lb], position_of.get(lb, len(order))))
        final = ranked[:k]
        top1 = sum(1 for r in ratings if r and r[0] == final[0]) / len(ratings)
        return Aggregate(
            score=final,
            top1_agreement=round(top1, 4),
            disagreement=top1 < tolerance.min_top1_agreement,
        )
    return Aggregate(score=None)
