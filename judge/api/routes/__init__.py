"""Route handlers, one module per API resource: parse, call a service, serialise."""

from __future__ import annotations

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

#: the request bodies, documented with their own JSON Schema (judge/api/openapi_document.py)
REQUEST_MODELS: list[type[BaseModel]] = [
    scores.ScoreRequest,
    batches.BatchRequest,
    calibrations.CalibrationRequest,
    calibrations.PlanRequest,
    probes.ProbeRequest,
    canaries.CanaryRequest,
]
