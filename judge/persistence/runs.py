"""What calibration runs and probe runs share in storage: a run is a row (``running`` until its
report is stored, then ``completed``) over a batch of score jobs.

The report is stored once, by a guarded update: a worker finishing the last job and the sweep
that catches runs left unreported may compute it at the same moment; only the first stores it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from sqlalchemy import exists, select, update
from sqlmodel import col

from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.persistence.tables import CalibrationRun, ProbeRun, ScoreJob, utcnow

RUNNING, COMPLETED = "running", "completed"
Run = TypeVar("Run", CalibrationRun, ProbeRun)
RunTable = type[CalibrationRun] | type[ProbeRun]


@dataclass(frozen=True)
class FinishedRun(Generic[Run]):
    """A run every job of which has finished, whose report is not stored yet."""

    run: Run
    jobs: list[ScoreJob]
    failed: int


async def get_run(database: Database, table: type[Run], run_id: str) -> Run | None:
    async with database.session() as session:
        return await session.get(table, run_id)


async def owner_of(database: Database, table: RunTable, run_id: str) -> tuple[bool, str | None]:
    """Whether the run exists, and the key that started it (None: created keyless)."""
    async with database.session() as session:
        rows = await session.execute(select(col(table.owner_key_id)).where(col(table.id) == run_id))
        found = rows.first()
    return found is not None, found[0] if found is not None else None


async def run_of_batch(database: Database, table: RunTable, batch_id: str) -> str | None:
    """The id of the run whose jobs make up the batch, if any."""
    async with database.session() as session:
        rows = await session.execute(select(col(table.id)).where(col(table.batch_id) == batch_id))
        return rows.scalars().first()


async def with_jobs(
    database: Database, table: type[Run], run_id: str
) -> tuple[Run, list[ScoreJob]]:
    """A run and its jobs in submission order; LookupError when there is none."""
    async with database.session() as session:
        run = await session.get(table, run_id)
        if run is None or run.batch_id is None:
            raise LookupError(run_id)
        return run, [job async for job in repo.iter_batch_jobs(session, run.batch_id)]


async def finished_unreported(
    database: Database, table: type[Run], run_id: str
) -> FinishedRun[Run] | None:
    """The run with its jobs when it is still ``running`` and every job has finished; None
    when there is no such run, its report is stored or a job is still to run."""
    async with database.session() as session:
        run = await session.get(table, run_id)
        if run is None or run.status != RUNNING or run.batch_id is None:
            return None
        found = await repo.batch_with_progress(session, run.batch_id)
        if found is None or not found[1].done:
            return None
        progress = found[1]
        jobs = [job async for job in repo.iter_batch_jobs(session, run.batch_id)]
    return FinishedRun(run, jobs, progress.failed)


async def complete(
    database: Database,
    table: type[Run],
    run_id: str,
    report: dict[str, Any],
    **values: str | bool,
) -> bool:
    """Store the report (and ``values``: the columns scoring reads) once; True in the process
    whose update stored it."""
    async with database.session() as session:
        stored = await session.execute(
            update(table)
            .where(col(table.id) == run_id, col(table.status) == RUNNING)
            .values(
                status=COMPLETED,
                report_json=json.dumps(report, ensure_ascii=False),
                finished_at=utcnow(),
                **values,
            )
        )
        await session.commit()
    return bool(getattr(stored, "rowcount", 0))


async def unreported(
    database: Database, table: RunTable, *, finished_before: datetime, limit: int = 100
) -> list[str]:
    """Runs still ``running`` although no job of theirs is left to run and none finished
    since ``finished_before``: the process that finished the last job stopped before it
    stored the report."""
    same_batch = col(ScoreJob.batch_id) == col(table.batch_id)
    to_run = exists().where(same_batch, col(ScoreJob.status).in_([repo.QUEUED, repo.RUNNING]))
    recent = exists().where(same_batch, col(ScoreJob.finished_at) >= finished_before)
    async with database.session() as session:
        rows = await session.execute(
            select(col(table.id))
            .where(
                col(table.status) == RUNNING,
                col(table.batch_id).is_not(None),
                ~to_run,
                ~recent,
            )
            .limit(limit)
        )
        return list(rows.scalars().all())
