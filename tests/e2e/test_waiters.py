"""``?wait=`` waiters: a full slot answers 429 at once, and a client that hangs up frees its
slot without waiting out its wait. ``judge serve`` on PostgreSQL and Redis with no worker
running, so every job stays queued and every wait would run to its end."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fixtures.stacks import (
    RedisDatabases,
    ServiceStack,
    SimulatorProcess,
    create_pg_database,
    drop_pg_database,
    make_stack,
    query,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

BODY = {
    "rubric": "epitome",
    "item": {"seeker_post": "I failed my exam again.", "response": "That sounds hard."},
}


@pytest.fixture(scope="module")
def idle_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
    redis_databases: RedisDatabases,
    postgres_available: None,
) -> Iterator[ServiceStack]:
    name, database_url = create_pg_database()
    redis_url = redis_databases.acquire()
    workdir = tmp_path_factory.mktemp("idle-stack")
    try:
        stack = make_stack(
            workdir,
            database_url=database_url,
            simulator=service_simulator,
            config=service_config,
            redis_url=redis_url,
        )
        stack.env |= {"JUDGE_API__MAX_WAITERS_PER_KEY": "1", "JUDGE_API__MAX_WAIT_S": "120"}
        try:
            stack.start_api()
            yield stack
        finally:
            stack.stop()
    finally:
        redis_databases.release(redis_url)
        drop_pg_database(name)


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
        while query(stack.database_url, "SELECT count(*) FROM score_jobs")[0][0] < 1:
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
