"""Tables. JSON payloads are stored as text; ids are uuid hex strings chosen by the service."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Dialect,
    Index,
    Integer,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
)
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """A timestamp that is always timezone-aware UTC when read back. PostgreSQL keeps the zone
    (``timestamptz``); SQLite stores none and returns naive values, which are UTC here (every
    timestamp is written as UTC), so they get the zone on the way out. Same DDL as
    ``DateTime(timezone=True)``."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is not None:
            return value.astimezone(UTC)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


def _ts(nullable: bool = True) -> Column[datetime]:
    return Column(UtcDateTime(), nullable=nullable)


class Batch(SQLModel, table=True):
    __tablename__ = "batches"

    id: str = Field(primary_key=True, max_length=32)
    rubric_id: str = Field(max_length=100)
    rubric_version: str = Field(max_length=20)
    rubric_hash: str = Field(max_length=80)
    panel_name: str = Field(max_length=100)
    kind: str = Field(default="batch", max_length=16, description="batch or calibration")
    owner_key_id: str | None = Field(
        default=None, max_length=32, index=True, description="the API key that created it"
    )
    total: int = 0
    rejected: int = 0
    rejections_json: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))
    finished_at: datetime | None = Field(default=None, sa_column=_ts())
    #: ``interactive``, or ``economy``: calls through the providers' batch APIs (migration 0007)
    mode: str = Field(
        default="interactive",
        sa_column=Column(String(16), nullable=False, server_default="interactive"),
    )


class ScoreJob(SQLModel, table=True):
    """One item to score: queued -> running -> completed | failed."""

    __tablename__ = "score_jobs"
    __table_args__ = (
        Index("ix_score_jobs_batch_status", "batch_id", "status"),
        Index("ix_score_jobs_status_enqueued", "status", "enqueued_at"),
        Index("ix_score_jobs_owner_status", "owner_key_id", "status"),
    )

    id: str = Field(primary_key=True, max_length=32)
    batch_id: str | None = Field(default=None, foreign_key="batches.id", max_length=32)
    position: int | None = None
    item_id: str | None = Field(default=None, max_length=200)
    rubric_id: str = Field(max_length=100)
    rubric_version: str = Field(max_length=20)
    rubric_hash: str = Field(max_length=80)
    panel_name: str = Field(max_length=100)
    panel_signature: str = Field(sa_column=Column(Text, nullable=False))
    item_json: str = Field(sa_column=Column(Text, nullable=False))
    owner_key_id: str | None = Field(default=None, max_length=32)
    status: str = Field(default="queued", max_length=16)
    attempts: int = 0
    use_cache: bool = True
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    result_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))
    enqueued_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))
    started_at: datetime | None = Field(default=None, sa_column=_ts())
    finished_at: datetime | None = Field(default=None, sa_column=_ts())
    lease_until: datetime | None = Field(default=None, sa_column=_ts())


class Judgment(SQLModel, table=True):
    """One LLM call made for a job: the raw reply and what was parsed from it.

    The audit trail of the calls behind a result: written in the transaction that finishes
    the job (so a job redone after a crash has exactly one set), never read on the scoring
    path. Results keep ratings and rationales but not raw replies; this table keeps those,
    for audits and for the item view (one row per call, with tokens, cost and latency).
    """

    __tablename__ = "judgments"

    id: int | None = Field(default=None, primary_key=True)
    job_id: str = Field(foreign_key="score_jobs.id", index=True, max_length=32)
    model: str = Field(max_length=200)
    resolved_model: str | None = Field(default=None, max_length=200)
    params_json: str = Field(sa_column=Column(Text, nullable=False))
    prompt_hash: str = Field(max_length=64)
    purpose: str = Field(max_length=16)
    outcome: str = Field(max_length=32)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    attempts: int = 0
    cached: bool = False
    #: of prompt_tokens: read from / written to the provider's prompt cache (migration 0008)
    cached_prompt_tokens: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    cache_write_tokens: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    raw_reply: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    ratings_json: str = Field(default="{}", sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))


class LlmCacheEntry(SQLModel, table=True):
    """A successful reply to an exact (model, parameters, messages, schema) request."""

    __tablename__ = "llm_cache"

    key: str = Field(primary_key=True, max_length=64)
    model: str = Field(max_length=200)
    resolved_model: str | None = Field(default=None, max_length=200)
    content: str = Field(sa_column=Column(Text, nullable=False))
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    #: the LLM simulator sent the reply (migration 0006)
    simulated: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default=false())
    )
    created_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))


class ApiKey(SQLModel, table=True):
    __tablename__ = "api_keys"

    id: str = Field(primary_key=True, max_length=32)
    name: str = Field(max_length=200)
    prefix: str = Field(max_length=16, index=True)
    key_hash: str = Field(max_length=64, unique=True)
    scopes: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))
    revoked_at: datetime | None = Field(default=None, sa_column=_ts())
    last_used_at: datetime | None = Field(default=None, sa_column=_ts())


class Canary(SQLModel, table=True):
    """A calibration set re-scored on a schedule to watch the panel drift from its baseline."""

    __tablename__ = "canaries"

    id: str = Field(primary_key=True, max_length=32)
    name: str = Field(max_length=200)
    rubric_id: str = Field(max_length=100)
    panel_name: str = Field(max_length=100)
    baseline_run_id: str = Field(max_length=32)
    interval_s: float
    owner_key_id: str | None = Field(
        default=None, max_length=32, index=True, description="the API key that created it"
    )
    enabled: bool = True
    created_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))
    last_run_at: datetime | None = Field(default=None, sa_column=_ts())


class CalibrationRun(SQLModel, table=True):
    """A panel scored on expert-labelled items; ``dimensions_json`` holds, per dimension, what
    reliability flags use (agreements, n, CI, coverage), ``report_json`` the rest. ``simulated``
    marks a run whose panel had a simulator persona."""

    __tablename__ = "calibration_runs"
    __table_args__ = (
        Index("ix_calibration_lookup", "rubric_id", "rubric_version", "status"),
        Index("ix_calibration_hash", "rubric_hash", "status"),
    )

    id: str = Field(primary_key=True, max_length=32)
    rubric_id: str = Field(max_length=100)
    rubric_version: str = Field(max_length=20)
    rubric_hash: str = Field(max_length=80)
    panel_name: str = Field(max_length=100)
    panel_signature: str = Field(sa_column=Column(Text, nullable=False))
    status: str = Field(default="queued", max_length=16)
    label: str | None = Field(default=None, max_length=200)
    batch_id: str | None = Field(default=None, foreign_key="batches.id", max_length=32)
    canary_id: str | None = Field(default=None, foreign_key="canaries.id", max_length=32)
    owner_key_id: str | None = Field(
        default=None, max_length=32, index=True, description="the API key that created it"
    )
    n_items: int = 0
    simulated: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default=false())
    )
    shared: bool = Field(
        default=False,
        sa_column=Column(Boolean, nullable=False, server_default=false()),
        description="published by an admin: applies to every key's flags, and every key reads it",
    )
    shared_by: str | None = Field(
        default=None, max_length=32, description="the admin key that last published or withdrew it"
    )
    shared_at: datetime | None = Field(default=None, sa_column=_ts())
    labels_json: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    dimensions_json: str = Field(default="{}", sa_column=Column(Text, nullable=False))
    report_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))
    finished_at: datetime | None = Field(default=None, sa_column=_ts())


class CalibrationShare(SQLModel, table=True):
    """One admin decision to publish a calibration run for every key or to withdraw it."""

    __tablename__ = "calibration_shares"

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(foreign_key="calibration_runs.id", max_length=32, index=True)
    shared: bool = Field(sa_column=Column(Boolean, nullable=False))
    by_key_id: str | None = Field(default=None, max_length=32)
    at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))


class ProbeRun(SQLModel, table=True):
    """A bias probe (verbosity, order, self-preference) of a panel on a rubric: a batch of
    kind ``probe`` whose jobs are the items' variants (``variants_json``: item index and
    variant name per job position). ``flags_json`` holds what scoring uses (the dimensions a
    verbosity probe found ``length_sensitive``)."""

    __tablename__ = "probe_runs"
    __table_args__ = (Index("ix_probe_lookup", "rubric_hash", "kind", "status"),)

    id: str = Field(primary_key=True, max_length=32)
    kind: str = Field(max_length=32)
    rubric_id: str = Field(max_length=100)
    rubric_version: str = Field(max_length=20)
    rubric_hash: str = Field(max_length=80)
    panel_name: str = Field(max_length=100)
    panel_signature: str = Field(sa_column=Column(Text, nullable=False))
    status: str = Field(default="running", max_length=16)
    batch_id: str | None = Field(default=None, foreign_key="batches.id", max_length=32)
    owner_key_id: str | None = Field(
        default=None, max_length=32, index=True, description="the API key that created it"
    )
    n_items: int = 0
    simulated: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default=false())
    )
    options_json: str = Field(default="{}", sa_column=Column(Text, nullable=False))
    variants_json: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    flags_json: str = Field(default="{}", sa_column=Column(Text, nullable=False))
    report_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))
    finished_at: datetime | None = Field(default=None, sa_column=_ts())


class JobOutbox(SQLModel, table=True):
    """Jobs committed but maybe not yet handed to the queue: written in the transaction that
    creates them, deleted once sent; a drainer re-sends rows left by a crashed request."""

    __tablename__ = "job_outbox"

    job_id: str = Field(primary_key=True, max_length=32)
    created_at: datetime = Field(
        default_factory=utcnow,
        sa_column=Column(UtcDateTime(), nullable=False, index=True),
    )


class IdempotencyRecord(SQLModel, table=True):
    """What a POST carrying an ``Idempotency-Key`` created, so a retry returns it again."""

    __tablename__ = "idempotency_keys"

    id: str = Field(primary_key=True, max_length=64, description="sha256 of owner, route, key")
    owner_key_id: str | None = Field(default=None, max_length=32)
    route: str = Field(max_length=32)
    request_hash: str = Field(max_length=64)
    resource_id: str = Field(max_length=32)
    created_at: datetime = Field(
        default_factory=utcnow,
        sa_column=Column(UtcDateTime(), nullable=False, index=True),
    )


class SessionRun(SQLModel, table=True):
    """A submitted session (issue 31): a batch of kind ``session`` whose jobs are the session's
    checkpoints, one per checkpoint and context window (``plan_json`` maps job positions to
    them); ``session_json`` is the session as submitted."""

    __tablename__ = "sessions"

    id: str = Field(primary_key=True, max_length=32)
    batch_id: str = Field(foreign_key="batches.id", max_length=32)
    owner_key_id: str | None = Field(
        default=None, max_length=32, index=True, description="the API key that created it"
    )
    supporter: str = Field(max_length=200)
    session_json: str = Field(sa_column=Column(Text, nullable=False))
    plan_json: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))


class ProviderBatchRow(SQLModel, table=True):
    """One provider batch of an economy batch: one judge model's calls (migration 0007).

    ``status``: ``preparing`` (claimed, not yet created at the provider), the provider's own
    states (``validating``, ``in_progress``, ``finalizing``, ``completed``, ``failed``,
    ``expired``, ``cancelled``), then ``fetched`` once its replies are stored."""

    __tablename__ = "provider_batches"
    __table_args__ = (UniqueConstraint("batch_id", "model", name="uq_provider_batches_model"),)

    id: str = Field(primary_key=True, max_length=32)
    batch_id: str = Field(foreign_key="batches.id", index=True, max_length=32)
    model: str = Field(max_length=200)
    status: str = Field(default="preparing", max_length=16)
    provider_batch_id: str | None = Field(default=None, max_length=200)
    input_file_id: str | None = Field(default=None, max_length=200)
    output_file_id: str | None = Field(default=None, max_length=200)
    error_file_id: str | None = Field(default=None, max_length=200)
    requests: int = 0
    completed: int = 0
    failed: int = 0
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))
    updated_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))


class EconomyReply(SQLModel, table=True):
    """A provider batch's answer to one request (keyed as :mod:`judge.services.economy` keys
    requests): the chat completion, or why there is none (migration 0007)."""

    __tablename__ = "economy_replies"

    batch_id: str = Field(primary_key=True, foreign_key="batches.id", max_length=32)
    key: str = Field(primary_key=True, max_length=64)
    body_json: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    simulated: bool = False
    created_at: datetime = Field(default_factory=utcnow, sa_column=_ts(False))
