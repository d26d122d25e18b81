"""Route handlers: parse, call a service, serialise. No business logic here."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from litestar import Request, Response, get, post
from litestar.params import JSONBody, Parameter
from litestar.response import Stream
from pydantic import BaseModel, ConfigDict, Field

from judge.api.auth import Principal, principal
from judge.api.idempotency import HEADER as IDEMPOTENCY_KEY
from judge.api.idempotency import digest, submit_once
from judge.api.openapi_bodies import BatchOperation
from judge.api.problems import ProblemError
from judge.api.schemas import responses
from judge.api.state import ApiState, api_state
from judge.domain.text_safety import reject_constant
from judge.domain.wire import (
    NDJSON,
    BatchView,
    CompletedLine,
    CompletedScore,
    JobStatus,
    JobStatusLine,
)
from judge.services.jobs import Rejection, is_finished, job_view
from judge.services.submissions import Submission

#: ids the service hands out (uuid4 hex); any other path id is refused before a query
ID_PATTERN = r"^[0-9a-f]{32}$"
JobId = Annotated[str, Parameter(pattern=ID_PATTERN, description="an id the service returned")]
#: bounds of the columns these names are stored in (judge/persistence/tables.py)
RUBRIC_ID_MAX, RUBRIC_VERSION_MAX, PANEL_MAX = 100, 20, 100


class ScoreRequest(BaseModel):
    """Score one item (DESIGN.md section 3 for the item shape)."""

    model_config = ConfigDict(extra="forbid")

    rubric: str = Field(
        min_length=1, max_length=RUBRIC_ID_MAX, description="rubric id, e.g. epitome"
    )
    rubric_version: str | None = Field(default=None, max_length=RUBRIC_VERSION_MAX)
    panel: str | None = Field(
        default=None, max_length=PANEL_MAX, description="a configured panel name"
    )
    item: dict[str, Any]


class BatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rubric: str = Field(min_length=1, max_length=RUBRIC_ID_MAX)
    panel: str | None = Field(default=None, max_length=PANEL_MAX)
    items: list[Any]


def _wait_limit(state: ApiState, wait: float | None) -> float:
    if wait is None:
        return 0.0
    return min(wait, state.runtime.settings.api.max_wait_s)


IDEMPOTENCY_DOC = (
    f"Send an `{IDEMPOTENCY_KEY}` header (any 1-255 visible ASCII characters) to make a "
    "retry safe: the same key with the same request returns the first submission (for 24 h)."
)


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
    timeout = _wait_limit(state, wait)

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


def _parse_line(number: int, raw: bytes) -> Any:
    """One JSON Lines line, decoded; or the :class:`Rejection` saying why it cannot be."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejection(number, "line", f"not UTF-8 (invalid byte at offset {exc.start})")
    if not text.strip():
        return None
    try:
        return json.loads(text, parse_constant=reject_constant)
    except json.JSONDecodeError as exc:
        return Rejection(number, "line", f"invalid JSON ({exc.msg})")
    except RecursionError:
        return Rejection(number, "line", "invalid JSON (nested too deeply to read)")
    except ValueError as exc:  # NaN/Infinity, or an integer of thousands of digits
        return Rejection(number, "line", f"invalid JSON ({str(exc).split(':')[0]})")


def _parse_jsonl(body: bytes) -> list[tuple[int, Any]]:
    """Every non-blank line, numbered from 1: decoded, or a rejection naming the line."""
    # split on "\n" only: str.splitlines() also splits on U+2028, U+2029 and U+0085, which
    # JSON allows unescaped inside strings, and would break such a line (and the numbering);
    # each line is decoded on its own, so one line's bad bytes reject that line only
    lines: list[tuple[int, Any]] = []
    for number, raw in enumerate(body.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
        parsed = _parse_line(number, raw)
        if parsed is not None:
            lines.append((number, parsed))
    return lines


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
        lines = _parse_jsonl(body)
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
