"""``GET /v1/batches/{id}/escalations``: the items of a batch a person must see (issue 27).

An item is escalated (``escalate: human`` in its result) when its rubric has a guarantee
policy and some dimension is not guaranteed; the listing gives each such item with its
conversation (for the labelling workflow) and, per unguaranteed dimension, why.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from empathy_judge_client.guarantees import (
    GuaranteeStatus,
    NotGuaranteedReason,
    PredictionSet,
    ScoreInterval,
)
from empathy_judge_client.result import ScoreResult


class EscalatedDimension(BaseModel):
    """One dimension that is not guaranteed: the panel's score, why, and its interval."""

    score: Any = None
    reason: NotGuaranteedReason | None
    status: GuaranteeStatus
    confidence: float | None = None
    threshold: float | None = None
    interval: ScoreInterval | None = None
    prediction_set: PredictionSet | None = None


class Escalation(BaseModel):
    """One item a person must see: its line in the batch, its id, the conversation."""

    line: int | None
    job_id: str
    id: str | None
    item: dict[str, Any]
    dimensions: dict[str, EscalatedDimension]


class EscalationsView(BaseModel):
    """The batch's escalated items in submission order; ``completed`` counts the items
    whose result was examined (queued, running and failed items are not listed)."""

    batch_id: str
    completed: int
    escalated: int
    items: list[Escalation]


def escalated_dimensions(result: ScoreResult) -> dict[str, EscalatedDimension]:
    """The dimensions of ``result`` whose guarantee is not given."""
    out: dict[str, EscalatedDimension] = {}
    for dim_id, dim in result.dimensions.items():
        g = dim.guarantee
        if g is None or g.guaranteed:
            continue
        out[dim_id] = EscalatedDimension(
            score=dim.score,
            reason=g.reason,
            status=g.status,
            confidence=g.confidence,
            threshold=g.threshold,
            interval=dim.interval,
            prediction_set=dim.prediction_set,
        )
    return out
