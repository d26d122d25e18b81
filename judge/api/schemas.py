"""The shapes of the API's responses, for the OpenAPI document (``/schema/openapi.json``).

Handlers build plain dicts; these models only describe them, so that clients and the fuzzer
(schemathesis, tests/integration/test_api_fuzz.py) can check every documented response against
them. Objects may carry more fields than listed; the listed ones are always there.
"""

from __future__ import annotations

from typing import Any, Literal

from litestar.openapi.datastructures import ResponseSpec
from pydantic import BaseModel, Field

from judge.domain.result import ScoreResult

PROBLEM_JSON = "application/problem+json"
NDJSON = "application/x-ndjson"


class Problem(BaseModel):
    """RFC 9457 problem details. ``field`` names the offending input when there is one;
    ``request_id`` is also in the ``X-Request-ID`` header and in the server's log."""

    type: str
    title: str
    status: int
    detail: str
    instance: str
    field: str | None = None
    request_id: str


class RubricRef(BaseModel):
    id: str
    version: str
    hash: str


class JobStatus(BaseModel):
    """A score that is not completed (yet), or failed (``error`` says why, as a reason code)."""

    id: str
    item_id: str | None
    status: Literal["queued", "running", "failed"]
    rubric: RubricRef
    panel_name: str
    created_at: str
    batch_id: str | None = None
    error: str | None = None


class CompletedScore(ScoreResult):
    """A completed score (DESIGN.md section 3): the result, with the job's id and status."""

    id: str
    item_id: str | None
    status: Literal["completed"]
    rubric: RubricRef  # type: ignore[assignment]


class JobStatusLine(JobStatus):
    line: int
    batch_id: str


class CompletedLine(CompletedScore):
    line: int
    batch_id: str


class Rejection(BaseModel):
    line: int
    field: str
    message: str


class BatchView(BaseModel):
    id: str
    status: Literal["queued", "running", "completed"]
    rubric: RubricRef
    panel_name: str
    total: int
    queued: int
    running: int
    completed: int
    failed: int
    rejected: int
    rejections: list[Rejection]
    created_at: str
    results: str


class RubricSummary(BaseModel):
    id: str
    version: str
    name: str
    unit: str
    setting: str
    hash: str
    dimensions: list[str]


class RubricDetail(BaseModel):
    """The rubric file, normalised (see ``judge rubrics show``)."""

    id: str
    version: str
    hash: str
    dimensions: list[dict[str, Any]]


class CalibrationProgress(BaseModel):
    total: int
    completed: int
    failed: int


class CalibrationView(BaseModel):
    id: str
    status: Literal["queued", "running", "completed", "failed"]
    label: str | None
    rubric: RubricRef
    panel_name: str
    n_items: int
    created_at: str
    report_url: str
    progress: CalibrationProgress | None = None
    report: dict[str, Any] | None = Field(default=None, description="once completed")


class ReliabilityHistory(BaseModel):
    rubric_id: str
    calibrations: list[dict[str, Any]]
    canaries: list[dict[str, Any]]


class CanaryView(BaseModel):
    id: str
    name: str
    rubric_id: str
    panel_name: str
    baseline_run_id: str
    interval_s: float
    enabled: bool
    created_at: str
    last_run_at: str | None


class Health(BaseModel):
    status: Literal["ok"]


class Readiness(BaseModel):
    """``checks`` maps each dependency to ``ok`` or a reason code (never an error message)."""

    status: Literal["ready", "not ready"]
    mode: str
    checks: dict[str, Literal["ok", "unavailable", "not_migrated"]]


#: What any route can answer besides its own statuses.
COMMON_ERRORS = (400, 401, 403, 422, 503)
_DESCRIPTIONS = {
    400: "The request could not be read",
    401: "No valid API key",
    403: "The API key lacks the route's scope",
    404: "No such resource",
    409: "The resource is not ready for this",
    413: "The body (or the batch) is too large",
    422: "Invalid input; `field` names it",
    503: "A dependency (database, Redis) or the configuration is not usable",
}


def responses(
    success: dict[int, Any],
    *errors: int,
    media_type: str = "application/json",
    public: bool = False,
) -> dict[int, ResponseSpec]:
    """OpenAPI responses of a route: ``success`` maps status codes to the model of the body;
    every other status (``errors`` plus :data:`COMMON_ERRORS`, without 401 and 403 on a
    ``public`` route) has a :class:`Problem` body."""
    specs = {
        status: ResponseSpec(
            data_container=model,
            media_type=media_type,
            description="Success" if status < 300 else _DESCRIPTIONS.get(status, "Error"),
            generate_examples=False,
        )
        for status, model in success.items()
    }
    common = [s for s in COMMON_ERRORS if not (public and s in (401, 403))]
    for status in sorted({*errors, *common} - set(specs)):
        specs[status] = ResponseSpec(
            data_container=Problem,
            media_type=PROBLEM_JSON,
            description=_DESCRIPTIONS.get(status, "Error"),
            generate_examples=False,
        )
    return specs
