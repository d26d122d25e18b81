"""Sessions: a whole multi-party session scored checkpoint by checkpoint as a batch of kind
``session`` (issue 31).

Revision ID: 0009_sessions
Revises: 0006_reply_provenance
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_sessions"
down_revision = "0008_prompt_cache"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("batch_id", sa.String(32), sa.ForeignKey("batches.id"), nullable=False),
        sa.Column("owner_key_id", sa.String(32), nullable=True),
        sa.Column("supporter", sa.String(200), nullable=False),
        sa.Column("session_json", sa.Text(), nullable=False),
        sa.Column("plan_json", sa.Text(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_sessions_owner_key_id", "sessions", ["owner_key_id"])


def downgrade() -> None:
    op.drop_index("ix_sessions_owner_key_id", "sessions")
    op.drop_table("sessions")
