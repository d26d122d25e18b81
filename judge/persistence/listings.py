"""Listings of a caller's runs, newest first, a page at a time: batches and sessions (with
their progress counts, read in the same statement) and calibration or probe runs, filtered by
rubric, panel and status."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, not_, or_, select, true
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from judge.domain.listing import ListFilter
from judge.persistence import jobs as repo
from judge.persistence.canaries import Owners, _owned
from judge.persistence.jobs import BatchProgress, _count_of
from judge.persistence.tables import Batch, CalibrationRun, ProbeRun, SessionRun


def _batch_status(status: str, counts: dict[str, Any]) -> Any:
    """A batch's status (as :attr:`BatchProgress.status`) as a SQL condition."""
    finished = counts[repo.COMPLETED] + counts[repo.FAILED]
    done = finished >= col(Batch.total)
    if status == repo.COMPLETED:
        return done
    started = or_(counts[repo.RUNNING] > 0, finished > 0)
    if status == repo.RUNNING:
        return and_(not_(done), started)
    return and_(not_(done), not_(started))


def _page(query: Any, table: Any, where: ListFilter) -> Any:
    """``query`` of ``table`` rows of the rubric and panel (when given), newest first, one
    more than the page (:meth:`ListFilter.paged` tells whether there is a next one)."""
    if where.rubric:
        query = query.where(col(table.rubric_id) == where.rubric)
    if where.panel:
        query = query.where(col(table.panel_name) == where.panel)
    order = (col(table.created_at).desc(), col(table.id))
    return query.order_by(*order).offset(where.offset).limit(where.limit + 1)


def _batches_query(owners: Owners, where: ListFilter, *extra: Any) -> tuple[Any, int]:
    """Batches with their progress counts (after ``extra`` columns), of ``owners`` and the
    status; the number of columns before the counts."""
    counts = {s: _count_of(s) for s in (repo.QUEUED, repo.RUNNING, repo.COMPLETED, repo.FAILED)}
    query = select(Batch, *extra, *counts.values())
    if owners is not None:  # None: every owner
        query = query.where(_owned(col(Batch.owner_key_id), owners))
    if where.status:
        query = query.where(_batch_status(where.status, counts))
    return query, 1 + len(extra)


def _progress(batch: Batch, counts: Any) -> BatchProgress:
    queued, running, completed, failed = counts
    return BatchProgress(batch.total, queued, running, completed, failed)


async def batches_page(
    session: AsyncSession,
    *,
    owners: Owners,
    where: ListFilter,
) -> list[tuple[Batch, BatchProgress]]:
    """A page of plain batches (not a run's), newest first."""
    query, _ = _batches_query(owners, where)
    rows = await session.execute(_page(query.where(col(Batch.kind) == "batch"), Batch, where))
    return [(row[0], _progress(row[0], row[1:])) for row in rows.all()]


async def sessions_page(
    session: AsyncSession,
    *,
    owners: Owners,
    where: ListFilter,
) -> list[tuple[SessionRun, Batch, BatchProgress]]:
    """A page of sessions with their batches' progress, newest first."""
    query, skip = _batches_query(owners, where, SessionRun)
    query = query.join(SessionRun, col(SessionRun.batch_id) == col(Batch.id))
    rows = await session.execute(_page(query, Batch, where))
    return [(row[1], row[0], _progress(row[0], row[skip:])) for row in rows.all()]


async def session_of_batch(session: AsyncSession, batch_id: str) -> str | None:
    """The id of the session whose checkpoints are ``batch_id``'s jobs (None: not a session)."""
    found = await session.execute(
        select(col(SessionRun.id)).where(col(SessionRun.batch_id) == batch_id).limit(1)
    )
    return found.scalar_one_or_none()


async def runs_page(
    session: AsyncSession,
    table: type[CalibrationRun] | type[ProbeRun],
    *,
    owners: Owners,
    where: ListFilter,
) -> list[Any]:
    """A page of calibration or probe runs, newest first: those of ``owners`` (and, for
    calibrations, those an admin shared)."""
    query = select(table)
    if owners is not None:
        mine = _owned(col(table.owner_key_id), owners)
        if table is CalibrationRun:
            mine = or_(mine, col(CalibrationRun.shared) == true())
        query = query.where(mine)
    if where.status:
        query = query.where(col(table.status) == where.status)
    rows = await session.execute(_page(query, table, where))
    return list(rows.scalars().all())
