"""Rubrics: their summaries and each one normalised."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, get
from litestar.params import Parameter

from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.wire import RubricDetail, RubricSummary
from judge.services import rubrics

RubricId = Annotated[str, Parameter(min_length=1, max_length=100, description="a rubric id")]


@get(
    "/v1/rubrics",
    opt={"scope": "score"},
    summary="Available rubrics",
    responses=responses({200: list[RubricSummary]}),
)
async def list_rubrics(request: Request[Any, Any, Any]) -> list[RubricSummary]:
    return rubrics.summaries(api_state(request).runtime.registry)


@get(
    "/v1/rubrics/{rubric_id:str}",
    opt={"scope": "score"},
    summary="One rubric, normalised",
    responses=responses({200: RubricDetail}, 404),
)
async def get_rubric(request: Request[Any, Any, Any], rubric_id: RubricId) -> RubricDetail:
    return rubrics.detail(api_state(request).runtime.registry, rubric_id)


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [list_rubrics, get_rubric]
