"""Bias probe runs (verbosity, order, self-preference), owned by the API key that made them.

Revision ID: 0004_probes
Revises: 0003_ownership
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_probes"
down_revision = "0003_ownership"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "probe_runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("rubric_id", sa.String(100), nullable=False),
        sa.Column("rubric_version", sa.String(20), nullable=False),
        sa.Column("rubric_hash", sa.String(80), nullable=False),
        sa.Column("panel_name", sa.String(100), nullable=False),
        sa.Column("panel_signature", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("batch_id", sa.String(32), sa.ForeignKey("batches.id"), nullable=True),
        sa.Column("owner_key_id", sa.String(32), nullable=True),
        sa.Column("n_items", sa.Integer(), nullable=False),
        sa.Column("simulated", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("options_json", sa.Text(), nullable=False),
        sa.Column("variants_json", sa.Text(), nullable=False),
        sa.Column("flags_json", sa.Text(), nullable=False),
        sa.Column("report_json", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=True),
    )
    op.create_index("ix_probe_lookup", "probe_runs", ["rubric_hash", "kind", "status"])
    op.create_index("ix_probe_runs_owner_key_id", "probe_runs", ["owner_key_id"])


def downgrade() -> None:
    op.drop_index("ix_probe_runs_owner_key_id", "probe_runs")
    op.drop_index("ix_probe_lookup", "probe_runs")
    op.drop_table("probe_runs")
