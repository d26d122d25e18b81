"""Hostile input against the real app (in process: the composition root's app, its embedded job
thread and the simulator over HTTP), on SQLite and PostgreSQL.

Every attack of ``hostile_inputs.CORPUS`` must get its documented answer: a 4xx problem that
names the field, or, for a batch, a rejection of the bad line only while the good lines are
scored; a flag for instructions hidden in any field a judge reads; nothing of a provider's or
the database's own messages in any response; and never a 5xx or an unhandled error in the log.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures.hostile_inputs import CORPUS, INSTRUCTIONS_FLAG, Attack, run, send
from tests.fixtures.in_process import InProcessApi
from tests.fixtures.stacks import (
    BACKENDS,
    FAILING_PANEL,
    SimulatorProcess,
    create_pg_database,
    drop_pg_database,
    query,
    sqlite_url,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]
PROBLEM = "application/problem+json"


def _check_problem(response: httpx.Response, attack: Attack) -> None:
    assert response.headers["content-type"].startswith(PROBLEM), response.headers
    body = response.json()
    assert body["status"] == attack.status
    assert body["detail"]
    assert body["request_id"] == response.headers["x-request-id"]
    assert len(body["detail"]) <= 1_000
    if attack.field is not None:
        assert body.get("field") == attack.field, body


@pytest.mark.parametrize("attack", CORPUS, ids=[a.id for a in CORPUS])
def test_attack_gets_its_answer(in_process_api: InProcessApi, attack: Attack) -> None:
    stack = in_process_api
    before = len(stack.log)
    if attack.status < 400:
        outcome = run(stack.client, attack, stack.headers())
        status, text = outcome.status, outcome.body
    else:
        response = send(stack.client, attack, stack.headers())
        status, text = response.status_code, response.text
        assert status == attack.status, text[:2000]
        _check_problem(response, attack)
    assert status == attack.status, text[:2000]
    for secret in attack.absent:
        assert secret not in text, f"{secret!r} leaked: {text[:2000]}"
    if attack.rejected:
        assert [r["line"] for r in outcome.rejections] == list(attack.rejected)
        assert outcome.rejections[0]["field"] == attack.rejected_field, outcome.rejections
    if attack.scored is not None:
        assert (outcome.completed, outcome.failed) == (attack.scored, 0), outcome
    if attack.flagged is not None:
        assert outcome.flagged is attack.flagged, outcome
        flags = [d["reliability"]["reasons"] for d in json.loads(text)["dimensions"].values()]
        assert all((INSTRUCTIONS_FLAG in reasons) is attack.flagged for reasons in flags)
    if attack.job_status:
        assert outcome.job_status == attack.job_status, outcome
    assert stack.unhandled(before) == []


def test_nul_in_turn_text_is_dropped_before_judges_see_it(in_process_api: InProcessApi) -> None:
    item = {"seeker_post": "I can\x00not sleep.", "response": "That sounds hard.", "id": "nul-t"}
    response = in_process_api.client.post(
        "/v1/scores", params={"wait": 60}, json={"rubric": "epitome", "item": item}
    )
    job_id = in_process_api.finished(response)["id"]
    stored = query(
        in_process_api.database_url,
        f"SELECT item_json, result_json FROM score_jobs WHERE id = '{job_id}'",
    )
    item_json, result_json = stored[0]
    assert json.loads(item_json)["seeker_post"] == "I can\x00not sleep."  # as submitted
    raw = query(
        in_process_api.database_url,
        f"SELECT raw_reply FROM judgments WHERE job_id = '{job_id}'",
    )
    assert raw
    assert all("\x00" not in (r or "") for (r,) in raw)
    assert result_json


def test_provider_failures_reach_callers_as_reason_codes(in_process_api: InProcessApi) -> None:
    response = in_process_api.client.post(
        "/v1/scores",
        params={"wait": 60},
        json={
            "rubric": "epitome",
            "panel": "failing",
            "item": {"seeker_post": "a", "response": "b"},
        },
    )
    result = in_process_api.finished(response)
    for dim in result["dimensions"].values():
        failing = next(j for j in dim["judges"] if j["model"] == FAILING_PANEL[0])
        assert failing["status"] == "abstained"
        assert failing["reason"] == "provider_error"
        assert failing["detail"] == (
            "provider_error: the provider failed to answer "
            "(HTTP 500; InternalServerError; 4 attempts)"
        )


def test_unknown_model_stops_the_item_with_a_clear_error(in_process_api: InProcessApi) -> None:
    body = {
        "rubric": "epitome",
        "panel": "unknown-model",
        "item": {"seeker_post": "a", "response": "b"},
    }
    response = in_process_api.client.post("/v1/scores", params={"wait": 60}, json=body)
    job = in_process_api.finished(response)
    assert job["status"] == "failed"
    assert job["error"].startswith("judge_misconfigured: judge 'openai/no-such-model' cannot be")
    assert "unknown_model" in job["error"]
    stored = query(
        in_process_api.database_url, f"SELECT error FROM score_jobs WHERE id = '{job['id']}'"
    )
    assert stored == [(job["error"],)]


def test_request_ids_correlate_problems_and_logs(in_process_api: InProcessApi) -> None:
    stack = in_process_api
    mine = {"X-Request-ID": "pipeline-run-42.item-7"}
    response = stack.client.get("/v1/scores/not-an-id", headers=mine)
    assert response.status_code == 422
    assert response.headers["x-request-id"] == "pipeline-run-42.item-7"
    assert response.json()["request_id"] == "pipeline-run-42.item-7"
    odd = stack.client.get("/v1/scores/not-an-id", headers={"X-Request-ID": "a b\tc"})
    assert odd.json()["request_id"] != "a b\tc"
    assert len(odd.json()["request_id"]) == 16


def _database(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """An empty database of this test's own: a SQLite file, or a PostgreSQL database."""
    if backend == "sqlite":
        return sqlite_url(tmp_path)
    request.getfixturevalue("postgres_available")
    name, url = create_pg_database()
    request.addfinalizer(lambda: drop_pg_database(name))
    return url


# -- the database refuses a row: only that row is lost ----------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_row_the_database_refuses_is_left_out_alone(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Validation stops what it knows the database refuses; this is the fallback for what it
    does not: one transaction, and when it fails, the refused rows are found and left out."""
    import asyncio

    from judge.persistence import jobs as repo
    from judge.persistence.database import Database
    from judge.persistence.tables import Batch, ScoreJob

    url = _database(backend, tmp_path, request)

    def job(n: int, item_json: str) -> ScoreJob:
        return ScoreJob(
            id=f"{n:032x}",
            batch_id="b" * 32,
            position=n,
            item_id=f"item-{n}",
            rubric_id="r",
            rubric_version="1",
            rubric_hash="h",
            panel_name="p",
            panel_signature="s",
            item_json=item_json,
        )

    async def scenario() -> tuple[dict[int, str], list[int], tuple[int, int]]:
        database = Database(url)
        try:
            await database.upgrade()
            batch = Batch(
                id="b" * 32, rubric_id="r", rubric_version="1", rubric_hash="h", panel_name="p"
            )
            rows = [job(n, '{"ok": true}') for n in range(1, 7)]
            rows[2] = job(3, '{"bad": "\ud800"}')  # a lone surrogate: no database stores it
            rows[4] = job(5, '{"bad": "\udfff"}')
            counted: list[int] = []

            def count(refused: dict[int, str]) -> None:
                batch.total = len(rows) - len(refused)
                batch.rejected = len(refused)
                counted.extend(sorted(refused))

            refused = await repo.insert_skipping_refused(
                database, [batch], rows, before_commit=count
            )
            async with database.session() as session:
                stored = await session.get(Batch, batch.id)
                assert stored is not None
                totals = (stored.total, stored.rejected)
            return refused, counted, totals
        finally:
            await database.dispose()

    refused, counted, totals = asyncio.run(scenario())
    assert sorted(refused) == [2, 4] == counted
    assert refused == {2: "unencodable_text", 4: "unencodable_text"}
    assert totals == (4, 2)
    positions = query(url, "SELECT position FROM score_jobs ORDER BY position")
    assert [p for (p,) in positions] == [1, 2, 4, 6]


# -- /ready says which dependency is down, never the exception ---------------------------------
# the app factory in-process: Litestar 2.25 warns about the routes' plain ``data`` kwargs
@pytest.mark.filterwarnings("ignore:.*Reserved kwarg 'data' declared without a body marker")
@pytest.mark.parametrize("backend", BACKENDS)
def test_ready_reports_reason_codes(
    backend: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    service_simulator: SimulatorProcess,
) -> None:
    import asyncio

    from litestar.testing import TestClient

    from judge.api.app import create_app
    from judge.persistence.database import Database
    from judge.settings import Settings

    url = _database(backend, tmp_path, request)

    async def migrate() -> None:
        database = Database(url)
        await database.upgrade()
        await database.dispose()

    asyncio.run(migrate())
    settings = Settings(database_url=url, simulator={"url": service_simulator.base_url})
    with TestClient(create_app(settings)) as client:
        assert client.get("/ready").json()["checks"] == {"database": "ok"}
        if backend == "postgresql":
            drop_pg_database(url.rsplit("/", 1)[1])
            expected = "unavailable"
        else:
            query_write(url, "DROP TABLE alembic_version")
            expected = "not_migrated"
        deadline = time.monotonic() + 20
        while (response := client.get("/ready")).status_code == 200:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        body: dict[str, Any] = response.json()
    assert response.status_code == 503
    assert body == {"status": "not ready", "mode": "embedded", "checks": {"database": expected}}


def query_write(database_url: str, sql: str) -> None:
    import sqlite3

    path = database_url.split(":///", 1)[1]
    with sqlite3.connect(path) as conn:
        conn.execute(sql)
