"""The API's quota counts, one statement on SQLite and PostgreSQL: all queued jobs, and one
owner's unfinished ones (queued, running, held), never finished ones or another owner's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlmodel import col

from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.persistence.economy import HELD
from judge.persistence.tables import ScoreJob
from tests.integration.persistence.test_jobs import BACKENDS, _job, _url, _with_database

pytestmark = pytest.mark.integration


def _owned(owner: str | None, status: str) -> ScoreJob:
    job = _job()
    job.owner_key_id, job.status = owner, status
    return job


@pytest.mark.parametrize("backend", BACKENDS)
def test_queue_counts_are_the_queue_and_the_owners_unfinished_jobs(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    statuses = [repo.QUEUED, repo.QUEUED, repo.RUNNING, HELD, repo.COMPLETED, repo.FAILED]

    async def body(database: Database) -> Any:
        jobs = [_owned("k1", s) for s in statuses]
        jobs += [_owned("k2", repo.QUEUED), _owned(None, repo.RUNNING)]
        await repo.insert_skipping_refused(database, [], jobs)
        async with database.session() as session:
            for job in jobs:  # as stored, whatever the insert's defaults
                await session.execute(
                    update(ScoreJob).where(col(ScoreJob.id) == job.id).values(status=job.status)
                )
            await session.commit()
            return [await repo.queue_counts(session, o) for o in ("k1", "k2", None, "k3")]

    counts = _with_database(_url(backend, tmp_path, request), body)
    assert counts == [(3, 4), (3, 1), (3, 1), (3, 0)]
