"""Calibration runs scoped to their owner: an admin may publish a run for every key
(``shared``, with who last decided and when), and every such decision is recorded.

Revision ID: 0005_shared_calibrations
Revises: 0004_probes
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_shared_calibrations"
down_revision = "0004_probes"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("calibration_runs") as batch:
        batch.add_column(
            sa.Column("shared", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("shared_by", sa.String(32), nullable=True))
        batch.add_column(sa.Column("shared_at", TS, nullable=True))
    op.create_table(
        "calibration_shares",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(32), sa.ForeignKey("calibration_runs.id"), nullable=False),
        sa.Column("shared", sa.Boolean(), nullable=False),
        sa.Column("by_key_id", sa.String(32), nullable=True),
        sa.Column("at", TS, nullable=False),
    )
    op.create_index("ix_calibration_shares_run_id", "calibration_shares", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_calibration_shares_run_id", "calibration_shares")
    op.drop_table("calibration_shares")
    with op.batch_alter_table("calibration_runs") as batch:
        batch.drop_column("shared_at")
        batch.drop_column("shared_by")
        batch.drop_column("shared")
