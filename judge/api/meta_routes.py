"""Rubrics, health, readiness and metrics."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.params import Parameter

from judge.api.problems import ProblemError
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.wire import Health, Readiness, RubricDetail, RubricSummary
from judge.errors import RubricNotFound

log = logging.getLogger(__name__)
RubricId = Annotated[str, Parameter(min_length=1, max_length=100, description="a rubric id")]


def _summary(rubric: Any) -> dict[str, Any]:
    return {
        "id": rubric.id,
        "version": rubric.version,
        "name": rubric.name,
        "unit": rubric.unit,
        "setting": rubric.setting,
        "hash": rubric.content_hash,
        "dimensions": [d.id for d in rubric.dimensions],
    }


@get(
    "/v1/rubrics",
    opt={"scope": "score"},
    summary="Available rubrics",
    responses=responses({200: list[RubricSummary]}),
)
async def list_rubrics(request: Request[Any, Any, Any]) -> list[dict[str, Any]]:
    return [_summary(r) for r in api_state(request).runtime.registry.all()]


@get(
    "/v1/rubrics/{rubric_id:str}",
    opt={"scope": "score"},
    summary="One rubric, normalised",
    responses=responses({200: RubricDetail}, 404),
)
async def get_rubric(request: Request[Any, Any, Any], rubric_id: RubricId) -> dict[str, Any]:
    try:
        rubric = api_state(request).runtime.registry.get(rubric_id)
    except RubricNotFound as exc:
        raise ProblemError(404, exc.message, field="rubric_id") from None
    data: dict[str, Any] = rubric.model_dump(mode="json")
    data["hash"] = rubric.content_hash
    return data


@get(
    "/health",
    opt={"public": True},
    summary="Liveness: the process answers",
    responses=responses({200: Health}, public=True),
)
async def health() -> dict[str, str]:
    return {"status": "ok"}


@get(
    "/ready",
    opt={"public": True},
    summary="Readiness: the database (and Redis, when configured) answer",
    responses=responses({200: Readiness, 503: Readiness}, public=True),
)
async def ready(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    """Each check is ``ok`` or a reason code; the error itself goes to the log."""
    state = api_state(request)
    checks = {"database": await state.runtime.database_check()}
    ping = state.extras.get("redis_ping")
    if ping is not None:
        try:
            await ping()
            checks["redis"] = "ok"
        except Exception as exc:
            log.warning("readiness: Redis does not answer: %r", exc)
            checks["redis"] = "unavailable"
    ok = all(v == "ok" for v in checks.values())
    body = {"status": "ready" if ok else "not ready", "mode": state.mode, "checks": checks}
    return Response(body, status_code=200 if ok else 503)
