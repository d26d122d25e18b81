"""The service's response bodies on the wire: what the API documents (``/schema/openapi.json``)
and what :mod:`empathy_judge_client` parses.

The services build these models and the API returns them as they are, so the documented shape
is the served one (the fuzzer, schemathesis in tests/e2e/test_api_fuzz.py, checks every
response against it). On the wire a model carries exactly the fields its builder set
(:func:`wire_json`): an optional field that does not apply is absent, not null. Objects may
carry more fields than listed; the listed ones without a default are always there.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# RubricRef, the rubric reference of every view, is defined with the report (re-exported)
from empathy_judge_client.calibration_report import CalibrationReport
from empathy_judge_client.calibration_report import RubricRef as RubricRef
from empathy_judge_client.result import ScoreResult

PROBLEM_JSON = "application/problem+json"
NDJSON = "application/x-ndjson"


def wire_json(model: BaseModel) -> dict[str, Any]:
    """A response model as JSON data: the fields its builder set (see the module's doc)."""
    data: dict[str, Any] = model.model_dump(mode="json", exclude_unset=True)
    return data


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

    #: read back from the stored result: a member this version does not list is kept
    model_config = ConfigDict(extra="allow")

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


class BatchCounts(BaseModel):
    """A batch and its progress: what its view and a listing of batches show alike."""

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
    created_at: str
    mode: Literal["interactive", "economy"] = Field(
        default="interactive",
        description="economy: the calls go through the providers' batch APIs (about half the "
        "price; results take up to the provider's completion window)",
    )


class ProviderBatchProgress(BaseModel):
    """One provider batch of an economy batch (one judge model's calls)."""

    model: str
    status: str = Field(
        description="preparing, the provider's state (validating, in_progress, finalizing, "
        "completed, failed, expired, cancelled), or fetched once its replies are stored"
    )
    requests: int
    completed: int
    failed: int
    error: str | None = None


class EconomyProgress(BaseModel):
    """Where an economy batch stands at the providers."""

    stage: Literal["waiting", "submitted to provider", "in progress", "released"] = Field(
        description="waiting (not yet sent), submitted to provider, in progress (the provider "
        "is answering, or its replies are in), released (every item is scored or queued)"
    )
    held: int = Field(description="items waiting for their provider batches")
    provider_batches: list[ProviderBatchProgress]


class BatchView(BatchCounts):
    rejections: list[Rejection] = Field(
        description="the first rejections (by line); the rest page by page at rejections_next"
    )
    rejections_next: str | None = Field(
        default=None, description="the next page of rejections; null when all are shown"
    )
    results: str
    cost_usd: float = Field(
        default=0.0,
        description="what the LLM calls of the finished items cost so far (USD; 0 for "
        "simulated or unpriced models)",
    )
    economy: EconomyProgress | None = Field(
        default=None, description="an economy batch's provider batches (null: interactive)"
    )


class BatchListing(BatchCounts):
    """A batch in ``GET /v1/batches``: its progress, without its rejections."""

    simulated: bool = Field(description="the panel includes an LLM simulator persona")


class Page(BaseModel):
    """Where a listing page starts and where the next one does (null on the last page)."""

    offset: int
    limit: int
    next_offset: int | None = Field(default=None, description="null on the last page")


class BatchPage(Page):
    batches: list[BatchListing]


class SessionListing(BaseModel):
    """A session in ``GET /v1/sessions``: its checkpoints' progress, without the analysis
    (``GET /v1/sessions/{id}``)."""

    id: str
    batch_id: str = Field(description="the batch of kind `session` holding its checkpoints")
    status: Literal["queued", "running", "completed"]
    rubric: RubricRef
    panel_name: str
    supporter: str
    total: int = Field(description="checkpoint jobs")
    queued: int
    running: int
    completed: int
    failed: int
    created_at: str
    simulated: bool = Field(description="the panel includes an LLM simulator persona")


class SessionPage(Page):
    sessions: list[SessionListing]


class RejectionPage(BaseModel):
    """One page of a batch's rejected lines, by line number."""

    batch_id: str
    offset: int
    limit: int
    total: int
    next_offset: int | None = Field(default=None, description="null on the last page")
    rejections: list[Rejection]


class RubricSummary(BaseModel):
    id: str
    version: str
    name: str
    unit: str
    setting: str
    hash: str
    dimensions: list[str]


class RubricDetail(BaseModel):
    """The rubric file, normalised (see ``judge rubrics show``; every member of the rubric
    schema, :class:`judge.domain.rubric.Rubric`), and its hash."""

    model_config = ConfigDict(extra="allow")

    id: str
    version: str
    hash: str
    dimensions: list[dict[str, Any]]


class CalibrationProgress(BaseModel):
    """A run's items (a probe's variants): how many, and how many finished."""

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
    owned: bool = Field(
        default=True, description="started by the calling key (false: shared by an admin)"
    )
    shared: bool = Field(
        default=False,
        description="published by an admin: its evidence decides every key's flags",
    )
    n_items: int
    created_at: str
    report_url: str
    canary_id: str | None = Field(default=None, description="the canary that ran it, if any")
    progress: CalibrationProgress | None = None
    report: CalibrationReport | None = Field(default=None, description="once completed")


class CalibrationPage(Page):
    """``GET /v1/calibrations``: runs newest first, without their reports."""

    calibrations: list[CalibrationView]


class ProbeView(BaseModel):
    """A bias probe (``kind``: verbosity, order or self-preference) and, once completed, its
    report."""

    id: str
    kind: str
    status: Literal["queued", "running", "finalizing", "completed", "failed"] = Field(
        description=RUN_STATUS_DESCRIPTION
    )
    rubric: RubricRef
    panel_name: str
    simulated: bool = False
    n_items: int
    created_at: str
    progress: CalibrationProgress | None = None
    report: dict[str, Any] | None = Field(default=None, description="once completed")


class ProbePage(Page):
    """``GET /v1/probes``: probes newest first, without their reports."""

    probes: list[ProbeView]


class DimensionSummary(BaseModel):
    """A dimension of a calibration run in the reliability history: its flag, the statistic
    that decided it, and each rater's agreement with the experts."""

    flag: Literal["trusted", "caution", "untrusted"] | None
    metric: str | None
    kappa: dict[str, float | None]


class RunSummary(BaseModel):
    id: str
    status: str
    label: str | None
    panel_name: str
    rubric_version: str
    simulated: bool
    shared: bool = Field(default=False, description="published by an admin for every key")
    created_at: str
    finished_at: str | None
    dimensions: dict[str, DimensionSummary]
    drift: dict[str, Any] | None = Field(default=None, description="a canary run's drift")


class CanaryHistory(BaseModel):
    id: str
    name: str
    panel_name: str
    baseline_run_id: str
    interval_s: float
    enabled: bool
    last_run_at: str | None
    runs: list[RunSummary]


class ReliabilityHistory(BaseModel):
    rubric_id: str
    #: the page (always sent by this version; defaults let a client read an older server)
    offset: int = 0
    limit: int | None = None
    next_offset: int | None = Field(default=None, description="null on the last page")
    calibrations: list[RunSummary]
    canaries: list[CanaryHistory]


class CanaryView(BaseModel):
    id: str
    name: str
    rubric_id: str
    panel_name: str
    baseline_run_id: str
    interval_s: float
    owner_key_id: str | None = Field(default=None, description="the API key that created it")
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
