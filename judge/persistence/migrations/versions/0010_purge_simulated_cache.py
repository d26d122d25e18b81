"""Purge cached replies that came from the LLM simulator but are stored as real (issue 23).

Before migration 0006 a cached reply did not record where it came from, and before the cache
key included the judge's ``api_base`` a judge that reached the simulator through its
``api_base`` stored its replies under the key of the same model on the provider's own
endpoint: a real panel could be served the simulator's replies from the cache and its run be
stored as real. Those rows are recognised by the simulator's mark in the reply itself (every
simulated rationale starts with ``[simulated ``, so the reply holds a JSON string that
starts so) on a row that says ``simulated = false``; they
are deleted (a cache row is only a saved call: the next request calls the judge again). Rows
written since 0006 with the mark are ``simulated = true`` under an ``api_base`` key and stay.

Revision ID: 0010_purge_simulated_cache
Revises: 0006_reply_provenance
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_purge_simulated_cache"
down_revision = "0009_sessions"
branch_labels = None
depends_on = None

#: the simulator's mark at the start of a JSON string (every rationale it writes starts with
#: it: judge/simulator/engine.py); "[" is no wildcard in SQLite's or PostgreSQL's LIKE
SIMULATED_MARK = '%"[simulated %'


def upgrade() -> None:
    cache = sa.table(
        "llm_cache",
        sa.column("simulated", sa.Boolean()),
        sa.column("content", sa.Text()),
    )
    op.execute(
        cache.delete().where(cache.c.simulated == sa.false(), cache.c.content.like(SIMULATED_MARK))
    )


def downgrade() -> None:
    """Nothing to restore: the purged rows were cached calls, not records."""
