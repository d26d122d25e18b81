"""Self-consistency: combine one judge's k independent samples into its rating.

Per dimension the judge's rating is the aggregate of its valid samples, by the same rule as
across judges except that an ordinal median of an even split takes the lower level (a judge's
rating stays on the scale): majority for binary/nominal (ties by label order), Borda for
ranked. The samples and their spread are kept; samples that disagree beyond the rubric's
tolerance (the panel's disagreement rule applied to one judge's samples) make the judge
*unstable* on that dimension. A dimension where every sample abstained abstains with the
first sample's reason.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from judge.domain.judgment_schema import ParsedRating
from judge.domain.rubric import Dimension, Tolerance
from judge.panel.aggregate import aggregate
from judge.panel.judge_call import JudgeOutcome


@dataclass(frozen=True)
class SampleSummary:
    """One judge's samples on one dimension."""

    values: list[Any]
    spread: float | None  # ordinal: max - min; otherwise 1 - the modal share (0 = identical)
    unstable: bool


@dataclass(frozen=True)
class SampledOutcome:
    """A judge's combined outcome plus, per dimension, its samples."""

    outcome: JudgeOutcome
    samples: dict[str, SampleSummary] = field(default_factory=dict)


def _combined(dim: Dimension, values: list[Any], tolerance: Tolerance) -> tuple[Any, Any]:
    agg = aggregate(dim, values, tolerance)
    if dim.scale.type == "ordinal":
        return statistics.median_low(values), agg
    return agg.score, agg


def _spread(dim: Dimension, values: list[Any], agg: Any) -> float | None:
    if dim.scale.type == "ordinal":
        return float(max(values) - min(values))
    if dim.scale.type in ("binary", "nominal"):
        return round(1 - float(agg.modal_share), 4)
    if dim.scale.type == "ranked":
        return round(1 - float(agg.top1_agreement), 4)
    return None


def combine_samples(
    dimensions: list[Dimension], parts: list[JudgeOutcome], tolerance: Tolerance
) -> SampledOutcome:
    """One outcome from ``parts`` (one per sample, in sample order)."""
    first = parts[0]
    if len(parts) == 1:
        return SampledOutcome(first)
    ratings: dict[str, ParsedRating] = {}
    abstentions = {}
    summaries: dict[str, SampleSummary] = {}
    for dim in dimensions:
        rated = [p.ratings[dim.id] for p in parts if dim.id in p.ratings]
        if not rated:
            abstentions[dim.id] = next(
                p.abstentions[dim.id] for p in parts if dim.id in p.abstentions
            )
            continue
        values = [r.rating for r in rated]
        if dim.scale.type == "free_text":
            ratings[dim.id] = rated[0]
            summaries[dim.id] = SampleSummary(values, None, False)
            continue
        value, agg = _combined(dim, values, tolerance)
        rationale = next((r.rationale for r in rated if r.rating == value), rated[0].rationale)
        ratings[dim.id] = ParsedRating(rating=value, rationale=rationale)
        summaries[dim.id] = SampleSummary(values, _spread(dim, values, agg), agg.disagreement)
    resolved = next((p.resolved_model for p in parts if p.resolved_model), None)
    outcome = JudgeOutcome(
        first.model, resolved, ratings, abstentions, [c for p in parts for c in p.calls]
    )
    return SampledOutcome(outcome, summaries)
