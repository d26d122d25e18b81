"""Bias probes over HTTP (``calibrate`` scope, like calibrations): start one, read its progress
and report; a probe belongs to the key that started it (another key gets 404; admin reads all)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Request, Response, get, post
from litestar.params import JSONBody, Parameter
from pydantic import BaseModel, ConfigDict, Field

from judge.api.auth import principal
from judge.api.routes._params import PANEL_MAX, RUBRIC_ID_MAX, JobId
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.wire import RUN_STATUS_DESCRIPTION, ProbeView
from judge.services.probes import (
    DEFAULT_FILLER_WORDS,
    DEFAULT_PERMUTATIONS,
    DEFAULT_TOLERANCE,
    ProbeOptions,
)


class ProbeRequest(BaseModel):
    """Items to probe the panel with (as for ``POST /v1/scores``; self-preference items carry
    ``metadata.generator_model``)."""

    model_config = ConfigDict(extra="forbid")

    rubric: str = Field(min_length=1, max_length=RUBRIC_ID_MAX)
    panel: str | None = Field(default=None, max_length=PANEL_MAX)
    kind: Literal["verbosity", "order", "self-preference"]
    items: list[Any]
    filler_words: int = Field(default=DEFAULT_FILLER_WORDS, ge=1, le=2000)
    tolerance: float = Field(default=DEFAULT_TOLERANCE, ge=0, le=10)
    permutations: int = Field(default=DEFAULT_PERMUTATIONS, ge=1, le=10)


@post(
    "/v1/probes",
    opt={"scope": "calibrate"},
    status_code=202,
    summary="Start a bias probe",
    responses=responses({200: ProbeView, 202: ProbeView}, 404, 429),
)
async def create_probe(
    request: Request[Any, Any, Any],
    data: JSONBody[ProbeRequest],
    wait: Annotated[float | None, Parameter(ge=0)] = None,
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


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [create_probe, get_probe]
