"""Route handlers: parse, call a service, serialise. No business logic here."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any

from litestar import Request, Response, get, post
from litestar.params import JSONBody, Parameter
from pydantic import BaseModel, ConfigDict, Field

from judge.api.auth import principal
from judge.api.idempotency import digest, submit_once
from judge.api.problems import ProblemError
from judge.api.routes._params import (
    IDEMPOTENCY_DOC,
    PANEL_MAX,
    RUBRIC_ID_MAX,
    RUBRIC_VERSION_MAX,
    JobId,
    wait_limit,
)
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.wire import (
    CompletedScore,
    JobStatus,
)
from judge.services.idempotency import Submission
from judge.services.jobs import is_finished, job_view


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
) -> Response[dict[str, Any]]:
    state = api_state(request)
    who = principal(request)
    timeout = wait_limit(state, wait)

    async def submit(record: Submission | None) -> str:
        await state.quotas.check_queue(who.owner, 1)
        job = await state.runtime.jobs.submit_score(
            rubric_id=data.rubric,
            raw_item=data.item,
            panel_name=data.panel,
            version=data.rubric_version,
            owner=who.owner,
            idempotency=record,
        )
        await state.dispatcher.dispatch([job.id])
        return job.id

    waiting = state.quotas.waiter(who.owner) if timeout > 0 else contextlib.nullcontext()
    async with waiting:
        request_digest = digest(await request.body())  # the body as sent (already read)
        job_id, _ = await submit_once(state, request, "scores", request_digest, submit)
        if timeout > 0:
            await state.waiter.wait([job_id], timeout)
        job = await state.runtime.jobs.get_job(job_id)
    if job is None:  # only if the database lost it
        raise ProblemError(404, f"no score with id {job_id!r}", field="id")
    location = f"/v1/scores/{job.id}"
    finished = is_finished(job)
    return Response(
        job_view(job), status_code=200 if finished else 202, headers={"Location": location}
    )


@get(
    "/v1/scores/{job_id:str}",
    opt={"scope": "score"},
    summary="A score's status or result",
    responses=responses({200: CompletedScore | JobStatus}, 404),
)
async def get_score(request: Request[Any, Any, Any], job_id: JobId) -> dict[str, Any]:
    job = await api_state(request).runtime.jobs.get_job(job_id)
    if job is None or not principal(request).can_read(job.owner_key_id):
        raise ProblemError(404, f"no score with id {job_id!r}", field="id")
    return job_view(job)


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [create_score, get_score]
