"""Route handlers, one module per API resource: parse, call a service, serialise."""

from __future__ import annotations

from litestar.handlers import HTTPRouteHandler

from judge.api.routes import (
    batches,
    calibrations,
    canaries,
    health,
    probes,
    reliability,
    rubrics,
    scores,
)

#: every resource's handlers, in the order the OpenAPI document lists them
HANDLERS: list[HTTPRouteHandler] = [
    *scores.HANDLERS,
    *batches.HANDLERS,
    *rubrics.HANDLERS,
    *calibrations.HANDLERS,
    *probes.HANDLERS,
    *reliability.HANDLERS,
    *canaries.HANDLERS,
    *health.HANDLERS,
]
