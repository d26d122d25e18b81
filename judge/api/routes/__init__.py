"""Route handlers, one module per API resource: parse, call a service, serialise."""

from __future__ import annotations

from litestar import Response, route
from litestar.enums import HttpMethod
from litestar.handlers import HTTPRouteHandler
from pydantic import BaseModel

from judge.api.routes import (
    batches,
    calibrations,
    canaries,
    health,
    probes,
    reliability,
    rubrics,
    scores,
    sessions,
)


def _options(path: str, allow: str) -> HTTPRouteHandler:
    async def options() -> Response[None]:
        return Response(None, status_code=204, headers={"Allow": allow})

    return route(path, http_method=[HttpMethod.OPTIONS], include_in_schema=False)(options)


def options_handlers(handlers: list[HTTPRouteHandler]) -> list[HTTPRouteHandler]:
    """An ``OPTIONS`` handler for each path that several handlers serve. Litestar's own answers
    ``Allow`` with the methods of the first handler registered on the path only (its route
    is rebuilt as more are registered, its ``OPTIONS`` handler is not)."""
    methods: dict[str, set[str]] = {}
    for handler in handlers:
        for path in handler.paths:
            methods.setdefault(path, set()).update(handler.http_methods)
    return [
        _options(path, ", ".join(sorted(found | {"OPTIONS"})))
        for path, found in methods.items()
        if len(found) > 1
    ]


#: every resource's handlers, in the order the OpenAPI document lists them
_RESOURCES: list[HTTPRouteHandler] = [
    *scores.HANDLERS,
    *batches.HANDLERS,
    *sessions.HANDLERS,
    *rubrics.HANDLERS,
    *calibrations.HANDLERS,
    *probes.HANDLERS,
    *reliability.HANDLERS,
    *canaries.HANDLERS,
    *health.HANDLERS,
]
# (the OPTIONS handlers first: once a path has a handler, Litestar has given it its own)
HANDLERS: list[HTTPRouteHandler] = [*options_handlers(_RESOURCES), *_RESOURCES]

#: the request bodies, documented with their own JSON Schema (judge/api/openapi_document.py)
REQUEST_MODELS: list[type[BaseModel]] = [
    scores.ScoreRequest,
    batches.BatchRequest,
    sessions.SessionRequest,
    calibrations.CalibrationRequest,
    calibrations.PlanRequest,
    probes.ProbeRequest,
    canaries.CanaryRequest,
]
