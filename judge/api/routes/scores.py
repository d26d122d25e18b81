"""Scores: submit one item (optionally waiting for the result) and read it back."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response, get, post
from litestar.params import JSONBody, Parameter
from pydantic import BaseModel, ConfigDict, Field

from judge.api.auth import principal
from judge.api.idempotency import digest, idempotency_key
from judge.api.routes._params import (
    IDEMPOTENCY_DOC,
    PANEL_MAX,
    RUBRIC_ID_MAX,
    RUBRIC_VERSION_MAX,
    JobId,
)
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.wire import (
    CompletedScore,
    JobStatus,
)
from judge.services.scores import ScoreView, is_final


class ScoreRequest(BaseModel):
    """Score one item (docs/DESIGN.md section 3 for the item shape)."""

    model_config = ConfigDict(extra="forbid")

    rubric: str = Field(
        min_length=1, max_length=RUBRIC_ID_MAX, description="rubric id, e.g. epitome"
    )
    rubric_version: str | None = Field(default=None, max_length=RUBRIC_VERSION_MAX)
    panel: str | None = Field(
        default=None, max_length=PANEL_MAX, description="a configured panel name"
    )
    item: dict[str, Any]


@post(
    "/v1/scores",
    opt={"scope": "score"},
    status_code=200,
    summary="Score one item",
    description=IDEMPOTENCY_DOC,
    responses=responses({200: CompletedScore | JobStatus, 202: JobStatus}, 404, 413, 429),
)
async def create_score(
    request: Request[Any, Any, Any],
    data: JSONBody[ScoreRequest],
    wait: Annotated[
        float | None, Parameter(ge=0, description="seconds to wait for the result")
    ] = None,
) -> Response[ScoreView]:
    state = api_state(request)
    view = await state.runtime.scores.submit(
        principal(request),
        state.intake(request),
        rubric_id=data.rubric,
        raw_item=data.item,
        panel_name=data.panel,
        version=data.rubric_version,
        wait=wait,
        # the body as sent (already read)
        idempotency=idempotency_key(request, digest(await request.body())),
    )
    return Response(
        view,
        status_code=200 if is_final(view) else 202,
        headers={"Location": f"/v1/scores/{view.id}"},
    )


@get(
    "/v1/scores/{job_id:str}",
    opt={"scope": "score"},
    summary="A score's status or result",
    responses=responses({200: CompletedScore | JobStatus}, 404),
)
async def get_score(request: Request[Any, Any, Any], job_id: JobId) -> ScoreView:
    return await api_state(request).runtime.scores.get(principal(request), job_id)


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [create_score, get_score]
