"""Queries for economy batches: jobs held for a provider batch, the provider batches (one per
judge model), their replies, and the release of the held jobs once every reply is in.

Every step is a guarded statement, so two processes polling at once (two Celery workers)
neither create a provider batch twice nor store its replies twice, and a process that stops
between two steps leaves a state the next poll continues from."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, exists, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from judge.persistence import jobs as repo
from judge.persistence.tables import (
    Batch,
    EconomyReply,
    JobOutbox,
    ProviderBatchRow,
    ScoreJob,
    utcnow,
)

#: a job of an economy batch waiting for its provider batch (not claimable, not swept)
HELD = repo.HELD
ECONOMY = "economy"
PREPARING = "preparing"
FETCHED = "fetched"
#: provider states after which only fetching remains
PROVIDER_FINAL = ("completed", "failed", "expired", "cancelled")


async def batches_to_submit(session: AsyncSession, *, limit: int = 20) -> list[str]:
    """Economy batches with held jobs and no provider batch yet."""
    held = exists().where(col(ScoreJob.batch_id) == col(Batch.id), col(ScoreJob.status) == HELD)
    started = exists().where(col(ProviderBatchRow.batch_id) == col(Batch.id))
    result = await session.execute(
        select(col(Batch.id)).where(col(Batch.mode) == ECONOMY, held, ~started).limit(limit)
    )
    return list(result.scalars().all())


async def batches_to_release(session: AsyncSession, *, limit: int = 20) -> list[str]:
    """Economy batches with held jobs whose every provider batch is fetched."""
    held = exists().where(col(ScoreJob.batch_id) == col(Batch.id), col(ScoreJob.status) == HELD)
    started = exists().where(col(ProviderBatchRow.batch_id) == col(Batch.id))
    open_rows = exists().where(
        col(ProviderBatchRow.batch_id) == col(Batch.id), col(ProviderBatchRow.status) != FETCHED
    )
    result = await session.execute(
        select(col(Batch.id))
        .where(col(Batch.mode) == ECONOMY, held, started, ~open_rows)
        .limit(limit)
    )
    return list(result.scalars().all())


async def claim_submission(
    session: AsyncSession, batch_id: str, rows: Sequence[ProviderBatchRow]
) -> bool:
    """Record ``rows`` (status ``preparing``) for ``batch_id``; False when another process
    claimed the batch first (the unique (batch, model) constraint refuses the second)."""
    session.add_all(list(rows))
    try:
        await session.commit()
    except IntegrityError:
        await session.rollback()
        return False
    return True


async def reclaim_stale(session: AsyncSession, *, before: datetime) -> list[ProviderBatchRow]:
    """``preparing`` rows untouched since ``before`` (their process stopped before creating
    the provider batch): taken again, with a fresh ``updated_at``. (A read first: the poller
    asks every few seconds and there is almost never one, so it writes nothing then.)"""
    stale = and_(
        col(ProviderBatchRow.status) == PREPARING, col(ProviderBatchRow.updated_at) < before
    )
    if not (await session.execute(select(exists().where(stale)))).scalar():
        return []
    ids = (
        await session.execute(
            update(ProviderBatchRow)
            .where(stale)
            .values(updated_at=utcnow())
            .returning(col(ProviderBatchRow.id))
        )
    ).scalars()
    found = list(ids)
    await session.commit()
    if not found:
        return []
    rows = await session.scalars(
        select(ProviderBatchRow).where(col(ProviderBatchRow.id).in_(found))
    )
    return list(rows)


async def held_jobs(session: AsyncSession, batch_id: str) -> list[ScoreJob]:
    result = await session.scalars(
        select(ScoreJob)
        .where(col(ScoreJob.batch_id) == batch_id, col(ScoreJob.status) == HELD)
        .order_by(col(ScoreJob.position))
    )
    return list(result.all())


async def update_row(session: AsyncSession, row_id: str, **values: Any) -> None:
    await session.execute(
        update(ProviderBatchRow)
        .where(col(ProviderBatchRow.id) == row_id)
        .values(updated_at=utcnow(), **values)
    )
    await session.commit()


async def pollable(session: AsyncSession, *, limit: int = 100) -> list[ProviderBatchRow]:
    """Provider batches created at the provider whose replies are not stored yet."""
    result = await session.scalars(
        select(ProviderBatchRow)
        .where(
            col(ProviderBatchRow.provider_batch_id).is_not(None),
            col(ProviderBatchRow.status).not_in([PREPARING, FETCHED]),
        )
        .order_by(col(ProviderBatchRow.updated_at))
        .limit(limit)
    )
    return list(result.all())


async def store_replies(
    session: AsyncSession, row: ProviderBatchRow, replies: Sequence[dict[str, Any]], **values: Any
) -> bool:
    """Mark ``row`` fetched and store its replies, in one transaction; False (nothing stored)
    when another process stored them first."""
    marked = await session.execute(
        update(ProviderBatchRow)
        .where(col(ProviderBatchRow.id) == row.id, col(ProviderBatchRow.status) != FETCHED)
        .values(status=FETCHED, updated_at=utcnow(), **values)
    )
    if getattr(marked, "rowcount", 0) != 1:
        await session.rollback()
        return False
    known = set(
        (
            await session.execute(
                select(col(EconomyReply.key)).where(col(EconomyReply.batch_id) == row.batch_id)
            )
        ).scalars()
    )
    fresh = [r for r in replies if r["key"] not in known]
    now = utcnow()
    for start in range(0, len(fresh), 500):
        chunk = [
            {"batch_id": row.batch_id, "created_at": now, **r} for r in fresh[start : start + 500]
        ]
        await session.execute(insert(EconomyReply), chunk)
    await session.commit()
    return True


async def release(session: AsyncSession, batch_id: str) -> list[str]:
    """When every provider batch of ``batch_id`` is fetched: its held jobs become queued (with
    their outbox rows, so a crash before they are sent leaves them to the drainer). The ids
    released, for the caller to dispatch."""
    unfinished = exists().where(
        col(ProviderBatchRow.batch_id) == batch_id, col(ProviderBatchRow.status) != FETCHED
    )
    if (await session.execute(select(unfinished))).scalar():
        return []
    ids = list(
        (
            await session.execute(
                update(ScoreJob)
                .where(and_(col(ScoreJob.batch_id) == batch_id, col(ScoreJob.status) == HELD))
                .values(status=repo.QUEUED, enqueued_at=utcnow())
                .returning(col(ScoreJob.id))
            )
        ).scalars()
    )
    now = utcnow()
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        # a row left from the submission (never sent: held) is replaced, not duplicated
        await session.execute(delete(JobOutbox).where(col(JobOutbox.job_id).in_(part)))
        chunk = [{"job_id": job_id, "created_at": now} for job_id in part]
        await session.execute(insert(JobOutbox), chunk)
    await session.commit()
    return ids


async def reply(session: AsyncSession, batch_id: str, key: str) -> EconomyReply | None:
    return await session.get(EconomyReply, (batch_id, key))


async def provider_batches(session: AsyncSession, batch_id: str) -> list[ProviderBatchRow]:
    result = await session.scalars(
        select(ProviderBatchRow)
        .where(col(ProviderBatchRow.batch_id) == batch_id)
        .order_by(col(ProviderBatchRow.model))
    )
    return list(result.all())


async def count_held(session: AsyncSession, batch_id: str) -> int:
    result = await session.execute(
        select(func.count())
        .select_from(ScoreJob)
        .where(col(ScoreJob.batch_id) == batch_id, col(ScoreJob.status) == HELD)
    )
    return int(result.scalar_one())


async def fail_held(session: AsyncSession, batch_id: str, error: str) -> int:
    """Fail a cancelled economy batch's held jobs; how many."""
    result = await session.execute(
        update(ScoreJob)
        .where(col(ScoreJob.batch_id) == batch_id, col(ScoreJob.status) == HELD)
        .values(status=repo.FAILED, error=error, finished_at=utcnow())
    )
    await session.commit()
    return int(getattr(result, "rowcount", 0) or 0)
