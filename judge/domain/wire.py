"""The service's response bodies on the wire: what the API documents (``/schema/openapi.json``)
and what :mod:`judge.client` parses.

Handlers build plain dicts; these models only describe them, so that clients and the fuzzer
(schemathesis, tests/e2e/test_api_fuzz.py) can check every documented response against
them. Objects may carry more fields than listed; the listed ones are always there.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from judge.domain.calibration_report import CalibrationReport, RubricRef
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
    """A completed score (docs/DESIGN.md section 3): the result, with the job's id and status."""

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


#: what a calibration or probe run's status means (their OpenAPI descriptions)
RUN_STATUS_DESCRIPTION = (
    "`running` while items are being scored; `finalizing` once every item is done and the "
    "report is being computed and stored (reading a run never computes it: poll again); "
    "`completed` with the report."
)


class CalibrationView(BaseModel):
    id: str
    status: Literal["queued", "running", "finalizing", "completed", "failed"] = Field(
        description=RUN_STATUS_DESCRIPTION
    )
    label: str | None
    rubric: RubricRef
    panel_name: str
    simulated: bool = False
    n_items: int
    created_at: str
    report_url: str
    progress: CalibrationProgress | None = None
    report: CalibrationReport | None = Field(default=None, description="once completed")


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
