"""The job path's rounds against real SQLite and PostgreSQL: jobs claimed together by one
statement, results stored together in one transaction, and a value the database refuses
failing its own job only, never the rest of its round."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from judge.domain.result import CallRecord
from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.persistence.job_rounds import JobRounds
from judge.persistence.tables import ScoreJob
from tests.integration.persistence.test_jobs import BACKENDS, _job, _url, _with_database

pytestmark = pytest.mark.integration


def _finished(job_id: str, raw_reply: str = "{}") -> repo.Finished:
    call = CallRecord(
        requested_model="openai/accurate", resolved_model="accurate", params={},
        prompt_hash="h", purpose="judge", prompt_tokens=10, completion_tokens=5,
        cost_usd=0.1, latency_ms=1.0, attempts=1, outcome="ok", raw_reply=raw_reply,
    )  # fmt: skip
    return repo.Finished(job_id, f'{{"id": "{job_id}"}}', [call], {"openai/accurate": {}})


async def _stored(database: Database, job_ids: list[str]) -> dict[str, tuple[str, int]]:
    """Per job: its status and how many judgments it has."""
    out = {}
    async with database.session() as session:
        for job_id in job_ids:
            job = await session.get(ScoreJob, job_id)
            calls = await repo.job_calls(session, job_id)
            assert job is not None
            out[job_id] = (job.status, len(calls))
    return out


async def _three_claimed(database: Database) -> tuple[JobRounds, list[str]]:
    """Three new jobs, claimed together; the rounds that claimed them."""
    jobs = [_job() for _ in range(3)]
    await repo.insert_skipping_refused(database, [], jobs)
    ids = [j.id for j in jobs]
    rounds = JobRounds(database, lease_s=60, max_attempts=5)
    await asyncio.gather(*(rounds.claim(i) for i in ids))
    return rounds, ids


@pytest.mark.parametrize("backend", BACKENDS)
def test_jobs_claimed_together_are_claimed_once_each(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async def body(database: Database) -> Any:
        jobs = [_job() for _ in range(4)]
        await repo.insert_skipping_refused(database, [], jobs)
        ids = [j.id for j in jobs]
        rounds = JobRounds(database, lease_s=60, max_attempts=5)
        first = await asyncio.gather(*(rounds.claim(i) for i in [*ids, ids[0]]))
        again = await rounds.claim(ids[1])
        return ids, first, again

    ids, first, again = _with_database(_url(backend, tmp_path, request), body)
    assert [c.outcome for c in first] == [repo.CLAIMED] * 4 + [repo.BUSY]
    assert [c.job.id for c in first[:4] if c.job is not None] == ids
    assert all(c.job is not None and c.job.attempts == 1 for c in first[:4])
    assert again == repo.Claim(repo.BUSY, None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_finished_together_are_stored_in_one_round(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async def body(database: Database) -> Any:
        rounds, ids = await _three_claimed(database)
        done = await asyncio.gather(*(rounds.finish(_finished(i)) for i in ids))
        twice = await rounds.finish(_finished(ids[0]))
        return ids, done, twice, await _stored(database, ids)

    ids, done, twice, stored = _with_database(_url(backend, tmp_path, request), body)
    assert done == [True, True, True]
    assert twice is False  # already completed: a second report stores nothing
    assert stored == dict.fromkeys(ids, (repo.COMPLETED, 1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_refused_value_fails_its_own_job_not_its_round(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A lone surrogate in a reply cannot be encoded by either database."""

    async def body(database: Database) -> Any:
        rounds, ids = await _three_claimed(database)
        bad = _finished(ids[1], raw_reply="\ud800")
        done = await asyncio.gather(
            rounds.finish(_finished(ids[0])),
            rounds.finish(bad),
            rounds.finish(_finished(ids[2])),
            return_exceptions=True,
        )
        return ids, done, await _stored(database, ids)

    ids, done, stored = _with_database(_url(backend, tmp_path, request), body)
    assert [done[0], done[2]] == [True, True]
    assert isinstance(done[1], Exception)
    assert stored[ids[0]] == stored[ids[2]] == (repo.COMPLETED, 1)
    assert stored[ids[1]] == (repo.RUNNING, 0)  # still leased: released and retried by its run
