"""Batches: submit (JSON or JSON Lines), progress, results in submission order."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import anyio.to_thread
from litestar import Request, Response, get, post
from litestar.params import Parameter
from litestar.response import Stream
from pydantic import BaseModel, Field, ValidationError

from judge.api.auth import principal
from judge.api.idempotency import digest, idempotency_key
from judge.api.openapi_bodies import BatchOperation
from judge.api.problems import ProblemError
from judge.api.routes._params import (
    IDEMPOTENCY_DOC,
    PANEL_MAX,
    REQUEST_CONFIG,
    RUBRIC_ID_MAX,
    BatchStatus,
    ItemList,
    JobId,
    ListLimit,
    ListOffset,
    PanelFilter,
    RubricFilter,
)
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.batch_summary import BatchSummary
from judge.domain.escalations import EscalationsView
from judge.domain.jsonl import parse_jsonl
from judge.domain.listing import ListFilter
from judge.domain.wire import (
    NDJSON,
    BatchPage,
    BatchView,
    CompletedLine,
    JobStatusLine,
    RejectionPage,
    wire_json,
)


class BatchRequest(BaseModel):
    model_config = REQUEST_CONFIG

    rubric: str = Field(min_length=1, max_length=RUBRIC_ID_MAX)
    panel: str | None = Field(default=None, max_length=PANEL_MAX)
    items: ItemList
    mode: Literal["interactive", "economy"] = Field(
        default="interactive",
        description="economy: the calls go through the providers' batch APIs at about half "
        "the price (OpenAI-compatible judges only); results take up to their completion window",
    )


@post(
    "/v1/batches",
    opt={"scope": "batch"},
    status_code=202,
    summary="Submit a batch (JSON body, or JSON Lines with ?rubric=ID)",
    description=(
        'Body: `{"rubric", "panel"?, "mode"?, "items": [...]}` as JSON, or one item per line '
        "with `Content-Type: application/x-ndjson` and `?rubric=ID` (`&mode=economy`). A "
        "line or item that cannot be scored is rejected with its line number; the rest is "
        "scored. `?rubric`, `?panel` and `?mode` belong to the JSON Lines form (with a JSON "
        "body they are a 422). `mode: economy` sends the calls through the providers' batch "
        "APIs (about half the price; OpenAI-compatible judges only, else a 422 naming "
        "`mode`). " + IDEMPOTENCY_DOC
    ),
    responses=responses({202: BatchView}, 404, 413, 429),
    operation_class=BatchOperation,
)
async def create_batch(
    request: Request[Any, Any, Any],
    rubric: Annotated[str | None, Parameter(min_length=1, max_length=RUBRIC_ID_MAX)] = None,
    panel: Annotated[str | None, Parameter(min_length=1, max_length=PANEL_MAX)] = None,
    mode: Annotated[Literal["interactive", "economy"] | None, Parameter()] = None,
) -> Response[BatchView]:
    state = api_state(request)
    body = await request.body()
    # media types are case-insensitive (RFC 9110 section 8.3.1)
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type in (NDJSON, "application/jsonl", "application/x-jsonlines"):
        if not rubric:
            raise ProblemError(422, "a JSON Lines batch needs ?rubric=ID", field="query.rubric")
        # off the event loop: a 100,000-line body takes seconds to read
        lines = await anyio.to_thread.run_sync(parse_jsonl, body)
        rubric_id, panel_name, chosen = rubric, panel, mode or "interactive"
    else:
        if rubric or panel or mode:
            where = "query.rubric" if rubric else "query.panel" if panel else "query.mode"
            detail = (
                "?rubric=, ?panel= and ?mode= are for JSON Lines bodies: a JSON body names them"
            )
            raise ProblemError(422, detail, field=where)
        payload = await anyio.to_thread.run_sync(_batch_request, body)
        lines = list(enumerate(payload.items, start=1))
        rubric_id, panel_name, chosen = payload.rubric, payload.panel, payload.mode
    view = await state.runtime.batches.submit(
        principal(request),
        state.intake(request),
        rubric_id=rubric_id,
        panel_name=panel_name,
        lines=lines,
        idempotency=idempotency_key(
            request,
            # the mode is part of the request only when it is not the default (keys stored
            # before modes existed keep their digest)
            digest(content_type, rubric_id, panel_name, body, *_mode_part(chosen)),
        ),
        mode=chosen,
    )
    return Response(view, status_code=202, headers={"Location": f"/v1/batches/{view.id}"})


def _mode_part(mode: str) -> tuple[str, ...]:
    return () if mode == "interactive" else (mode,)


def _batch_request(body: bytes) -> BatchRequest:
    """The JSON body (read by hand: the same route takes JSON Lines); a 422 naming the field
    that does not validate."""
    try:
        return BatchRequest.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or "body"
        if first.get("type") == "json_invalid":
            detail = f"the body is not valid JSON: {first['msg']}"
            raise ProblemError(422, detail, field="body") from None
        raise ProblemError(422, str(first.get("msg")), field=field) from None
    except ValueError as exc:
        raise ProblemError(422, str(exc), field="body") from None


@get(
    "/v1/batches/{batch_id:str}",
    opt={"scope": "batch"},
    summary="Batch progress",
    responses=responses({200: BatchView}, 404),
)
async def get_batch(request: Request[Any, Any, Any], batch_id: JobId) -> BatchView:
    return await api_state(request).runtime.batches.view(principal(request), batch_id)


@get(
    "/v1/batches/{batch_id:str}/results",
    opt={"scope": "batch"},
    summary="Batch results as JSON Lines, in submission order",
    description="One JSON object per line (the schema below is one line's).",
    responses=responses({200: CompletedLine | JobStatusLine}, 404, media_type=NDJSON),
)
async def get_batch_results(request: Request[Any, Any, Any], batch_id: JobId) -> Stream:
    state = api_state(request)
    page = state.runtime.settings.api.results_page
    pages = await state.runtime.batches.results(principal(request), batch_id, page)

    async def lines() -> AsyncIterator[bytes]:
        async for views in pages:
            for view in views:
                # ASCII-escaped: no raw U+2028/U+2029/U+0085 that line splitters
                # (str.splitlines, httpx's iter_lines) would take for line breaks
                yield (json.dumps(wire_json(view)) + "\n").encode()

    return Stream(lines(), media_type=NDJSON)


@get(
    "/v1/batches/{batch_id:str}/rejections",
    opt={"scope": "batch"},
    summary="A batch's rejected lines, a page at a time",
    responses=responses({200: RejectionPage}, 404),
)
async def get_batch_rejections(
    request: Request[Any, Any, Any],
    batch_id: JobId,
    offset: Annotated[int, Parameter(ge=0, le=10_000_000, description="rejections to skip")] = 0,
    limit: Annotated[int, Parameter(ge=1, le=1_000, description="rejections per page")] = 100,
) -> RejectionPage:
    return await api_state(request).runtime.batches.rejections(
        principal(request), batch_id, offset=offset, limit=limit
    )


@get(
    "/v1/batches/{batch_id:str}/escalations",
    opt={"scope": "batch"},
    summary="The batch's items a person must see",
    description="Completed items whose result says ``escalate: human`` (a dimension not "
    "guaranteed under the rubric's guarantee policy), with the conversation and, per "
    "dimension, why.",
    responses=responses({200: EscalationsView}, 404),
)
async def get_batch_escalations(
    request: Request[Any, Any, Any], batch_id: JobId
) -> EscalationsView:
    state = api_state(request)
    page = state.runtime.settings.api.results_page
    return await state.runtime.batches.escalations(principal(request), batch_id, page)


@get(
    "/v1/batches",
    opt={"scope": "batch"},
    summary="The caller's batches, newest first (admin: every key's)",
    responses=responses({200: BatchPage}),
)
async def list_batches(
    request: Request[Any, Any, Any],
    rubric: RubricFilter = None,
    panel: PanelFilter = None,
    status: BatchStatus = None,
    offset: ListOffset = 0,
    limit: ListLimit = 50,
) -> BatchPage:
    where = ListFilter(rubric=rubric, panel=panel, status=status, offset=offset, limit=limit)
    return await api_state(request).runtime.batches.listed(principal(request), where)


@post(
    "/v1/batches/{batch_id:str}/cancel",
    opt={"scope": "batch"},
    status_code=200,
    summary="Cancel a batch: its queued items fail as `cancelled`",
    description="Items already running finish and completed ones are kept; the batch is "
    "then `completed`, its cancelled items counted as `failed`. Cancelling again is harmless.",
    responses=responses({200: BatchView}, 404),
)
async def cancel_batch(request: Request[Any, Any, Any], batch_id: JobId) -> BatchView:
    return await api_state(request).runtime.batches.cancel(principal(request), batch_id)


@get(
    "/v1/batches/{batch_id:str}/summary",
    opt={"scope": "batch"},
    summary="Per dimension: score distribution, flag shares and top reasons",
    responses=responses({200: BatchSummary}, 404),
)
async def get_batch_summary(request: Request[Any, Any, Any], batch_id: JobId) -> BatchSummary:
    state = api_state(request)
    page = state.runtime.settings.api.results_page
    return await state.runtime.batches.summary(principal(request), batch_id, page)


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [
    list_batches,
    create_batch,
    cancel_batch,
    get_batch_summary,
    get_batch,
    get_batch_results,
    get_batch_rejections,
    get_batch_escalations,
]
