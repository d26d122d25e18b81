"""Liveness and readiness."""

from __future__ import annotations

import logging
from typing import Any

from litestar import Request, Response, get

from judge.api.schemas import responses
from judge.api.state import api_state
from judge.domain.wire import Health, Readiness

log = logging.getLogger(__name__)


@get(
    "/health",
    opt={"public": True},
    summary="Liveness: the process answers",
    responses=responses({200: Health}, public=True),
)
async def health() -> Health:
    return Health(status="ok")


@get(
    "/ready",
    opt={"public": True},
    summary="Readiness: the database (and Redis, when configured) answer",
    responses=responses({200: Readiness, 503: Readiness}, public=True),
)
async def ready(request: Request[Any, Any, Any]) -> Response[Readiness]:
    """Each check is ``ok`` or a reason code; the error itself goes to the log."""
    state = api_state(request)
    checks: dict[str, Any] = {"database": await state.runtime.database_check()}
    ping = state.extras.get("redis_ping")
    if ping is not None:
        try:
            await ping()
            checks["redis"] = "ok"
        except Exception as exc:
            log.warning("readiness: Redis does not answer: %r", exc)
            checks["redis"] = "unavailable"
    ok = all(v == "ok" for v in checks.values())
    body = Readiness(status="ready" if ok else "not ready", mode=state.mode, checks=checks)
    return Response(body, status_code=200 if ok else 503)


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [health, ready]
