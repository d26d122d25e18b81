"""Waiters for jobs are woken by completion notices, share one look at the database for
notices that were lost, and leave nothing behind when their wait ends or is cancelled. On a
real SQLite database (jobs submitted through the job service, nothing run)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlmodel import col

from judge.persistence.tables import ScoreJob
from judge.runtime.composition import ServiceRuntime, build_runtime
from judge.runtime.in_process import JobWaiter
from judge.sample_conversations import load_sample
from judge.services import schema
from judge.settings import load_settings

pytestmark = pytest.mark.integration


@contextlib.asynccontextmanager
async def runtime_with_jobs(
    tmp_path: Path, count: int
) -> AsyncIterator[tuple[ServiceRuntime, list[str]]]:
    settings = load_settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'waiter.db'}",
        simulator={"url": "http://127.0.0.1:9/v1"},
    )
    await schema.upgrade(settings.database_url)
    runtime = build_runtime(settings)
    try:
        ids = []
        for _ in range(count):
            job = await runtime.jobs.submit_score(
                rubric_id="epitome", raw_item=load_sample("reddit_style_post.json"), panel_name=None
            )
            ids.append(job.id)
        yield runtime, ids
    finally:
        await runtime.close()


async def finish(runtime: ServiceRuntime, job_ids: Sequence[str]) -> None:
    """Mark jobs failed in the database without telling anyone (a lost notice)."""
    async with runtime.database.session() as session:
        await session.execute(
            update(ScoreJob).where(col(ScoreJob.id).in_(job_ids)).values(status="failed")
        )
        await session.commit()


def test_notices_wake_every_waiter_of_a_job(tmp_path: Path) -> None:
    async def run() -> None:
        async with runtime_with_jobs(tmp_path, 2) as (runtime, (first, second)):
            waiter = JobWaiter(runtime.jobs, check_s=3600)  # no check: notices only
            waits = [
                asyncio.create_task(waiter.wait([first, second], 60)),
                asyncio.create_task(waiter.wait([first], 60)),
                asyncio.create_task(waiter.wait([first], 60)),
            ]
            while waiter.awaited < 2:
                await asyncio.sleep(0.01)
            waiter.notify(first)
            await asyncio.gather(*waits[1:])
            assert not waits[0].done()  # still waits for the second job
            waiter.notify(second)
            await waits[0]
            assert waiter.awaited == 0

    asyncio.run(run())


def test_a_lost_notice_is_covered_by_one_shared_check(tmp_path: Path) -> None:
    async def run() -> None:
        async with runtime_with_jobs(tmp_path, 3) as (runtime, ids):
            waiter = JobWaiter(runtime.jobs, check_s=0.05)
            await waiter.start()
            try:
                waits = [asyncio.create_task(waiter.wait([job_id], 60)) for job_id in ids]
                while waiter.awaited < 3:
                    await asyncio.sleep(0.01)
                await finish(runtime, ids[:2])
                await asyncio.gather(*waits[:2])
                assert not waits[2].done()
                await finish(runtime, ids[2:])
                await waits[2]
            finally:
                await waiter.stop()

    asyncio.run(run())


def test_finished_jobs_end_the_wait_at_once_and_timeouts_and_cancels_leave_nothing(
    tmp_path: Path,
) -> None:
    async def run() -> None:
        async with runtime_with_jobs(tmp_path, 2) as (runtime, (done, open_)):
            await finish(runtime, [done])
            waiter = JobWaiter(runtime.jobs, check_s=3600)
            await waiter.wait([done, "0" * 32], 60)  # finished, and no such job
            await waiter.wait([open_], 0.05)  # times out
            assert waiter.awaited == 0
            cancelled = asyncio.create_task(waiter.wait([open_], 60))
            while waiter.awaited < 1:
                await asyncio.sleep(0.01)
            cancelled.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await cancelled
            assert waiter.awaited == 0

    asyncio.run(run())


def test_an_expected_wait_is_answered_by_the_notices_alone(tmp_path: Path) -> None:
    """Registered before the dispatch: a notice that carries the stored row wakes it, the
    row comes back, and the database is not looked at (its jobs are still queued there)."""

    async def run() -> None:
        async with runtime_with_jobs(tmp_path, 2) as (runtime, (first, second)):
            waiter = JobWaiter(runtime.jobs, check_s=3600)
            expected = waiter.expect([first, second])
            row = await runtime.jobs.get_job(first)
            assert row is not None
            waiter.notify(first, row)
            waiter.notify(second)
            found = await asyncio.wait_for(expected.wait(timeout=60), timeout=30)
            assert dict(found) == {first: row}
            assert waiter.awaited == 0
            left = waiter.expect([first])
            left.close()  # a wait given up before it is awaited leaves nothing behind
            assert waiter.awaited == 0

    asyncio.run(run())
