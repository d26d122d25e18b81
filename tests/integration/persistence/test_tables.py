"""Stored timestamps read back as timezone-aware UTC on every database (SQLite keeps no zone)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.persistence.tables import ScoreJob
from tests.fixtures.stacks import sqlite_url

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_timestamps_come_back_aware_in_utc(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = sqlite_url(tmp_path) if backend == "sqlite" else request.getfixturevalue("postgres_url")
    # written in another zone: stored and read as the same instant, in UTC
    created = datetime(2026, 12, 1, 23, 30, tzinfo=timezone(timedelta(hours=-5)))

    async def run() -> ScoreJob | None:
        database = Database(url, pool_size=1)
        try:
            await database.upgrade()
            job = ScoreJob(
                id=uuid.uuid4().hex, rubric_id="epitome", rubric_version="1", rubric_hash="h",
                panel_name="p", panel_signature="[]", item_json="{}", created_at=created,
            )  # fmt: skip
            await repo.insert_skipping_refused(database, [], [job])
            async with database.session() as session:
                return await repo.get_job(session, job.id)
        finally:
            await database.dispose()

    job = asyncio.run(run())
    assert job is not None
    assert job.created_at.tzinfo is not None
    assert job.created_at.utcoffset() == timedelta(0)
    assert job.created_at == created
    assert job.created_at.isoformat() == "2026-12-02T04:30:00+00:00"
    assert job.enqueued_at.tzinfo is not None
    assert job.enqueued_at <= datetime.now(UTC)
