"""Reply provenance: a cached LLM reply remembers whether the simulator sent it, so a cache hit
keeps its run ``simulated`` (issue 23).

Revision ID: 0006_reply_provenance
Revises: 0005_shared_calibrations
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_reply_provenance"
down_revision = "0005_shared_calibrations"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("llm_cache") as batch:
        batch.add_column(
            sa.Column("simulated", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("llm_cache") as batch:
        batch.drop_column("simulated")
