"""Sessions: submit a whole multi-party session, list them, read its checkpoints, trajectory
and the supporter's measures (issue 31)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response, get, post
from litestar.params import JSONBody
from pydantic import BaseModel, Field, WithJsonSchema

from empathy_judge_client.session_view import SessionView
from judge.api.auth import principal
from judge.api.idempotency import digest, idempotency_key
from judge.api.routes._params import (
    IDEMPOTENCY_DOC,
    PANEL_MAX,
    REQUEST_CONFIG,
    RUBRIC_ID_MAX,
    BatchStatus,
    JobId,
    ListLimit,
    ListOffset,
    PanelFilter,
    RubricFilter,
)
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.listing import ListFilter
from judge.domain.wire import SessionPage

#: the session (read as a plain object so that ``parse_session`` names the field at fault)
SessionField = Annotated[
    dict[str, Any],
    WithJsonSchema(
        {
            "type": "object",
            "description": (
                "An Item's participants and turns (each turn may add `to`: the participant "
                "ids a supporter turn addresses, or `all`), plus `supporter` (a participant "
                "id; default: the only participant with a supporter role) and `checkpoints` "
                "(turn indices; default: every client turn)."
            ),
            "required": ["participants", "turns"],
        }
    ),
]


class SessionRequest(BaseModel):
    """Score a whole session, checkpoint by checkpoint."""

    model_config = REQUEST_CONFIG

    rubric: str = Field(min_length=1, max_length=RUBRIC_ID_MAX, description="e.g. rescue-couple")
    panel: str | None = Field(default=None, max_length=PANEL_MAX)
    session: SessionField


@post(
    "/v1/sessions",
    opt={"scope": "batch"},
    status_code=202,
    summary="Submit a whole multi-party session (every checkpoint is judged)",
    description=(
        "Each checkpoint is judged with the context window the RESCUE-BENCH protocol gives "
        "its task: the checkpoint and the 3 turns before it, the whole prefix for the "
        "relation pattern. The session is queued as a batch of kind `session`. " + IDEMPOTENCY_DOC
    ),
    responses=responses({202: SessionView}, 404, 413, 429),
)
async def create_session(
    request: Request[Any, Any, Any], data: JSONBody[SessionRequest]
) -> Response[SessionView]:
    state = api_state(request)
    view = await state.runtime.sessions.submit(
        principal(request),
        state.intake(request),
        data.session,
        rubric_id=data.rubric,
        panel_name=data.panel,
        idempotency=idempotency_key(request, digest(await request.body())),
    )
    return Response(view, status_code=202, headers={"Location": f"/v1/sessions/{view.id}"})


@get(
    "/v1/sessions/{session_id:str}",
    opt={"scope": "batch"},
    summary="A session: its checkpoints, trajectory and the supporter's measures",
    responses=responses({200: SessionView}, 404),
)
async def get_session(request: Request[Any, Any, Any], session_id: JobId) -> SessionView:
    return await api_state(request).runtime.sessions.view(principal(request), session_id)


@get(
    "/v1/sessions",
    opt={"scope": "batch"},
    summary="The caller's sessions, newest first (admin: every key's)",
    responses=responses({200: SessionPage}),
)
async def list_sessions(
    request: Request[Any, Any, Any],
    rubric: RubricFilter = None,
    panel: PanelFilter = None,
    status: BatchStatus = None,
    offset: ListOffset = 0,
    limit: ListLimit = 50,
) -> SessionPage:
    where = ListFilter(rubric=rubric, panel=panel, status=status, offset=offset, limit=limit)
    return await api_state(request).runtime.sessions.listed(principal(request), where)


HANDLERS = [create_session, list_sessions, get_session]
