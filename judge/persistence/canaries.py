"""Queries for canaries and the calibration history they are shown in."""

from __future__ import annotations

from typing import Any

from sqlalchemy import false, or_, select, true, update
from sqlmodel import col

from judge.persistence.database import Database
from judge.persistence.tables import CalibrationRun, Canary, utcnow

#: owner filters: every row (an admin), or the rows of these owners (None: created keyless)
Owners = tuple[str | None, ...] | None
ALL: Owners = None


def _owned(column: Any, owners: tuple[str | None, ...]) -> Any:
    keyed = [o for o in owners if o is not None]
    conditions = [column.in_(keyed)] if keyed else []
    if None in owners:
        conditions.append(column.is_(None))
    return or_(*conditions) if conditions else false()


async def add(database: Database, canary: Canary) -> None:
    async with database.session() as session:
        session.add(canary)
        await session.commit()


async def get(database: Database, canary_id: str) -> Canary | None:
    async with database.session() as session:
        return await session.get(Canary, canary_id)


async def mark_started(database: Database, canary_id: str) -> None:
    async with database.session() as session:
        await session.execute(
            update(Canary).where(col(Canary.id) == canary_id).values(last_run_at=utcnow())
        )
        await session.commit()


async def listed(
    database: Database, rubric_id: str | None = None, *, owners: Owners = ALL
) -> list[Canary]:
    """Canaries (of one rubric, when given) of the given owners, oldest first."""
    query = select(Canary).order_by(col(Canary.created_at))
    if rubric_id:
        query = query.where(col(Canary.rubric_id) == rubric_id)
    if owners is not None:  # None: ALL
        query = query.where(_owned(col(Canary.owner_key_id), owners))
    async with database.session() as session:
        rows = await session.execute(query)
        return list(rows.scalars().all())


async def calibration_runs(
    database: Database, rubric_id: str, *, owners: Owners, offset: int, limit: int
) -> list[CalibrationRun]:
    """Up to ``limit`` calibration runs of a rubric from ``offset``, oldest first: those of
    ``owners`` and those an admin shared."""
    query = select(CalibrationRun).where(col(CalibrationRun.rubric_id) == rubric_id)
    if owners is not None:  # None: ALL
        shared = col(CalibrationRun.shared) == true()
        query = query.where(or_(_owned(col(CalibrationRun.owner_key_id), owners), shared))
    async with database.session() as session:
        rows = await session.execute(
            query.order_by(col(CalibrationRun.created_at), col(CalibrationRun.id))
            .offset(offset)
            .limit(limit)
        )
        return list(rows.scalars().all())
