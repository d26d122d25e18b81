"""Calibration evidence: runs know whether a simulator persona was on the panel, and are looked
up by rubric content hash and panel signature.

Revision ID: 0002_calibration_evidence
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_calibration_evidence"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("calibration_runs") as batch:
        batch.add_column(
            sa.Column("simulated", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_index("ix_calibration_hash", "calibration_runs", ["rubric_hash", "status"])


def downgrade() -> None:
    op.drop_index("ix_calibration_hash", "calibration_runs")
    with op.batch_alter_table("calibration_runs") as batch:
        batch.drop_column("simulated")
