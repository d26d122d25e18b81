"""Rubrics: their summaries and each one normalised."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, get
from litestar.params import Parameter

from judge.api.problems import ProblemError
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.wire import RubricDetail, RubricSummary
from judge.errors import RubricNotFound

RubricId = Annotated[str, Parameter(min_length=1, max_length=100, description="a rubric id")]


def _summary(rubric: Any) -> dict[str, Any]:
    return {
        "id": rubric.id,
        "version": rubric.version,
        "name": rubric.name,
        "unit": rubric.unit,
        "setting": rubric.setting,
        "hash": rubric.content_hash,
        "dimensions": [d.id for d in rubric.dimensions],
    }


@get(
    "/v1/rubrics",
    opt={"scope": "score"},
    summary="Available rubrics",
    responses=responses({200: list[RubricSummary]}),
)
async def list_rubrics(request: Request[Any, Any, Any]) -> list[dict[str, Any]]:
    return [_summary(r) for r in api_state(request).runtime.registry.all()]


@get(
    "/v1/rubrics/{rubric_id:str}",
    opt={"scope": "score"},
    summary="One rubric, normalised",
    responses=responses({200: RubricDetail}, 404),
)
async def get_rubric(request: Request[Any, Any, Any], rubric_id: RubricId) -> dict[str, Any]:
    try:
        rubric = api_state(request).runtime.registry.get(rubric_id)
    except RubricNotFound as exc:
        raise ProblemError(404, exc.message, field="rubric_id") from None
    data: dict[str, Any] = rubric.model_dump(mode="json")
    data["hash"] = rubric.content_hash
    return data


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [list_rubrics, get_rubric]
