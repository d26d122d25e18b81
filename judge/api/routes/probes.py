"""Bias probes over HTTP (``calibrate`` scope, like calibrations): start one, read its progress
and report; a probe belongs to the key that started it (another key gets 404; admin reads all)."""

from __future__ import annotations

import contextlib
import functools
import time
from typing import Annotated, Any, Literal

from litestar import Request, Response, get, post
from litestar.params import JSONBody, Parameter
from pydantic import BaseModel, ConfigDict, Field

from judge.api.auth import principal
from judge.api.problems import ProblemError
from judge.api.routes._params import PANEL_MAX, RUBRIC_ID_MAX, JobId
from judge.api.state import api_state
from judge.domain.wire import RUN_STATUS_DESCRIPTION
from judge.services.probes import (
    DEFAULT_FILLER_WORDS,
    DEFAULT_PERMUTATIONS,
    DEFAULT_TOLERANCE,
    ProbeNotFound,
    ProbeOptions,
)
from judge.services.runs import view_when_reported


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


async def _view(request: Request[Any, Any, Any], run_id: str) -> dict[str, Any]:
    """404 unless the probe exists and the caller may read it."""
    state = api_state(request)
    try:
        if not principal(request).can_read(await state.runtime.probes.owner_of(run_id)):
            raise ProbeNotFound(run_id)
        return await state.runtime.probes.view(run_id)
    except ProbeNotFound as exc:
        raise ProblemError(404, exc.message, field="id") from None


@post("/v1/probes", opt={"scope": "calibrate"}, status_code=202, summary="Start a bias probe")
async def create_probe(
    request: Request[Any, Any, Any],
    data: JSONBody[ProbeRequest],
    wait: Annotated[float | None, Parameter(ge=0)] = None,
) -> Response[dict[str, Any]]:
    state = api_state(request)
    who = principal(request)
    timeout = min(wait or 0.0, state.runtime.settings.api.max_wait_s)
    until = time.monotonic() + timeout
    waiting = state.quotas.waiter(who.owner) if timeout > 0 else contextlib.nullcontext()
    async with waiting:
        await state.quotas.check_queue(who.owner, len(data.items))
        run, job_ids = await state.runtime.probes.submit(
            rubric_id=data.rubric,
            panel_name=data.panel,
            kind=data.kind,
            items=data.items,
            options=ProbeOptions(data.filler_words, data.tolerance, data.permutations),
            owner=who.owner,
        )
        await state.dispatcher.dispatch(job_ids)
        if timeout > 0:
            await state.waiter.wait(job_ids, timeout)
    view = await view_when_reported(functools.partial(_view, request, run.id), until=until)
    status = 200 if view["status"] == "completed" else 202
    return Response(view, status_code=status, headers={"Location": f"/v1/probes/{run.id}"})


@get(
    "/v1/probes/{run_id:str}",
    opt={"scope": "calibrate"},
    summary="A bias probe and its report",
    description=f"`status`: {RUN_STATUS_DESCRIPTION}",
)
async def get_probe(request: Request[Any, Any, Any], run_id: JobId) -> dict[str, Any]:
    return await _view(request, run_id)


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [create_probe, get_probe]
