"""Reliability history and canaries over HTTP."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, get, post
from litestar.params import JSONBody, Parameter
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from judge.api.auth import Principal, principal
from judge.api.meta_routes import RubricId
from judge.api.problems import ProblemError
from judge.api.routes import ID_PATTERN
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.item import check_stored
from judge.domain.wire import CanaryView, ReliabilityHistory
from judge.errors import RubricNotFound
from judge.services.calibration import CalibrationNotFound
from judge.services.canary import ALL, CanaryError, Owners

# 100, not the column's 200: its runs are labelled "canary:<name>" (a 200-character label)
CanaryName = Annotated[str, Field(min_length=1, max_length=100), AfterValidator(check_stored)]


class CanaryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    calibration_id: str = Field(pattern=ID_PATTERN, description="a completed run: the baseline")
    interval_s: float = Field(gt=0, le=366 * 86_400, description="seconds between canary runs")
    name: CanaryName | None = None


def _owners(who: Principal) -> Owners:
    return ALL if who.admin else (who.owner,)


@get(
    "/v1/reliability/{rubric_id:str}",
    opt={"scope": "score"},
    summary="Calibration runs and canary drift history of a rubric (one page)",
    description="Runs oldest first, `limit` per page; `next_offset` is null on the last page. "
    "A key sees its own runs and canaries (`admin`: all).",
    responses=responses({200: ReliabilityHistory}, 404),
)
async def get_reliability(
    request: Request[Any, Any, Any],
    rubric_id: RubricId,
    offset: Annotated[int, Parameter(ge=0, le=10_000_000, description="runs to skip")] = 0,
    limit: Annotated[int | None, Parameter(ge=1, description="runs per page")] = None,
) -> dict[str, Any]:
    state = api_state(request)
    try:
        state.runtime.registry.get(rubric_id)
    except RubricNotFound as exc:
        raise ProblemError(404, exc.message, field="rubric_id") from None
    page = state.runtime.settings.api.reliability_page
    return await state.runtime.canaries.history(
        rubric_id,
        owners=_owners(principal(request)),
        offset=offset,
        limit=min(limit or page, page),
    )


@post(
    "/v1/canaries",
    opt={"scope": "calibrate"},
    status_code=201,
    summary="Register a canary",
    responses=responses({201: CanaryView}),
)
async def create_canary(
    request: Request[Any, Any, Any], data: JSONBody[CanaryRequest]
) -> dict[str, Any]:
    state = api_state(request)
    who = principal(request)
    floor = state.runtime.settings.api.min_canary_interval_s
    if data.interval_s < floor:
        raise ProblemError(
            422,
            f"a canary runs at most every {floor:g} s; got {data.interval_s:g}",
            field="interval_s",
        )
    try:
        owner = await state.runtime.calibrations.owner_of(data.calibration_id)
    except CalibrationNotFound:
        owner = None
        readable = False
    else:
        readable = who.can_read(owner)
    if not readable:
        raise ProblemError(
            422,
            f"calibration run {data.calibration_id!r} does not exist or has not completed",
            field="calibration_id",
        )
    try:
        canary = await state.runtime.canaries.register(
            baseline_run_id=data.calibration_id,
            interval_s=data.interval_s,
            name=data.name,
            owner=who.owner,
        )
    except CanaryError as exc:
        raise ProblemError(422, exc.message, field="calibration_id") from None
    return canary.model_dump(mode="json")


@get(
    "/v1/canaries",
    opt={"scope": "calibrate"},
    summary="Registered canaries (a key's own; admin: all)",
    responses=responses({200: list[CanaryView]}),
)
async def list_canaries(request: Request[Any, Any, Any]) -> list[dict[str, Any]]:
    canaries = await api_state(request).runtime.canaries.all(owners=_owners(principal(request)))
    return [c.model_dump(mode="json") for c in canaries]
