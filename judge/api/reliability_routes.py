"""Reliability history and canaries over HTTP."""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from pydantic import BaseModel, ConfigDict, Field

from judge.api.problems import ProblemError
from judge.api.state import api_state
from judge.errors import RubricNotFound
from judge.services.canary import CanaryError


class CanaryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    calibration_id: str = Field(min_length=1, description="a completed run: the baseline")
    interval_s: float = Field(gt=0, description="seconds between canary runs")
    name: str | None = Field(default=None, max_length=200)


@get(
    "/v1/reliability/{rubric_id:str}",
    opt={"scope": "score"},
    summary="Calibration runs and canary drift history of a rubric",
)
async def get_reliability(request: Request[Any, Any, Any], rubric_id: str) -> dict[str, Any]:
    state = api_state(request)
    try:
        state.runtime.registry.get(rubric_id)
    except RubricNotFound as exc:
        raise ProblemError(404, exc.message, field="rubric_id") from None
    return await state.runtime.canaries.history(rubric_id)


@post("/v1/canaries", opt={"scope": "admin"}, status_code=201, summary="Register a canary")
async def create_canary(request: Request[Any, Any, Any], data: CanaryRequest) -> dict[str, Any]:
    try:
        canary = await api_state(request).runtime.canaries.register(
            baseline_run_id=data.calibration_id, interval_s=data.interval_s, name=data.name
        )
    except CanaryError as exc:
        raise ProblemError(422, exc.message, field="calibration_id") from None
    return canary.model_dump(mode="json")


@get("/v1/canaries", opt={"scope": "admin"}, summary="Registered canaries")
async def list_canaries(request: Request[Any, Any, Any]) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json") for c in await api_state(request).runtime.canaries.all()]
