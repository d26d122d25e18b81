"""Canaries: calibration sets re-scored on a schedule to detect judge drift."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, get, post
from litestar.params import JSONBody
from pydantic import AfterValidator, BaseModel, Field

from judge.api.auth import principal
from judge.api.problems import ProblemError
from judge.api.routes._params import ID_PATTERN, JSON_NUMBER, REQUEST_CONFIG
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.item import check_stored
from judge.domain.wire import CanaryView

CanaryName = Annotated[str, Field(min_length=1, max_length=100), AfterValidator(check_stored)]


class CanaryRequest(BaseModel):
    model_config = REQUEST_CONFIG

    calibration_id: str = Field(pattern=ID_PATTERN, description="a completed run: the baseline")
    interval_s: Annotated[float, Field(gt=0, le=366 * 86_400), JSON_NUMBER] = Field(
        description="seconds between canary runs"
    )
    name: CanaryName | None = None


@post(
    "/v1/canaries",
    opt={"scope": "calibrate"},
    status_code=201,
    summary="Register a canary",
    responses=responses({201: CanaryView}, 404, 413),
)
async def create_canary(
    request: Request[Any, Any, Any], data: JSONBody[CanaryRequest]
) -> CanaryView:
    state = api_state(request)
    floor = state.runtime.settings.api.min_canary_interval_s
    if data.interval_s < floor:
        raise ProblemError(
            422,
            f"a canary runs at most every {floor:g} s; got {data.interval_s:g}",
            field="interval_s",
        )
    return await state.runtime.canaries.register(
        principal(request),
        baseline_run_id=data.calibration_id,
        interval_s=data.interval_s,
        name=data.name,
    )


@get(
    "/v1/canaries",
    opt={"scope": "calibrate"},
    summary="Registered canaries (a key's own; admin: all)",
    responses=responses({200: list[CanaryView]}),
)
async def list_canaries(request: Request[Any, Any, Any]) -> list[CanaryView]:
    return await api_state(request).runtime.canaries.listed(principal(request))


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [create_canary, list_canaries]
