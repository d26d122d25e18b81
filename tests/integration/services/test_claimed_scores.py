"""A single score for a runner in the same process (embedded mode) is inserted already claimed
for it, with no outbox row, and run without a claim. Crash safety must hold as for a claimed
job: if the process dies before the result is stored, a restart redoes the job; a job is
never scored twice. On SQLite and PostgreSQL, with the simulator's HTTP server as judges."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlmodel import col

from judge.persistence import jobs as repo
from judge.persistence.tables import JobOutbox, Judgment, ScoreJob, utcnow
from judge.runtime.composition import ServiceRuntime, build_runtime
from judge.runtime.in_process import InProcessRunner, JobWaiter
from judge.settings import Settings, load_settings
from judge.simulator import SimulatorProcess
from tests.fixtures.sample_texts import POSTS, RESPONSES

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

JUDGES = 3  # the default panel's judges: one call (one judgment row) each


def post(n: int) -> dict[str, str]:
    return {"seeker_post": f"{POSTS[n % len(POSTS)]} (claimed {n})", "response": RESPONSES[0]}


@pytest.fixture
def settings(database_url: str, service_simulator: SimulatorProcess, clean_env: None) -> Settings:
    return load_settings(
        database_url=database_url,
        simulator={"url": service_simulator.base_url},
        worker={"cache_enabled": False},
    )


async def _runtime(settings: Settings) -> ServiceRuntime:
    runtime = build_runtime(settings)
    await runtime.database.upgrade()
    return runtime


async def _row(runtime: ServiceRuntime, job_id: str) -> dict[str, Any]:
    async with runtime.database.session() as session:
        job = await session.get(ScoreJob, job_id, populate_existing=True)
        assert job is not None
        judgments = await session.scalar(select(func.count()).where(col(Judgment.job_id) == job_id))
        outbox = await session.scalar(select(func.count()).select_from(JobOutbox))
    return {
        "status": job.status,
        "attempts": job.attempts,
        "judgments": judgments,
        "outbox": outbox,
    }


async def _claimed_score(runtime: ServiceRuntime, n: int) -> ScoreJob:
    return await runtime.jobs.submit_score(
        rubric_id="epitome", raw_item=post(n), panel_name=None, claimed=True
    )


def test_a_claimed_score_is_run_once_without_a_claim(settings: Settings) -> None:
    async def run() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        runtime = await _runtime(settings)
        waiter = JobWaiter(runtime.jobs)
        runner = InProcessRunner(runtime.jobs, waiter, concurrency=2)
        await runner.start()
        try:
            job = await _claimed_score(runtime, 0)
            inserted = await _row(runtime, job.id)
            expected = waiter.expect([job.id])
            await runner.dispatch_claimed([job])
            finished = await expected.wait(60)
            assert finished[job.id].status == repo.COMPLETED  # the row as stored, handed over
            done = await _row(runtime, job.id)
            # sent again (the sweeper, a duplicate message): the claim guards, no second run
            again = waiter.expect([job.id])
            await runner.dispatch([job.id])
            await again.wait(60)
            return inserted, done, await _row(runtime, job.id)
        finally:
            await runner.stop()
            await runtime.close()

    inserted, done, after_duplicate = asyncio.run(run())
    assert inserted == {"status": "running", "attempts": 1, "judgments": 0, "outbox": 0}
    assert done == {"status": "completed", "attempts": 1, "judgments": JUDGES, "outbox": 0}
    assert after_duplicate == done


def test_a_claimed_score_is_redone_after_its_process_died(settings: Settings) -> None:
    """The process that inserted the job stops before running it (as if killed): the next
    start of the embedded runner finds it running under a lease no one renews and redoes it."""

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        first = await _runtime(settings)
        job = await _claimed_score(first, 1)
        await first.close()  # died: the job was never run
        runtime = await _runtime(settings)
        waiter = JobWaiter(runtime.jobs)
        runner = InProcessRunner(runtime.jobs, waiter, concurrency=2)
        try:
            left = await _row(runtime, job.id)
            await runner.start()
            await waiter.wait([job.id], 60)
            return left, await _row(runtime, job.id)
        finally:
            await runner.stop()
            await runtime.close()

    left, redone = asyncio.run(run())
    assert left == {"status": "running", "attempts": 1, "judgments": 0, "outbox": 0}
    assert redone == {"status": "completed", "attempts": 2, "judgments": JUDGES, "outbox": 0}


def test_a_claimed_score_whose_lease_lapsed_and_was_claimed_again_is_not_run_twice(
    settings: Settings,
) -> None:
    """The job waited in the runner's queue past half its lease: its claim is renewed first,
    only if still its own. Here the lease lapsed and another run claimed it meanwhile."""

    async def run() -> tuple[Any, dict[str, Any]]:
        runtime = await _runtime(settings)
        try:
            job = await _claimed_score(runtime, 2)
            async with runtime.database.session() as session:
                await repo.renew_lease(session, job.id, lease_s=-1)  # lapsed
                taken = await repo.claim_job(session, job.id, lease_s=30, max_attempts=3)
            assert taken.outcome == repo.CLAIMED
            job.lease_until = utcnow() - timedelta(seconds=1)  # as this process holds it
            ran = await runtime.jobs.run(job.id, claimed=job)
            return ran, await _row(runtime, job.id)
        finally:
            await runtime.close()

    ran, row = asyncio.run(run())
    assert ran is None
    assert row == {"status": "running", "attempts": 2, "judgments": 0, "outbox": 0}


def test_a_lone_result_is_stored_once(settings: Settings) -> None:
    """A round of one job stores its result in the guarded update itself: a second finish of
    the same job (a duplicate run) changes nothing."""

    async def run() -> tuple[bool, bool, str | None]:
        runtime = await _runtime(settings)
        try:
            job = await _claimed_score(runtime, 3)
            stored = []
            for result in ('{"first": true}', '{"second": true}'):
                async with runtime.database.session() as session:
                    stored.append(
                        await repo.finish_job(
                            session, job.id, result_json=result, calls=[], ratings_by_model={}
                        )
                    )
            async with runtime.database.session() as session:
                row = await session.get(ScoreJob, job.id, populate_existing=True)
            assert row is not None
            assert row.status == repo.COMPLETED
            return stored[0], stored[1], row.result_json
        finally:
            await runtime.close()

    assert asyncio.run(run()) == (True, False, '{"first": true}')
