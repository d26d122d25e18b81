"""Economy batches: a batch's ``mode``, the provider batches it was sent as, and their replies
(issue 30).

Revision ID: 0007_economy_batches
Revises: 0006_reply_provenance
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_economy_batches"
down_revision = "0006_reply_provenance"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("batches") as batch:
        batch.add_column(
            sa.Column("mode", sa.String(16), nullable=False, server_default="interactive")
        )
    op.create_table(
        "provider_batches",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("batch_id", sa.String(32), sa.ForeignKey("batches.id"), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("provider_batch_id", sa.String(200), nullable=True),
        sa.Column("input_file_id", sa.String(200), nullable=True),
        sa.Column("output_file_id", sa.String(200), nullable=True),
        sa.Column("error_file_id", sa.String(200), nullable=True),
        sa.Column("requests", sa.Integer(), nullable=False),
        sa.Column("completed", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.UniqueConstraint("batch_id", "model", name="uq_provider_batches_model"),
    )
    op.create_index("ix_provider_batches_batch_id", "provider_batches", ["batch_id"])
    op.create_table(
        "economy_replies",
        sa.Column("batch_id", sa.String(32), sa.ForeignKey("batches.id"), primary_key=True),
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("body_json", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("simulated", sa.Boolean(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("economy_replies")
    op.drop_index("ix_provider_batches_batch_id", table_name="provider_batches")
    op.drop_table("provider_batches")
    with op.batch_alter_table("batches") as batch:
        batch.drop_column("mode")
