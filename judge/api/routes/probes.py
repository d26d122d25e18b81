"""Bias probes over HTTP (``calibrate`` scope, like calibrations): start one, read its progress
and report; a probe belongs to the key that started it (another key gets 404; admin reads all)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Request, Response, get, post
from litestar.params import JSONBody
from pydantic import BaseModel, Field

from judge.api.auth import principal
from judge.api.routes._params import (
    JSON_NUMBER,
    PANEL_MAX,
    REQUEST_CONFIG,
    RUBRIC_ID_MAX,
    ItemList,
    JobId,
    ListLimit,
    ListOffset,
    PanelFilter,
    RubricFilter,
    RunStatus,
    Wait,
)
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.listing import ListFilter
from judge.domain.wire import RUN_STATUS_DESCRIPTION, ProbePage, ProbeView
from judge.services.probes import (
    DEFAULT_FILLER_WORDS,
    DEFAULT_PERMUTATIONS,
    DEFAULT_TOLERANCE,
    ProbeOptions,
)


class ProbeRequest(BaseModel):
    """Items to probe the panel with (as for ``POST /v1/scores``; self-preference items carry
    ``metadata.generator_model``)."""

    model_config = REQUEST_CONFIG

    rubric: str = Field(min_length=1, max_length=RUBRIC_ID_MAX)
    panel: str | None = Field(default=None, max_length=PANEL_MAX)
    kind: Literal["verbosity", "order", "self-preference"]
    items: ItemList
    filler_words: Annotated[int, Field(ge=1, le=2000), JSON_NUMBER] = DEFAULT_FILLER_WORDS
    tolerance: Annotated[float, Field(ge=0, le=10), JSON_NUMBER] = DEFAULT_TOLERANCE
    permutations: Annotated[int, Field(ge=1, le=10), JSON_NUMBER] = DEFAULT_PERMUTATIONS


@post(
    "/v1/probes",
    opt={"scope": "calibrate"},
    status_code=202,
    summary="Start a bias probe",
    responses=responses({200: ProbeView, 202: ProbeView}, 404, 413),
)
async def create_probe(
    request: Request[Any, Any, Any],
    data: JSONBody[ProbeRequest],
    wait: Wait = None,
) -> Response[ProbeView]:
    state = api_state(request)
    view = await state.runtime.probes.start(
        principal(request),
        state.intake(request),
        rubric_id=data.rubric,
        panel_name=data.panel,
        kind=data.kind,
        items=data.items,
        options=ProbeOptions(data.filler_words, data.tolerance, data.permutations),
        wait=wait,
    )
    status = 200 if view.status == "completed" else 202
    return Response(view, status_code=status, headers={"Location": f"/v1/probes/{view.id}"})


@get(
    "/v1/probes/{run_id:str}",
    opt={"scope": "calibrate"},
    summary="A bias probe and its report",
    description=f"`status`: {RUN_STATUS_DESCRIPTION}",
    responses=responses({200: ProbeView}, 404),
)
async def get_probe(request: Request[Any, Any, Any], run_id: JobId) -> ProbeView:
    return await api_state(request).runtime.probes.view(principal(request), run_id)


@get(
    "/v1/probes",
    opt={"scope": "calibrate"},
    summary="The caller's probes, newest first, without reports (admin: every key's)",
    responses=responses({200: ProbePage}),
)
async def list_probes(
    request: Request[Any, Any, Any],
    rubric: RubricFilter = None,
    panel: PanelFilter = None,
    status: RunStatus = None,
    offset: ListOffset = 0,
    limit: ListLimit = 50,
) -> ProbePage:
    where = ListFilter(rubric=rubric, panel=panel, status=status, offset=offset, limit=limit)
    found, next_offset = await api_state(request).runtime.probes.listed(principal(request), where)
    return ProbePage(offset=offset, limit=limit, next_offset=next_offset, probes=found)


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [list_probes, create_probe, get_probe]
