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


def label_order(dim: Dimension, participants: tuple[str, ...]) -> list[Any]:
    """The dimension's labels in scale order (binary: no, yes; ranked: the item's candidates)."""
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
        order = label_order(dim, participants)
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
        order = label_order(dim, participants)
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


def weighted_median(ratings: list[float], weights: list[float]) -> float:
    """The weighted median: the value where the weight below and the weight above are each at
    most half the total. When the total splits exactly at a boundary between two values, their
    midpoint (so equal weights give the ordinary median, a .5 value on an even split)."""
    pairs = sorted((float(r), float(w)) for r, w in zip(ratings, weights, strict=True) if w > 0)
    if not pairs:
        raise ValueError("weighted_median needs a positive weight")
    half = sum(w for _, w in pairs) / 2
    below = 0.0
    for i, (value, weight) in enumerate(pairs):
        below += weight
        if abs(below - half) <= 1e-12 * max(1.0, half) and i + 1 < len(pairs):
            return (value + pairs[i + 1][0]) / 2
        if below > half:
            return value
    return pairs[-1][0]


def weighted_aggregate(
    dim: Dimension,
    ratings: list[Any],
    weights: list[float],
    tolerance: Tolerance,
    participants: tuple[str, ...] = (),
) -> Aggregate:
    """:func:`aggregate` with a weight per rating (the judge's calibrated reliability):
    weighted median (ordinal), weighted vote (binary, nominal; ``modal_share`` is the winner's
    share of the weight, ties resolved by label order as in the plain vote) and weighted Borda
    (ranked; ``top1_agreement`` is the weight share of judges whose first choice wins).
    ``spread`` stays the range of all valid ratings. Ratings with zero weight do not vote; when
    no rating has a positive weight, the plain aggregate is returned."""
    if len(weights) != len(ratings):
        raise ValueError("one weight per rating")
    if not any(w > 0 for w in weights):
        return aggregate(dim, ratings, tolerance, participants)
    kind = dim.scale.type
    total = sum(w for w in weights if w > 0)
    if kind == "ordinal":
        median = weighted_median(ratings, weights)
        score = int(median) if float(median).is_integer() else float(median)
        spread = float(max(ratings) - min(ratings))
        return Aggregate(score=score, spread=spread, disagreement=spread > tolerance.max_spread)
    if kind in ("binary", "nominal"):
        order = label_order(dim, participants)
        mass: dict[Any, float] = {}
        for label, weight in zip(ratings, weights, strict=True):
            if weight > 0:
                mass[label] = mass.get(label, 0.0) + weight
        top = max(mass.values())
        tied = [label for label in order if label in mass and abs(mass[label] - top) <= 1e-12]
        share = top / total
        return Aggregate(
            score=tied[0],
            modal_share=round(share, 4),
            tie=len(tied) > 1,
            tied_labels=tied if len(tied) > 1 else None,
            disagreement=len(tied) > 1 or share < tolerance.min_modal_share,
        )
    if kind == "ranked":
        k = getattr(dim.scale, "k", 3)
        order = label_order(dim, participants)
        points: dict[Any, float] = {}
        for ranking, weight in zip(ratings, weights, strict=True):
            for position, label in enumerate(ranking[:k]):
                points[label] = points.get(label, 0.0) + weight * (k - position)
        position_of = {label: i for i, label in enumerate(order)}
        ranked = sorted(
            (lb for lb in points if points[lb] > 0),
            key=lambda lb: (-points[lb], position_of.get(lb, len(order))),
        )
        final = ranked[:k]
        if not final:
            return Aggregate(score=None)
        top1 = sum(w for r, w in zip(ratings, weights, strict=True) if r and r[0] == final[0])
        return Aggregate(
            score=final,
            top1_agreement=round(top1 / total, 4),
            disagreement=top1 / total < tolerance.min_top1_agreement,
        )
    return Aggregate(score=None)
