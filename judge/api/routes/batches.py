"""Batches: submit (JSON or JSON Lines), progress, results in submission order."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from litestar import Request, Response, get, post
from litestar.params import Parameter
from litestar.response import Stream
from pydantic import BaseModel, ConfigDict, Field

from judge.api.auth import Principal, principal
from judge.api.idempotency import digest, submit_once
from judge.api.openapi_bodies import BatchOperation
from judge.api.problems import ProblemError
from judge.api.routes._params import (
    IDEMPOTENCY_DOC,
    PANEL_MAX,
    RUBRIC_ID_MAX,
    JobId,
)
from judge.api.schemas import responses
from judge.api.state import ApiState, api_state
from judge.domain.jsonl import parse_jsonl
from judge.domain.wire import (
    NDJSON,
    BatchView,
    CompletedLine,
    JobStatusLine,
)
from judge.services.idempotency import Submission


class BatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rubric: str = Field(min_length=1, max_length=RUBRIC_ID_MAX)
    panel: str | None = Field(default=None, max_length=PANEL_MAX)
    items: list[Any]


@post(
    "/v1/batches",
    opt={"scope": "batch"},
    status_code=202,
    summary="Submit a batch (JSON body, or JSON Lines with ?rubric=ID)",
    description=(
        'Body: `{"rubric", "panel"?, "items": [...]}` as JSON, or one item per line '
        "with `Content-Type: application/x-ndjson` and `?rubric=ID`. A line or item that "
        "cannot be scored is rejected with its line number; the rest is scored. " + IDEMPOTENCY_DOC
    ),
    responses=responses({202: BatchView}, 404, 413, 429),
    operation_class=BatchOperation,
)
async def create_batch(
    request: Request[Any, Any, Any],
    rubric: Annotated[str | None, Parameter(min_length=1, max_length=RUBRIC_ID_MAX)] = None,
    panel: Annotated[str | None, Parameter(min_length=1, max_length=PANEL_MAX)] = None,
) -> Response[dict[str, Any]]:
    state = api_state(request)
    body = await request.body()
    content_type = request.headers.get("content-type", "").split(";")[0].strip()
    if content_type in (NDJSON, "application/jsonl", "application/x-jsonlines"):
        if not rubric:
            raise ProblemError(422, "a JSON Lines batch needs ?rubric=ID", field="query.rubric")
        lines = parse_jsonl(body)
        rubric_id, panel_name = rubric, panel
    else:
        try:
            payload = BatchRequest.model_validate_json(body)
        except ValueError as exc:
            raise _body_problem(exc) from None
        lines = list(enumerate(payload.items, start=1))
        rubric_id, panel_name = payload.rubric, payload.panel
    limit = state.runtime.settings.api.max_batch_items
    if len(lines) > limit:
        raise ProblemError(413, f"a batch holds at most {limit} items; got {len(lines)}")
    if not lines:
        raise ProblemError(422, "the batch has no items", field="items")
    who = principal(request)

    async def submit(record: Submission | None) -> str:
        await state.quotas.check_queue(who.owner, len(lines))
        batch, job_ids = await state.runtime.jobs.submit_batch(
            rubric_id=rubric_id,
            panel_name=panel_name,
            lines=lines,
            owner=who.owner,
            idempotency=record,
        )
        await state.dispatcher.dispatch(job_ids)
        return batch.id

    request_digest = digest(content_type, rubric_id, panel_name, body)
    batch_id, _ = await submit_once(state, request, "batches", request_digest, submit)
    return Response(
        await _batch_view(state, batch_id, who),
        status_code=202,
        headers={"Location": f"/v1/batches/{batch_id}"},
    )


def _body_problem(exc: ValueError) -> ProblemError:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or "body"
        if first.get("type") == "json_invalid":
            return ProblemError(422, f"the body is not valid JSON: {first['msg']}", field="body")
        return ProblemError(422, str(first.get("msg")), field=field)
    return ProblemError(422, str(exc), field="body")


async def _batch_view(state: ApiState, batch_id: str, who: Principal) -> dict[str, Any]:
    found = await state.runtime.batches.view(batch_id)
    if found is None or not who.can_read(found.owner_key_id):
        raise ProblemError(404, f"no batch with id {batch_id!r}", field="id")
    return found.view


@get(
    "/v1/batches/{batch_id:str}",
    opt={"scope": "batch"},
    summary="Batch progress",
    responses=responses({200: BatchView}, 404),
)
async def get_batch(request: Request[Any, Any, Any], batch_id: JobId) -> dict[str, Any]:
    return await _batch_view(api_state(request), batch_id, principal(request))


@get(
    "/v1/batches/{batch_id:str}/results",
    opt={"scope": "batch"},
    summary="Batch results as JSON Lines, in submission order",
    description="One JSON object per line (the schema below is one line's).",
    responses=responses({200: CompletedLine | JobStatusLine}, 404, media_type=NDJSON),
)
async def get_batch_results(request: Request[Any, Any, Any], batch_id: JobId) -> Stream:
    state = api_state(request)
    await _batch_view(state, batch_id, principal(request))  # 404 for another key's batch
    page = state.runtime.settings.api.results_page

    async def lines() -> AsyncIterator[bytes]:
        async for views in state.runtime.batches.result_pages(batch_id, page):
            for view in views:
                # ASCII-escaped: no raw U+2028/U+2029/U+0085 that line splitters
                # (str.splitlines, httpx's iter_lines) would take for line breaks
                yield (json.dumps(view) + "\n").encode()

    return Stream(lines(), media_type=NDJSON)


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [create_batch, get_batch, get_batch_results]
