"""``?wait=`` waiters: a full slot answers 429 at once, and a client that hangs up frees its
slot without waiting out its wait. Batch intake: the batch cap and the per-key quota agree,
rejected lines do not count as queued, and rejections come a page at a time. ``judge serve``
on SQLite and on PostgreSQL, with Redis and no worker running, so every job stays queued and
every wait would run to its end."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fixtures.stacks import (
    BACKENDS,
    RedisDatabases,
    ServiceStack,
    SimulatorProcess,
    create_pg_database,
    drop_pg_database,
    make_stack,
    query,
    sqlite_url,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

JOBS = "SELECT count(*) FROM score_jobs"
NDJSON = {"Content-Type": "application/x-ndjson"}
BODY = {
    "rubric": "epitome",
    "item": {"seeker_post": "I failed my exam again.", "response": "That sounds hard."},
}


@pytest.fixture(scope="module", params=BACKENDS)
def idle_stack(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
    redis_databases: RedisDatabases,
) -> Iterator[ServiceStack]:
    workdir = tmp_path_factory.mktemp(f"idle-{request.param}")
    pg_name = None
    if request.param == "postgresql":
        request.getfixturevalue("postgres_available")
        pg_name, database_url = create_pg_database()
    else:
        database_url = sqlite_url(workdir)
    redis_url = redis_databases.acquire()
    try:
        stack = make_stack(
            workdir,
            database_url=database_url,
            simulator=service_simulator,
            config=service_config,
            redis_url=redis_url,
        )
        stack.env |= {
            "JUDGE_API__MAX_WAITERS_PER_KEY": "1",
            "JUDGE_API__MAX_WAIT_S": "120",
            "JUDGE_API__MAX_QUEUED_PER_KEY": "10",
        }
        try:
            stack.start_api()
            yield stack
        finally:
            stack.stop()
    finally:
        redis_databases.release(redis_url)
        if pg_name is not None:
            drop_pg_database(pg_name)


def test_a_full_slot_answers_429_and_a_hung_up_waiter_frees_its_slot(
    idle_stack: ServiceStack,
) -> None:
    stack = idle_stack
    headers = {"Authorization": f"Bearer {stack.create_key('waiter', 'score')}"}
    url = f"{stack.base_url}/v1/scores"
    outcome: list[BaseException | httpx.Response] = []

    def hang_up() -> None:
        """A waiter whose client gives up reading after a few seconds and closes."""
        with httpx.Client(timeout=httpx.Timeout(60, read=3.0)) as impatient:
            try:
                outcome.append(
                    impatient.post(url, params={"wait": 100}, json=BODY, headers=headers)
                )
            except httpx.HTTPError as exc:
                outcome.append(exc)

    waiter = threading.Thread(target=hang_up)
    waiter.start()
    try:
        # its job is stored once it holds the key's one waiter slot
        deadline = time.monotonic() + 30
        while query(stack.database_url, JOBS)[0][0] < 1:
            assert time.monotonic() < deadline, "the first waiter's job was never stored"
            time.sleep(0.05)
        refused = stack.client.post("/v1/scores", params={"wait": 1}, json=BODY, headers=headers)
        assert refused.status_code == 429, refused.text
        assert refused.json()["field"] == "query.wait"
        assert refused.headers["Retry-After"] == "1"
    finally:
        waiter.join()
    assert isinstance(outcome[0], httpx.ReadTimeout), outcome

    # its wait had over 90 s to go: the slot is free long before that
    deadline = time.monotonic() + 30
    while True:
        got = stack.client.post("/v1/scores", params={"wait": 0.2}, json=BODY, headers=headers)
        if got.status_code != 429:
            break
        assert time.monotonic() < deadline, "the hung-up waiter still holds its slot"
        time.sleep(0.2)
    assert got.status_code == 202, got.text


def line(n: int) -> str:
    return json.dumps({"seeker_post": f"Post {n}: I feel alone.", "response": "I hear you."})


def test_batch_cap_quota_and_rejections(idle_stack: ServiceStack) -> None:
    stack, client = idle_stack, idle_stack.client
    headers = NDJSON | {"Authorization": f"Bearer {stack.create_key('intake', 'batch')}"}

    def submit(lines: list[str]) -> httpx.Response:
        body = "".join(text + "\n" for text in lines)
        return client.post(
            "/v1/batches", params={"rubric": "epitome"}, content=body, headers=headers
        )

    # more lines than the key's quota could ever hold: 413, not a 429 that no retry fixes
    too_many = submit([line(n) for n in range(11)])
    assert too_many.status_code == 413, too_many.text
    assert too_many.headers["content-type"].startswith("application/problem+json")
    # 2 queued, then 8 valid lines and 2 bad ones: only the 8 count against the quota of 10
    assert submit([line(n) for n in range(2)]).status_code == 202
    mixed = submit([line(n) for n in range(8)] + ["{not json", '{"response": 3}'])
    assert mixed.status_code == 202, mixed.text
    view = mixed.json()
    assert (view["total"], view["rejected"]) == (8, 2)
    assert [r["line"] for r in view["rejections"]] == [9, 10]
    assert view["rejections_next"] is None
    assert submit([line(0)]).status_code == 429  # the quota is full now


def test_rejections_are_paginated(idle_stack: ServiceStack) -> None:
    stack, client = idle_stack, idle_stack.client
    headers = NDJSON | {"Authorization": f"Bearer {stack.create_key('rejects', 'batch')}"}
    body = "".join(f'{{"bad": {n}}}\n' for n in range(10))  # at most 10 lines here
    got = client.post("/v1/batches", params={"rubric": "epitome"}, content=body, headers=headers)
    assert got.status_code == 202, got.text
    assert got.json()["rejected"] == 10
    batch_id = got.json()["id"]
    first = client.get(
        f"/v1/batches/{batch_id}/rejections", params={"limit": 4}, headers=headers
    ).json()
    assert [r["line"] for r in first["rejections"]] == [1, 2, 3, 4]
    assert (first["total"], first["next_offset"]) == (10, 4)
    last = client.get(
        f"/v1/batches/{batch_id}/rejections", params={"offset": 8, "limit": 4}, headers=headers
    ).json()
    assert [r["line"] for r in last["rejections"]] == [9, 10]
    assert last["next_offset"] is None
    for bad in ({"limit": 0}, {"offset": -1}, {"limit": "x"}):
        refused = client.get(f"/v1/batches/{batch_id}/rejections", params=bad, headers=headers)
        assert refused.status_code in (400, 422), refused.text
        assert refused.headers["content-type"].startswith("application/problem+json")
