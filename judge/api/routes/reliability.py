"""Reliability history and canaries over HTTP."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, get
from litestar.params import Parameter

from judge.api.auth import principal
from judge.api.routes.rubrics import RubricId
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.wire import ReliabilityHistory


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
) -> ReliabilityHistory:
    state = api_state(request)
    page = state.runtime.settings.api.reliability_page
    return await state.runtime.canaries.history(
        principal(request), rubric_id, offset=offset, limit=min(limit or page, page)
    )


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [get_reliability]
