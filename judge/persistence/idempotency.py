"""Idempotency keys of submissions: which resource a (key owner, route, Idempotency-Key)
created, and a digest of the request that created it. Rows are written in the transaction
that creates the resource (see ``JobService.submit_*``), so a client whose request died
after the commit gets the first submission back when it retries."""

from __future__ import annotations

import hashlib
from datetime import timedelta

from sqlalchemy import delete
from sqlmodel import col

from judge.persistence.database import Database
from judge.persistence.tables import IdempotencyRecord, utcnow


def record_id(owner: str | None, route: str, key: str) -> str:
    return hashlib.sha256(f"{owner or ''}\x00{route}\x00{key}".encode()).hexdigest()


async def find(database: Database, rid: str, *, ttl_s: float) -> IdempotencyRecord | None:
    """The live record (one older than ``ttl_s`` is deleted and not returned)."""
    async with database.session() as session:
        found = await session.get(IdempotencyRecord, rid)
        if found is None:
            return None
        if found.created_at + timedelta(seconds=ttl_s) >= utcnow():
            return found
        await session.delete(found)
        await session.commit()
        return None


async def purge_expired(database: Database, *, ttl_s: float) -> int:
    async with database.session() as session:
        result = await session.execute(
            delete(IdempotencyRecord).where(
                col(IdempotencyRecord.created_at) < utcnow() - timedelta(seconds=ttl_s)
            )
        )
        await session.commit()
    return int(getattr(result, "rowcount", 0) or 0)
