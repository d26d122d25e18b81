"""Quotas and backpressure: per-key request rate, per-key queued items, the global queue
depth and ``?wait=`` waiters answer 429 with ``Retry-After``; a job's claims are capped.

The stack here is ``judge serve`` with Redis and no worker, so what is queued stays queued
and the counts are exact."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.persistence.tables import ScoreJob
from tests.e2e.test_tenancy import NDJSON, bearer, item, problem
from tests.fixtures.stacks import (
    RedisDatabases,
    ServiceStack,
    SimulatorProcess,
    make_stack,
    query,
    sqlite_url,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def queue_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
    redis_databases: RedisDatabases,
) -> Iterator[ServiceStack]:
    workdir = tmp_path_factory.mktemp("queue-stack")
    url = redis_databases.acquire()
    stack = make_stack(
        workdir,
        database_url=sqlite_url(workdir),
        simulator=service_simulator,
        config=service_config,
        redis_url=url,
    )
    stack.env |= {
        "JUDGE_API__REQUIRE_KEYS": "true",
        "JUDGE_API__RATE_LIMIT": "8/second;1000/minute",
        "JUDGE_API__MAX_QUEUED_PER_KEY": "10",
        "JUDGE_API__MAX_QUEUE_DEPTH": "25",
        "JUDGE_API__MAX_WAITERS": "3",
        "JUDGE_API__MAX_WAITERS_PER_KEY": "2",
    }
    try:
        stack.start_api()
        yield stack
    finally:
        stack.stop()
        redis_databases.release(url)


def batch(client: httpx.Client, headers: dict[str, str], n: int, tag: str) -> httpx.Response:
    lines = "".join(json.dumps(item(tag, i)) + "\n" for i in range(n))
    return client.post(
        "/v1/batches", params={"rubric": "epitome"}, content=lines, headers=NDJSON | headers
    )


def refused(response: httpx.Response, most_s: int = 60) -> dict[str, Any]:
    """A 429 problem with a ``Retry-After`` of 1 to ``most_s`` seconds."""
    body = problem(response, 429)
    assert 1 <= int(response.headers["retry-after"]) <= most_s
    return body


def test_waiters_are_bounded(queue_stack: ServiceStack) -> None:
    """Nothing finishes here (no worker), so every ?wait= request holds its slot."""
    keys = [bearer(queue_stack.create_key(f"w{n}", "score")) for n in range(2)]

    def post(headers: dict[str, str], wait: float) -> httpx.Response:
        with httpx.Client(base_url=queue_stack.base_url, timeout=30) as client:
            return client.post(
                "/v1/scores",
                params={"wait": wait},
                json={"rubric": "epitome", "item": item("wait", 0)},
                headers=headers,
            )

    with ThreadPoolExecutor(4) as pool:
        holding = [pool.submit(post, keys[0], 4) for _ in range(2)]
        time.sleep(1.0)
        body = problem(post(keys[0], 4), 429, "query.wait")  # 2 per key
        assert "already has 2 requests waiting" in body["detail"]
        third = pool.submit(post, keys[1], 4)
        time.sleep(1.0)
        problem(post(keys[1], 4), 429, "query.wait")  # 3 in all
        assert post(keys[1], 0).status_code == 202  # no wait: no slot needed
        assert [f.result().status_code for f in [*holding, third]] == [202, 202, 202]


def test_request_rate_per_key(queue_stack: ServiceStack) -> None:
    client = queue_stack.client
    fast, calm = (bearer(queue_stack.create_key(name, "score")) for name in ("fast", "calm"))
    codes = [client.get("/v1/rubrics", headers=fast).status_code for _ in range(12)]
    assert codes[:8] == [200] * 8
    assert 429 in codes[8:]
    refused(client.get("/v1/rubrics", headers=fast), most_s=1)
    assert client.get("/v1/rubrics", headers=calm).status_code == 200  # another key's budget
    time.sleep(1.1)
    assert client.get("/v1/rubrics", headers=fast).status_code == 200


def test_queued_items_per_key_and_in_total(queue_stack: ServiceStack) -> None:
    client = queue_stack.client
    queued = "SELECT count(*) FROM score_jobs WHERE status = 'queued'"
    before = query(queue_stack.database_url, queued)[0][0]  # left by earlier tests
    keys = [bearer(queue_stack.create_key(f"q{n}", "batch")) for n in range(3)]
    assert batch(client, keys[0], 10, "q0").status_code == 202  # the whole quota
    body = refused(batch(client, keys[0], 1, "q0-more"))
    assert "10 unfinished items" in body["detail"]
    room = 25 - before - 10
    assert 0 < room <= 19
    first = min(room, 10)
    assert batch(client, keys[1], first, "q1").status_code == 202
    # one more than the room left: within key 2's quota, beyond the global depth of 25
    body = refused(batch(client, keys[2], room - first + 1, "q2"))
    assert "queue is full" in body["detail"]
    if room > first:
        assert batch(client, keys[2], room - first, "q2").status_code == 202
    assert query(queue_stack.database_url, queued)[0][0] == 25


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_claims_are_capped_then_the_job_fails_with_a_reason(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A job whose runs keep dying (each claim's lease lapses) fails at its 5th claim."""
    url = sqlite_url(tmp_path) if backend == "sqlite" else request.getfixturevalue("postgres_url")

    async def run() -> tuple[list[str], Any]:
        database = Database(url)
        try:
            await database.upgrade()
            job = ScoreJob(
                id=uuid.uuid4().hex, rubric_id="epitome", rubric_version="1", rubric_hash="h",
                panel_name="p", panel_signature="[]", item_json="{}",
            )  # fmt: skip
            await repo.insert_skipping_refused(database, [], [job])
            outcomes = []
            for _ in range(6):
                async with database.session() as session:
                    claim = await repo.claim_job(session, job.id, lease_s=-1, max_attempts=5)
                    outcomes.append(claim.outcome)
            async with database.session() as session:
                return outcomes, await repo.get_job(session, job.id)
        finally:
            await database.dispose()

    outcomes, job = asyncio.run(run())
    assert outcomes == [repo.CLAIMED] * 5 + [repo.EXHAUSTED]
    assert job.status == repo.FAILED
    assert job.attempts == 5
    assert job.error.startswith("too_many_attempts:")
