"""Reliability history and canaries over HTTP."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, get, post
from litestar.params import JSONBody
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from judge.api.meta_routes import RubricId
from judge.api.problems import ProblemError
from judge.api.routes import ID_PATTERN
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.item import check_stored
from judge.domain.wire import CanaryView, ReliabilityHistory
from judge.errors import RubricNotFound
from judge.services.canary import CanaryError

# 100, not the column's 200: its runs are labelled "canary:<name>" (a 200-character label)
CanaryName = Annotated[str, Field(min_length=1, max_length=100), AfterValidator(check_stored)]


class CanaryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    calibration_id: str = Field(pattern=ID_PATTERN, description="a completed run: the baseline")
    interval_s: float = Field(gt=0, le=366 * 86_400, description="seconds between canary runs")
    name: CanaryName | None = None


@get(
    "/v1/reliability/{rubric_id:str}",
    opt={"scope": "score"},
    summary="Calibration runs and canary drift history of a rubric",
    responses=responses({200: ReliabilityHistory}, 404),
)
async def get_reliability(request: Request[Any, Any, Any], rubric_id: RubricId) -> dict[str, Any]:
    state = api_state(request)
    try:
        state.runtime.registry.get(rubric_id)
    except RubricNotFound as exc:
        raise ProblemError(404, exc.message, field="rubric_id") from None
    return await state.runtime.canaries.history(rubric_id)


@post(
    "/v1/canaries",
    opt={"scope": "admin"},
    status_code=201,
    summary="Register a canary",
    responses=responses({201: CanaryView}),
)
async def create_canary(
    request: Request[Any, Any, Any], data: JSONBody[CanaryRequest]
) -> dict[str, Any]:
    try:
        canary = await api_state(request).runtime.canaries.register(
            baseline_run_id=data.calibration_id, interval_s=data.interval_s, name=data.name
        )
    except CanaryError as exc:
        raise ProblemError(422, exc.message, field="calibration_id") from None
    return canary.model_dump(mode="json")


@get(
    "/v1/canaries",
    opt={"scope": "admin"},
    summary="Registered canaries",
    responses=responses({200: list[CanaryView]}),
)
async def list_canaries(request: Request[Any, Any, Any]) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json") for c in await api_state(request).runtime.canaries.all()]
