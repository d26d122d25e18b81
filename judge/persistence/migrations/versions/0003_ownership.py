"""Ownership and fault tolerance: jobs, batches, calibration runs and canaries record the API
key that created them; the job outbox; idempotency keys of submissions.

Revision ID: 0003_ownership
Revises: 0002_calibration_evidence
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_ownership"
down_revision = "0002_calibration_evidence"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)
OWNED = ("batches", "calibration_runs", "canaries")


def upgrade() -> None:
    for table in (*OWNED, "score_jobs"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("owner_key_id", sa.String(32), nullable=True))
    for table in OWNED:
        op.create_index(f"ix_{table}_owner_key_id", table, ["owner_key_id"])
    op.create_index("ix_score_jobs_owner_status", "score_jobs", ["owner_key_id", "status"])
    op.create_table(
        "job_outbox",
        sa.Column("job_id", sa.String(32), primary_key=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_job_outbox_created_at", "job_outbox", ["created_at"])
    op.create_table(
        "idempotency_keys",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("owner_key_id", sa.String(32), nullable=True),
        sa.Column("route", sa.String(32), nullable=False),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("resource_id", sa.String(32), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_idempotency_keys_created_at", "idempotency_keys", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_idempotency_keys_created_at", "idempotency_keys")
    op.drop_table("idempotency_keys")
    op.drop_index("ix_job_outbox_created_at", "job_outbox")
    op.drop_table("job_outbox")
    op.drop_index("ix_score_jobs_owner_status", "score_jobs")
    for table in OWNED:
        op.drop_index(f"ix_{table}_owner_key_id", table)
    for table in (*OWNED, "score_jobs"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("owner_key_id")
