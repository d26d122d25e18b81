"""Provider prompt caching: each stored LLM call keeps the prompt tokens the provider read
from its prompt cache and wrote to it (issue 30).

Revision ID: 0008_prompt_cache
Revises: 0006_reply_provenance
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_prompt_cache"
down_revision = "0007_economy_batches"
branch_labels = None
depends_on = None

_COLUMNS = ("cached_prompt_tokens", "cache_write_tokens")


def upgrade() -> None:
    with op.batch_alter_table("judgments") as batch:
        for name in _COLUMNS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("judgments") as batch:
        for name in reversed(_COLUMNS):
            batch.drop_column(name)
