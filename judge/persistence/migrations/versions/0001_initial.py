"""Initial schema: batches, score jobs, judgments, the LLM call cache, API keys, calibration runs.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "batches",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("rubric_id", sa.String(100), nullable=False),
        sa.Column("rubric_version", sa.String(20), nullable=False),
        sa.Column("rubric_hash", sa.String(80), nullable=False),
        sa.Column("panel_name", sa.String(100), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("rejected", sa.Integer(), nullable=False),
        sa.Column("rejections_json", sa.Text(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=True),
    )
    op.create_table(
        "score_jobs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("batch_id", sa.String(32), sa.ForeignKey("batches.id"), nullable=True),
        sa.Column("position", sa.Integer(), nullable=True),
        sa.Column("item_id", sa.String(200), nullable=True),
        sa.Column("rubric_id", sa.String(100), nullable=False),
        sa.Column("rubric_version", sa.String(20), nullable=False),
        sa.Column("rubric_hash", sa.String(80), nullable=False),
        sa.Column("panel_name", sa.String(100), nullable=False),
        sa.Column("panel_signature", sa.Text(), nullable=False),
        sa.Column("item_json", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("use_cache", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("result_json", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("enqueued_at", TS, nullable=False),
        sa.Column("started_at", TS, nullable=True),
        sa.Column("finished_at", TS, nullable=True),
        sa.Column("lease_until", TS, nullable=True),
    )
    op.create_index("ix_score_jobs_batch_status", "score_jobs", ["batch_id", "status"])
    op.create_index("ix_score_jobs_status_enqueued", "score_jobs", ["status", "enqueued_at"])
    op.create_table(
        "judgments",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("job_id", sa.String(32), sa.ForeignKey("score_jobs.id"), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("resolved_model", sa.String(200), nullable=True),
        sa.Column("params_json", sa.Text(), nullable=False),
        sa.Column("prompt_hash", sa.String(64), nullable=False),
        sa.Column("purpose", sa.String(16), nullable=False),
        sa.Column("outcome", sa.String(32), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("raw_reply", sa.Text(), nullable=True),
        sa.Column("ratings_json", sa.Text(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_judgments_job_id", "judgments", ["job_id"])
    op.create_table(
        "llm_cache",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("resolved_model", sa.String(200), nullable=True),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("scopes", sa.String(200), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("revoked_at", TS, nullable=True),
        sa.Column("last_used_at", TS, nullable=True),
    )
    op.create_index("ix_api_keys_prefix", "api_keys", ["prefix"])
    op.create_table(
        "canaries",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("rubric_id", sa.String(100), nullable=False),
        sa.Column("panel_name", sa.String(100), nullable=False),
        sa.Column("baseline_run_id", sa.String(32), nullable=False),
        sa.Column("interval_s", sa.Float(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("last_run_at", TS, nullable=True),
    )
    op.create_table(
        "calibration_runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("rubric_id", sa.String(100), nullable=False),
        sa.Column("rubric_version", sa.String(20), nullable=False),
        sa.Column("rubric_hash", sa.String(80), nullable=False),
        sa.Column("panel_name", sa.String(100), nullable=False),
        sa.Column("panel_signature", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("label", sa.String(200), nullable=True),
        sa.Column("batch_id", sa.String(32), sa.ForeignKey("batches.id"), nullable=True),
        sa.Column("canary_id", sa.String(32), sa.ForeignKey("canaries.id"), nullable=True),
        sa.Column("n_items", sa.Integer(), nullable=False),
        sa.Column("labels_json", sa.Text(), nullable=False),
        sa.Column("dimensions_json", sa.Text(), nullable=False),
        sa.Column("report_json", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=True),
    )
    op.create_index(
        "ix_calibration_lookup", "calibration_runs", ["rubric_id", "rubric_version", "status"]
    )


def downgrade() -> None:
    op.drop_index("ix_calibration_lookup", "calibration_runs")
    op.drop_table("calibration_runs")
    op.drop_table("canaries")
    op.drop_table("api_keys")
    op.drop_table("llm_cache")
    op.drop_index("ix_judgments_job_id", "judgments")
    op.drop_table("judgments")
    op.drop_index("ix_score_jobs_status_enqueued", "score_jobs")
    op.drop_index("ix_score_jobs_batch_status", "score_jobs")
    op.drop_table("score_jobs")
    op.drop_table("batches")
