"""Rubrics as the API lists and shows them."""

from __future__ import annotations

from judge.domain.rubric import Rubric
from judge.domain.wire import RubricDetail, RubricSummary
from judge.rubrics import RubricRegistry


def summaries(registry: RubricRegistry) -> list[RubricSummary]:
    return [_summary(r) for r in registry.all()]


def _summary(rubric: Rubric) -> RubricSummary:
    return RubricSummary(
        id=rubric.id,
        version=rubric.version,
        name=rubric.name,
        unit=rubric.unit,
        setting=rubric.setting,
        hash=rubric.content_hash,
        dimensions=[d.id for d in rubric.dimensions],
    )


def detail(registry: RubricRegistry, rubric_id: str) -> RubricDetail:
    """One rubric, normalised, with its hash (``rubric_id`` comes from the path)."""
    rubric = registry.get(rubric_id, field="rubric_id")
    detail = rubric.model_dump(mode="json") | {"hash": rubric.content_hash}
    return RubricDetail.model_validate(detail)
