"""A stored call keeps the prompt tokens the provider read from and wrote to its prompt cache
(migration 0008), on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from judge.domain.result import CallRecord
from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.persistence.tables import ScoreJob
from tests.fixtures.stacks import sqlite_url

pytestmark = pytest.mark.integration


def _call(read: int, write: int) -> CallRecord:
    return CallRecord(
        requested_model="anthropic/claude-sonnet-4-5", resolved_model="claude-sonnet-4-5",
        params={}, prompt_hash="h", purpose="judge", prompt_tokens=1800, completion_tokens=200,
        cost_usd=0.004, latency_ms=1.0, attempts=1, outcome="ok",
        cached_prompt_tokens=read, cache_write_tokens=write,
    )  # fmt: skip


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_cached_prompt_tokens_are_stored_per_call(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = sqlite_url(tmp_path) if backend == "sqlite" else request.getfixturevalue("postgres_url")
    calls = [_call(0, 1734), _call(1734, 0)]

    async def run() -> list[CallRecord]:
        database = Database(url, pool_size=1)
        try:
            await database.upgrade()
            job = ScoreJob(
                id=uuid.uuid4().hex, rubric_id="epitome", rubric_version="1", rubric_hash="h",
                panel_name="p", panel_signature="[]", item_json="{}",
            )  # fmt: skip
            await repo.insert_skipping_refused(database, [], [job])
            async with database.session() as session:
                await repo.claim_job(session, job.id, lease_s=60, max_attempts=5)
                await repo.finish_job(
                    session, job.id, result_json="{}", calls=calls, ratings_by_model={}
                )
            async with database.session() as session:
                return await repo.job_calls(session, job.id)
        finally:
            await database.dispose()

    stored = asyncio.run(run())
    assert [(c.cached_prompt_tokens, c.cache_write_tokens) for c in stored] == [
        (0, 1734),
        (1734, 0),
    ]
