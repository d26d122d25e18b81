"""Outages measured as a user sees them: a 600-item batch on PostgreSQL + Redis + one Celery
worker, undisturbed, with PostgreSQL stopped for 11 s mid-batch, and with the API SIGKILLed
while it is enqueueing the batch. Nothing may be lost or scored twice, and each disturbed
run must finish. How long each took, and its ratio to the undisturbed run, is measured, not
asserted (a loaded machine stretches them): before the outbox and the orphan release they
waited a minute for the lease sweeper (62 s and 65 s against 27 s undisturbed).

Production timings for leases and sweeps (not the short ones of the other tests), and a
simulator of its own with 400 ms replies, so a batch takes long enough to be disturbed. The
measured times are written to ``build/test-artifacts/fault-timings.json``.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.simulator import SimulatorOptions, SimulatorProcess
from tests.fixtures import loopback
from tests.fixtures.private_postgres import PrivatePostgres
from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import (
    RedisDatabases,
    ServiceStack,
    child_env,
    make_stack,
    query,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

N_ITEMS = 600
OUTAGE_S = 11.0
#: how long a batch may take before the test calls it stuck (a hang guard, not a measurement)
STUCK_S = 300.0
NDJSON = {"Content-Type": "application/x-ndjson"}
ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"
TIMINGS: dict[str, float] = {}


@pytest.fixture(scope="module")
def fault_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_config: Path,
    redis_databases: RedisDatabases,
    pg_server: PrivatePostgres,
) -> Iterator[ServiceStack]:
    options = SimulatorOptions(latency_ms=400, jitter_ms=40)
    redis_url = redis_databases.acquire()
    with SimulatorProcess(options, env=child_env()) as simulator:
        stack = make_stack(
            tmp_path_factory.mktemp("fault-stack"),
            database_url=pg_server.url(),
            simulator=simulator,
            config=service_config,
            redis_url=redis_url,
        )
        stack.env |= {  # the defaults a deployment runs with
            "JUDGE_WORKER__LEASE_S": "30",
            "JUDGE_WORKER__REQUEUE_AFTER_S": "60",
            "JUDGE_WORKER__SWEEP_INTERVAL_S": "10",
            "JUDGE_WORKER__CONCURRENCY": "64",
            "JUDGE_API__REQUIRE_KEYS": "true",
        }
        try:
            stack.create_key("pipeline", "score", "batch")
            stack.start_worker()
            stack.start_api()
            yield stack
        finally:
            stack.stop()
            redis_databases.release(redis_url)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "fault-timings.json").write_text(json.dumps(TIMINGS, indent=2))


def items(tag: str) -> bytes:
    rows = [
        {"id": f"{tag}-{n}", "seeker_post": f"{POSTS[n % len(POSTS)]} ({tag} {n})",
         "response": RESPONSES[n % len(RESPONSES)]}
        for n in range(N_ITEMS)
    ]  # fmt: skip
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def post_batch(base_url: str, headers: dict[str, str], body: bytes) -> httpx.Response:
    return loopback.post(
        f"{base_url}/v1/batches",
        params={"rubric": "epitome"},
        content=body,
        headers=NDJSON | headers,
        timeout=60,
    )


def progress(stack: ServiceStack, batch_id: str) -> dict[str, Any] | None:
    """The batch's progress, or None while the API answers 503 (with a Retry-After)."""
    try:
        got = loopback.get(
            f"{stack.base_url}/v1/batches/{batch_id}", headers=stack.headers(), timeout=10
        )
    except httpx.HTTPError:
        return None
    if got.status_code == 503:
        assert got.headers["content-type"].startswith("application/problem+json")
        assert int(got.headers["retry-after"]) >= 1
        return None
    assert got.status_code == 200, got.text
    data: dict[str, Any] = got.json()
    return data


def wait_done(stack: ServiceStack, batch_id: str, timeout: float = STUCK_S) -> None:
    deadline = time.monotonic() + timeout
    while True:
        status = progress(stack, batch_id)
        if status is not None and status["status"] == "completed":
            assert (status["completed"], status["failed"]) == (N_ITEMS, 0), status
            return
        assert time.monotonic() < deadline, f"batch not done in {timeout} s: {status}"
        time.sleep(0.25)


def assert_each_item_once(stack: ServiceStack, batch_id: str) -> None:
    jobs = query(
        stack.database_url,
        f"SELECT position, status FROM score_jobs WHERE batch_id = '{batch_id}'",
    )
    assert sorted(p for p, _ in jobs) == list(range(1, N_ITEMS + 1))
    assert {s for _, s in jobs} == {"completed"}
    per_job = query(
        stack.database_url,
        "SELECT count(*) FROM judgments j JOIN score_jobs s ON s.id = j.job_id "
        f"WHERE s.batch_id = '{batch_id}' GROUP BY j.job_id",
    )
    assert Counter(n for (n,) in per_job) == {3: N_ITEMS}  # one judgment per judge, once


def test_undisturbed_batch(fault_stack: ServiceStack) -> None:
    started = time.monotonic()
    response = post_batch(fault_stack.base_url, fault_stack.headers(), items("calm"))
    assert response.status_code == 202, response.text
    wait_done(fault_stack, response.json()["id"])
    TIMINGS["undisturbed_s"] = round(time.monotonic() - started, 1)
    assert_each_item_once(fault_stack, response.json()["id"])


def test_postgresql_stopped_mid_batch(
    fault_stack: ServiceStack, pg_server: PrivatePostgres
) -> None:
    stack = fault_stack
    baseline = TIMINGS.get("undisturbed_s")
    assert baseline, "run with test_undisturbed_batch (the baseline)"
    started = time.monotonic()
    response = post_batch(stack.base_url, stack.headers(), items("outage"))
    assert response.status_code == 202, response.text
    batch_id = response.json()["id"]
    while (status := progress(stack, batch_id)) is None or status["completed"] < N_ITEMS // 4:
        assert time.monotonic() - started < STUCK_S, status
        time.sleep(0.1)
    pg_server.stop()
    stopped = time.monotonic()
    try:
        # routes whose data is in memory keep working (the key's lookup is cached); the
        # others answer 503 with a Retry-After, never a 500
        time.sleep(1.0)
        rubrics = loopback.get(f"{stack.base_url}/v1/rubrics", headers=stack.headers(), timeout=10)
        assert rubrics.status_code == 200, rubrics.text
        assert progress(stack, batch_id) is None
        time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - stopped)))
    finally:
        pg_server.start()
    wait_done(stack, batch_id)
    elapsed = time.monotonic() - started
    TIMINGS["postgresql_stopped_s"] = round(elapsed, 1)
    TIMINGS["postgresql_stopped_ratio"] = round(elapsed / baseline, 2)
    assert_each_item_once(stack, batch_id)
    log = stack.api.log_text() if stack.api else ""
    assert "unhandled error" not in log


def test_api_killed_while_enqueueing_a_batch(fault_stack: ServiceStack) -> None:
    """SIGKILL as soon as the batch is committed (its jobs are being sent); restarted as a
    supervisor would, the client retries with its Idempotency-Key and gets the first batch."""
    stack = fault_stack
    baseline = TIMINGS.get("undisturbed_s")
    assert baseline, "run with test_undisturbed_batch (the baseline)"
    body = items("killed")
    headers = stack.headers() | {"Idempotency-Key": "nightly-run-42"}
    batches = "SELECT count(*) FROM batches"
    before = query(stack.database_url, batches)[0][0]
    started = time.monotonic()
    import threading

    outcome: dict[str, Any] = {}

    def post() -> None:
        try:
            outcome["response"] = post_batch(stack.base_url, headers, body)
        except httpx.HTTPError as exc:
            outcome["error"] = exc

    client = threading.Thread(target=post)
    client.start()
    while query(stack.database_url, batches)[0][0] == before:
        assert time.monotonic() - started < STUCK_S, "the batch was never committed"
        time.sleep(0.005)
    assert stack.api is not None
    stack.api.kill()
    client.join(timeout=60)
    unsent = query(stack.database_url, "SELECT count(*) FROM job_outbox")[0][0]
    TIMINGS["api_killed_unsent_jobs"] = unsent
    restarting = time.monotonic()
    stack.start_api()
    restart_s = time.monotonic() - restarting
    TIMINGS["api_restart_s"] = round(restart_s, 1)
    retry = post_batch(stack.base_url, headers, body)
    assert retry.status_code == 202, retry.text
    assert query(stack.database_url, batches)[0][0] == before + 1  # no second batch
    wait_done(stack, retry.json()["id"])
    elapsed = time.monotonic() - started
    TIMINGS["api_killed_s"] = round(elapsed, 1)
    TIMINGS["api_killed_ratio"] = round(elapsed / baseline, 2)
    assert_each_item_once(stack, retry.json()["id"])
