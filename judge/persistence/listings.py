"""Listings of a caller's runs, newest first, a page at a time: batches (with their progress
counts, read in the same statement) and calibration or probe runs, filtered by rubric, panel
and status."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, not_, or_, select, true
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from judge.domain.listing import ListFilter
from judge.persistence import jobs as repo
from judge.persistence.canaries import Owners, _owned
from judge.persistence.jobs import BatchProgress, _count_of
from judge.persistence.tables import Batch, CalibrationRun, ProbeRun


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


async def batches_page(
    session: AsyncSession,
    *,
    owners: Owners,
    where: ListFilter,
) -> list[tuple[Batch, BatchProgress]]:
    """A page of plain batches (not a run's), newest first."""
    counts = {s: _count_of(s) for s in (repo.QUEUED, repo.RUNNING, repo.COMPLETED, repo.FAILED)}
    query = select(Batch, *counts.values()).where(col(Batch.kind) == "batch")
    if owners is not None:  # None: every owner
        query = query.where(_owned(col(Batch.owner_key_id), owners))
    if where.status:
        query = query.where(_batch_status(where.status, counts))
    rows = await session.execute(_page(query, Batch, where))
    return [
        (batch, BatchProgress(batch.total, queued, running, completed, failed))
        for batch, queued, running, completed, failed in rows.all()
    ]


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
