"""The job path's queries against real SQLite and PostgreSQL: one-statement claims, the
batch status read in one statement, and status reads that do not queue behind the jobs for a
connection of the main pool."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import literal, select, update
from sqlmodel import col

from judge.domain.result import CallRecord
from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.persistence.tables import Batch, ScoreJob
from tests.fixtures.stacks import sqlite_url

pytestmark = pytest.mark.integration
BACKENDS = ["sqlite", "postgresql"]


def _url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    return sqlite_url(tmp_path) if backend == "sqlite" else request.getfixturevalue("postgres_url")


def _with_database(url: str, body: Callable[[Database], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        database = Database(url, pool_size=1)
        try:
            await database.upgrade()
            return await body(database)
        finally:
            await database.dispose()

    return asyncio.run(run())


def _job(batch_id: str | None = None, position: int | None = None) -> ScoreJob:
    return ScoreJob(
        id=uuid.uuid4().hex, rubric_id="epitome", rubric_version="1", rubric_hash="h",
        panel_name="p", panel_signature="[]", item_json='{"x": 1}', batch_id=batch_id,
        position=position,
    )  # fmt: skip


def _call(cost_usd: float) -> CallRecord:
    return CallRecord(
        requested_model="openai/accurate", resolved_model="accurate", params={},
        prompt_hash="h", purpose="judge", prompt_tokens=10, completion_tokens=5,
        cost_usd=cost_usd, latency_ms=1.0, attempts=1, outcome="ok",
    )  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_claim_returns_the_claimed_job_and_a_second_claim_is_busy(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async def body(database: Database) -> tuple[repo.Claim, repo.Claim]:
        job = _job()
        await repo.insert_skipping_refused(database, [], [job])
        async with database.session() as session:
            first = await repo.claim_job(session, job.id, lease_s=60, max_attempts=5)
        async with database.session() as session:
            second = await repo.claim_job(session, job.id, lease_s=60, max_attempts=5)
        return first, second

    first, second = _with_database(_url(backend, tmp_path, request), body)
    assert first.outcome == repo.CLAIMED
    assert first.job is not None
    assert (first.job.status, first.job.attempts, first.job.item_json) == ("running", 1, '{"x": 1}')
    assert first.job.lease_until is not None
    assert first.job.started_at is not None
    assert second == repo.Claim(repo.BUSY, None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_batch_and_its_progress_are_read_together(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async def body(database: Database) -> Any:
        batch = Batch(
            id=uuid.uuid4().hex, rubric_id="epitome", rubric_version="1", rubric_hash="h",
            panel_name="p", total=4,
        )  # fmt: skip
        jobs = [_job(batch.id, n) for n in range(4)]
        await repo.insert_skipping_refused(database, [batch], jobs)
        async with database.session() as session:
            await repo.claim_job(session, jobs[0].id, lease_s=60, max_attempts=5)
            await repo.claim_job(session, jobs[1].id, lease_s=60, max_attempts=5)
            calls = [_call(0.25), _call(0.5)]
            await repo.finish_job(
                session, jobs[1].id, result_json="{}", calls=calls, ratings_by_model={}
            )
            await repo.fail_job(session, jobs[2].id, "x")
        found = repo.batch_and_progress(
            await database.read_row(repo.batch_with_progress_query(batch.id))
        )
        missing = repo.batch_and_progress(
            await database.read_row(repo.batch_with_progress_query("0" * 32))
        )
        return found, missing

    found, missing = _with_database(_url(backend, tmp_path, request), body)
    assert missing is None
    batch, progress = found
    assert batch.total == 4
    # the cost so far: the finished job's calls
    assert progress == repo.BatchProgress(
        total=4, queued=1, running=1, completed=1, failed=1, cost_usd=0.75
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_status_read_does_not_wait_for_the_jobs_connections(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Every connection of the main pool checked out (a busy batch): a read still answers."""

    async def body(database: Database) -> int:
        pool: Any = database.engine.pool
        async with AsyncExitStack() as held:
            for _ in range(pool.size() + pool._max_overflow):
                await held.enter_async_context(database.engine.connect())
            assert pool.checkedout() == pool.size() + pool._max_overflow

            row = await asyncio.wait_for(database.read_row(select(literal(1))), timeout=10)
            assert row is not None
            return int(row[0])

    assert _with_database(_url(backend, tmp_path, request), body) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_status_read_answers_during_a_write_and_sees_only_what_was_committed(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A job's result written but not yet committed (the writer's lock held): the status read
    answers with the committed progress, and sees the result once it is committed."""

    async def body(database: Database) -> tuple[int, int]:
        batch = Batch(
            id=uuid.uuid4().hex, rubric_id="epitome", rubric_version="1", rubric_hash="h",
            panel_name="p", total=1,
        )  # fmt: skip
        job = _job(batch.id, 0)
        await repo.insert_skipping_refused(database, [batch], [job])
        query = repo.batch_with_progress_query(batch.id)
        async with database.session() as session:
            await repo.claim_job(session, job.id, lease_s=60, max_attempts=5)
        async with database.engine.connect() as writer:
            await writer.execute(
                update(ScoreJob).where(col(ScoreJob.id) == job.id).values(status="completed")
            )
            during = repo.batch_and_progress(
                await asyncio.wait_for(database.read_row(query), timeout=10)
            )
            await writer.commit()
        after = repo.batch_and_progress(await database.read_row(query))
        assert during is not None
        assert after is not None
        return during[1].completed, after[1].completed

    assert _with_database(_url(backend, tmp_path, request), body) == (0, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_job_read_apart_from_the_jobs_pool_is_the_row_as_last_committed(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """What a score's answer and ``GET /v1/scores/{id}`` read: the finished job, with its
    result, right after the finishing transaction committed; nothing for an unknown id."""

    async def body(database: Database) -> tuple[Any, Any]:
        job = _job()
        await repo.insert_skipping_refused(database, [], [job])
        async with database.session() as session:
            await repo.claim_job(session, job.id, lease_s=60, max_attempts=5)
            await repo.finish_job(
                session, job.id, result_json='{"ok": 1}', calls=[], ratings_by_model={}
            )
        found = await database.read_row(repo.job_query(job.id))
        missing = await database.read_row(repo.job_query("0" * 32))
        return found, missing

    found, missing = _with_database(_url(backend, tmp_path, request), body)
    assert missing is None
    assert found is not None
    assert (found[0].status, found[0].result_json) == ("completed", '{"ok": 1}')
