"""The service end to end as real processes: ``judge serve`` (Litestar), ``judge worker``
(Celery on Redis), SQLite and PostgreSQL, and the LLM simulator; nothing is mocked.

See ``conftest.py`` for how the processes are started and always stopped.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections import Counter
from http import HTTPStatus
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import (
    DEFAULT_PANEL,
    FLAKY_PANEL,
    RedisServer,
    ServiceStack,
    query,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

NDJSON = {"Content-Type": "application/x-ndjson"}
PROBLEM = "application/problem+json"


#: JSON allows these unescaped inside strings; line splitters other than "\n" break on them.
SEPARATORS = "\u2028\u2029\x85"


def item(tag: str, n: int) -> dict[str, Any]:
    """A distinct shorthand item (distinct prompts, so no call is served from the cache)."""
    return {
        "id": f"{tag}-{n}",
        "seeker_post": f"{POSTS[n % len(POSTS)]}{SEPARATORS}({tag} case {n})",
        "response": RESPONSES[n % len(RESPONSES)],
        "metadata": {"tag": tag, "n": n},
    }


def jsonl(rows: list[Any]) -> bytes:
    """JSON Lines as pipelines often write them: UTF-8, non-ASCII characters unescaped."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def submit_batch(
    stack: ServiceStack, body: bytes, *, rubric: str = "epitome", panel: str | None = None
) -> dict[str, Any]:
    params = {"rubric": rubric} | ({"panel": panel} if panel else {})
    response = stack.client.post(
        "/v1/batches", params=params, content=body, headers=NDJSON | stack.headers()
    )
    assert response.status_code == 202, response.text
    assert response.headers["location"] == f"/v1/batches/{response.json()['id']}"
    data: dict[str, Any] = response.json()
    return data


def batch_status(stack: ServiceStack, batch_id: str) -> dict[str, Any]:
    response = stack.client.get(f"/v1/batches/{batch_id}", headers=stack.headers())
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def wait_batch(stack: ServiceStack, batch_id: str, timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        status = batch_status(stack, batch_id)
        if status["status"] == "completed":
            return status
        assert time.monotonic() < deadline, f"batch not done in {timeout} s: {status}"
        time.sleep(0.2)


def wait_progress(stack: ServiceStack, batch_id: str, at_least: int) -> dict[str, Any]:
    """Poll until at least ``at_least`` items are done (or the batch is finished)."""
    deadline = time.monotonic() + 60
    while True:
        status = batch_status(stack, batch_id)
        if status["completed"] >= at_least:
            return status
        assert time.monotonic() < deadline, f"no progress: {status}"
        time.sleep(0.02)


def submit_in_flight(
    stack: ServiceStack, tag: str, n: int, at_least: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Submit a batch of ``n`` items and return it with a status seen mid-flight (at least
    ``at_least`` items done, not finished): the moment a disruption test needs. On a busy
    machine the test's own polls can stall for a whole batch; such a batch is checked complete
    and a fresh one submitted, so the disruption always lands on work in flight."""
    deadline = time.monotonic() + 240
    for attempt in itertools.count():
        rows = [item(f"{tag}.{attempt}" if attempt else tag, i) for i in range(n)]
        batch = submit_batch(stack, jsonl(rows))
        status = wait_progress(stack, batch["id"], at_least)
        if status["status"] != "completed":
            return batch, status
        assert (status["completed"], status["failed"]) == (n, 0), status
        assert time.monotonic() < deadline, f"every batch finished before the disruption: {status}"
    raise AssertionError("unreachable")


def results(stack: ServiceStack, batch_id: str) -> list[dict[str, Any]]:
    response = stack.client.get(f"/v1/batches/{batch_id}/results", headers=stack.headers())
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def assert_each_item_once(
    stack: ServiceStack, batch_id: str, n: int, *, missing: frozenset[int] = frozenset()
) -> list[dict[str, Any]]:
    """Every line scored exactly once: results lines unique and complete, and in the database
    one finished job per line and exactly one judgment per judge per job."""
    expected = [i for i in range(1, n + 1) if i not in missing]
    rows = results(stack, batch_id)
    lines = [r["line"] for r in rows]
    assert Counter(lines).most_common(1)[0][1] == 1, "a line appears twice in the results"
    assert lines == expected
    assert {r["status"] for r in rows} == {"completed"}
    assert {r["batch_id"] for r in rows} == {batch_id}
    assert len({r["id"] for r in rows}) == len(rows)
    assert re.fullmatch(r"[0-9a-f]{32}", batch_id)
    jobs = query(
        stack.database_url,
        f"SELECT position, status FROM score_jobs WHERE batch_id = '{batch_id}'",
    )
    assert sorted(p for p, _ in jobs) == expected
    assert {s for _, s in jobs} == {"completed"}
    per_job = query(
        stack.database_url,
        "SELECT j.job_id, count(*), count(DISTINCT j.model) FROM judgments j "
        f"JOIN score_jobs s ON s.id = j.job_id WHERE s.batch_id = '{batch_id}' "
        "GROUP BY j.job_id",
    )
    assert len(per_job) == len(expected), "some jobs have no judgments"
    assert {(count, models) for _, count, models in per_job} == {(3, 3)}, (
        "a job has more (or fewer) judgments than the panel's three calls"
    )
    return rows


def assert_problem(
    response: httpx.Response, status: int, field: str | None = None
) -> dict[str, Any]:
    """An RFC 9457 problem details response naming ``field``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM), response.headers
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["type"] == "about:blank"
    assert body["title"] == HTTPStatus(status).phrase
    assert body["detail"]
    if field is not None:
        assert body.get("field") == field, body
    return body


def assert_result_shape(result: dict[str, Any], stack: ServiceStack, rubric: str) -> None:
    """docs/DESIGN.md section 3: the result of one scored item."""
    spec = stack.client.get(f"/v1/rubrics/{rubric}", headers=stack.headers()).json()
    assert result["status"] == "completed"
    assert re.fullmatch(r"[0-9a-f]{32}", result["id"])
    assert result["rubric"] == {"id": rubric, "version": spec["version"], "hash": spec["hash"]}
    assert [j["model"] for j in result["panel"]] == list(DEFAULT_PANEL)
    for judge in result["panel"]:
        assert judge["resolved_model"]
        assert isinstance(judge["params"], dict)
    assert set(result["dimensions"]) == {d["id"] for d in spec["dimensions"]}
    for dim in result["dimensions"].values():
        assert {"score", "scale", "judges", "agreement", "reliability"} <= set(dim)
        assert [j["model"] for j in dim["judges"]] == list(DEFAULT_PANEL)
        for judge in dim["judges"]:
            assert {"model", "rating", "rationale", "status", "reason"} <= set(judge)
            assert judge["status"] == "ok"
            assert judge["rating"] is not None
        agreement = dim["agreement"]
        assert agreement["valid"] == 3
        assert agreement["quorum"] >= 1
        assert {"spread", "modal_share", "top1_agreement"} & set(agreement)
        assert "level" in dim["reliability"]
    usage = result["usage"]
    assert set(usage) >= {"llm_calls", "prompt_tokens", "completion_tokens", "cost_usd"}
    assert "cache_hits" in usage
    assert usage["llm_calls"] >= 3  # one per judge, more if a busy machine timed one out
    assert usage["prompt_tokens"] > 0
    assert isinstance(result["timings_ms"], dict)
    assert result["timings_ms"]
    assert result["metadata"] == {"tag": "e2e", "n": 0}


# -- 1. one score end to end -----------------------------------------------------------------
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_score_end_to_end_through_api_and_worker(
    backend: str, request: pytest.FixtureRequest
) -> None:
    stack: ServiceStack = request.getfixturevalue(f"{backend}_stack")
    ready = stack.client.get("/ready").json()
    assert ready == {
        "status": "ready",
        "mode": "celery",
        "checks": {"database": "ok", "redis": "ok"},
    }
    worker = next(p for p in stack.processes if p.name.startswith("worker") and p.alive)
    ran_before = worker.log_text().count("succeeded in")
    body = {"rubric": "epitome", "item": item("e2e", 0)}
    response = stack.client.post("/v1/scores", params={"wait": 60}, json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    assert response.headers["location"] == f"/v1/scores/{result['id']}"
    assert result["item_id"] == "e2e-0"
    assert_result_shape(result, stack, "epitome")
    again = stack.client.get(f"/v1/scores/{result['id']}")
    assert again.status_code == 200
    assert again.json() == result

    # stored: every judgment with its raw reply, tokens and resolved model; the worker ran it
    rows = query(
        stack.database_url,
        "SELECT model, resolved_model, raw_reply, prompt_tokens, outcome FROM judgments "
        f"WHERE job_id = '{result['id']}' ORDER BY model",
    )
    assert sorted(r[0] for r in rows) == sorted(DEFAULT_PANEL)
    assert all(r[1] and r[2] and r[3] > 0 for r in rows), rows
    # Celery logs "succeeded" after the task returns, a moment after the API saw the result
    deadline = time.monotonic() + 10
    while worker.log_text().count("succeeded in") <= ran_before:
        assert time.monotonic() < deadline, "the worker did not run it"
        time.sleep(0.05)

    # without ?wait= the answer is 202 with a location to poll
    later = stack.client.post("/v1/scores", json={"rubric": "epitome", "item": item("e2e", 1)})
    assert later.status_code in (200, 202), later.text
    location = later.headers["location"]
    deadline = time.monotonic() + 30
    while (polled := stack.client.get(location).json())["status"] != "completed":
        assert time.monotonic() < deadline, polled
        time.sleep(0.1)


def test_embedded_mode_scores_without_redis(embedded_stack: ServiceStack) -> None:
    stack = embedded_stack
    ready = stack.client.get("/ready").json()
    assert ready["mode"] == "embedded"
    assert ready["checks"] == {"database": "ok"}
    assert "JUDGE_REDIS_URL" not in stack.env
    body = {"rubric": "epitome", "item": item("e2e", 0)}
    response = stack.client.post(
        "/v1/scores", params={"wait": 60}, json=body, headers=stack.headers()
    )
    assert response.status_code == 200, response.text
    assert_result_shape(response.json(), stack, "epitome")
    schema = stack.client.get("/schema/openapi.json")
    assert schema.status_code == 200
    assert {"/v1/scores", "/v1/batches", "/v1/batches/{batch_id}/results"} <= set(
        schema.json()["paths"]
    )
    assert stack.client.get("/schema/swagger").status_code == 200


# -- 2. a batch of 300 -------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_batch_of_300_items_each_present_once(backend: str, request: pytest.FixtureRequest) -> None:
    stack: ServiceStack = request.getfixturevalue(f"{backend}_stack")
    n = 300
    started = time.monotonic()
    batch = submit_batch(stack, jsonl([item("b300", i) for i in range(n)]))
    assert (batch["total"], batch["rejected"]) == (n, 0)
    status = wait_batch(stack, batch["id"], timeout=120)
    assert (status["completed"], status["failed"]) == (n, 0)
    rows = assert_each_item_once(stack, batch["id"], n)
    assert [r["item_id"] for r in rows] == [f"b300-{i}" for i in range(n)]
    assert [r["metadata"]["n"] for r in rows] == list(range(n))
    print(f"{backend}: 300 items x 3 judges in {time.monotonic() - started:.1f} s")


# -- 3. a worker killed mid-batch ----------------------------------------------------------------
def kill_worker_holding_jobs(stack: ServiceStack, batch_id: str) -> list[str]:
    """SIGKILL the stack's worker at a moment it holds running jobs of ``batch_id``; returns
    the ids of the jobs it held (frozen as running: nothing else claims them), or no ids when
    the batch finished first. On a busy machine a worker can sit idle between the outbox's
    deliveries, so a kill that finds no job running starts a new worker and waits for the
    next running one."""
    running = f"SELECT id FROM score_jobs WHERE batch_id = '{batch_id}' AND status = 'running'"
    deadline = time.monotonic() + 120
    while True:
        worker = next(p for p in stack.processes if p.name.startswith("worker") and p.alive)
        while not query(stack.database_url, running):
            if batch_status(stack, batch_id)["status"] == "completed":
                return []
            assert time.monotonic() < deadline, "no job of the batch ever ran"
            time.sleep(0.01)
        worker.kill()
        assert not worker.alive
        held = [job_id for (job_id,) in query(stack.database_url, running)]
        if held:
            return held
        stack.start_worker()


def test_worker_killed_mid_batch_every_item_completed_once(sqlite_stack: ServiceStack) -> None:
    """A worker killed while it runs jobs: once their leases lapse a new worker redoes exactly
    those jobs, and every item is scored once."""
    stack = sqlite_stack
    n = 150
    # a warm worker (its runtime built), so the batch is mid-flight when it dies
    warm = stack.client.post(
        "/v1/scores", params={"wait": 60}, json={"rubric": "epitome", "item": item("warm", 0)}
    )
    assert warm.status_code == 200, warm.text
    deadline = time.monotonic() + 240
    for attempt in itertools.count():
        batch, before = submit_in_flight(stack, f"kill{attempt}", n, at_least=20)
        held = kill_worker_holding_jobs(stack, batch["id"])
        if held:
            break
        # the test's polls stalled until the batch was done: it is complete, try another
        assert time.monotonic() < deadline, "every batch finished before a job could be held"
    killed = time.monotonic()
    stack.start_worker()
    status = wait_batch(stack, batch["id"], timeout=120)
    print(
        f"killed at {before['completed']}/{n} holding {len(held)} jobs; "
        f"done {time.monotonic() - killed:.1f} s later"
    )
    assert (status["completed"], status["failed"]) == (n, 0), (before, status)
    assert_each_item_once(stack, batch["id"], n)
    attempts = dict(
        query(
            stack.database_url,
            f"SELECT id, attempts FROM score_jobs WHERE batch_id = '{batch['id']}'",
        )
    )
    assert all(attempts[job_id] >= 2 for job_id in held), "a held job was not redone"


# -- 4. Redis restarted mid-batch ----------------------------------------------------------------
def test_redis_restart_mid_batch_still_completes(
    sqlite_stack: ServiceStack, private_redis: RedisServer
) -> None:
    """Redis restarted mid-batch (the queue and in-flight messages lost), then eight times more
    while the worker holds unacknowledged messages (in about one such restart in six, Celery
    5.7.0's reconnect failed and the worker stopped: judge/worker/consumer.py), then with the
    worker idle (kombu's consumer loses its connection between messages: before kombu 5.4 a
    worker could stop consuming here, celery/celery#9054). The same worker process, never
    exited or restarted, finishes every batch and then scores a job submitted after the last
    restart."""
    stack = sqlite_stack
    assert stack.env["JUDGE_REDIS_URL"] == private_redis.url(0)
    workers = {p.pid for p in stack.processes if p.name.startswith("worker") and p.alive}
    assert workers
    n = 150
    batch, before = submit_in_flight(stack, "redis", n, at_least=20)
    private_redis.restart()  # SHUTDOWN NOSAVE: the queue and in-flight messages are gone
    restarted = time.monotonic()
    status = wait_batch(stack, batch["id"], timeout=120)
    print(
        f"restarted at {before['completed']}/{n}; done {time.monotonic() - restarted:.1f} s later"
    )
    assert (status["completed"], status["failed"]) == (n, 0)
    assert_each_item_once(stack, batch["id"], n)
    assert stack.client.get("/ready").json()["checks"] == {"database": "ok", "redis": "ok"}
    for round_ in range(8):
        # consuming again since the last restart, and holding messages of a batch in flight
        batch, _ = submit_in_flight(stack, f"redis{round_}", 80, at_least=5)
        private_redis.restart()
        status = wait_batch(stack, batch["id"], timeout=120)
        assert (status["completed"], status["failed"]) == (80, 0), (round_, status)
    private_redis.restart()  # the worker idle, its consumer waiting for the next message
    after = stack.client.post(
        "/v1/scores", params={"wait": 60}, json={"rubric": "epitome", "item": item("after", 0)}
    )
    assert after.status_code == 200, after.text
    assert after.json()["status"] == "completed"
    assert {p.pid for p in stack.processes if p.name.startswith("worker") and p.alive} == workers


# -- 5. a flaky judge -----------------------------------------------------------------------------
def test_flaky_judge_429s_do_not_fail_items(sqlite_stack: ServiceStack) -> None:
    n = 20
    batch = submit_batch(sqlite_stack, jsonl([item("flaky", i) for i in range(n)]), panel="flaky")
    status = wait_batch(sqlite_stack, batch["id"])
    assert (status["completed"], status["failed"]) == (n, 0)
    rows = results(sqlite_stack, batch["id"])
    assert len(rows) == n
    for row in rows:
        assert [j["model"] for j in row["panel"]] == list(FLAKY_PANEL)
        for dim in row["dimensions"].values():
            flaky = next(j for j in dim["judges"] if j["model"] == FLAKY_PANEL[0])
            assert (flaky["status"], flaky["rating"] is None) == ("ok", False), flaky
    attempts = query(
        sqlite_stack.database_url,
        "SELECT j.attempts FROM judgments j JOIN score_jobs s ON s.id = j.job_id "
        f"WHERE s.batch_id = '{batch['id']}' AND j.model = '{FLAKY_PANEL[0]}'",
    )
    assert len(attempts) == n
    assert {a for (a,) in attempts} == {3}, "each call: two 429s, then a rating"


# -- 7. API keys -----------------------------------------------------------------------------------
def test_a_loopback_server_without_required_keys_still_checks_the_keys_it_is_sent(
    embedded_stack: ServiceStack,
) -> None:
    """Loopback and ``api.require_keys`` unset: keyless requests are served (one local user)
    until a key exists (then a local relay could bypass it); a key that is sent must be valid
    and have the scope. Fail-closed servers (keys required) are tested in test_tenancy.py,
    a reverse proxy in test_edge.py."""
    stack = embedded_stack
    client = stack.client
    body = {"rubric": "epitome", "item": item("auth", 0)}
    full = stack.create_key("pipeline", cli=True)  # `judge keys create`: its default scopes
    scorer = stack.create_key("scorer-only", "score", cli=True)
    assert full.startswith("ej_")
    assert scorer != full
    listed = stack.invoke("keys", "list", "--format", "json")
    assert listed.returncode == 0
    assert full not in listed.stdout
    assert {k["name"] for k in json.loads(listed.stdout)} >= {"pipeline", "scorer-only"}

    # a key exists: keyless use ends (within the key cache's 5 s)
    deadline = time.monotonic() + 15
    while client.get("/v1/rubrics").status_code != 401:
        assert time.monotonic() < deadline, "keyless requests are served although keys exist"
        time.sleep(0.25)
    wrong = {"Authorization": "Bearer ej_not-a-key"}
    anonymous = assert_problem(client.post("/v1/scores", json=body, headers=wrong), 401)
    assert "unknown or revoked" in anonymous["detail"]
    refused = client.get("/v1/rubrics", headers={"Authorization": "Basic abc"})
    assert_problem(refused, 401)
    assert refused.headers["www-authenticate"] == "Bearer"

    as_scorer = {"Authorization": f"Bearer {scorer}"}
    assert client.get("/v1/rubrics", headers=as_scorer).status_code == 200
    problem = assert_problem(
        client.post(
            "/v1/batches",
            params={"rubric": "epitome"},
            content=jsonl([body["item"]]),
            headers=NDJSON | as_scorer,
        ),
        403,
    )
    assert "batch" in problem["detail"]

    as_pipeline = {"Authorization": f"Bearer {full}"}
    scored = client.post("/v1/scores", params={"wait": 60}, json=body, headers=as_pipeline)
    assert scored.status_code == 200, scored.text
    assert scored.json()["status"] == "completed"
    batch = client.post(
        "/v1/batches",
        params={"rubric": "epitome"},
        content=jsonl([item("auth", 1)]),
        headers=NDJSON | as_pipeline,
    )
    assert batch.status_code == 202, batch.text
    assert client.get("/health").status_code == 200  # liveness needs no key

    revoked = stack.invoke("keys", "revoke", scorer[:10])
    assert revoked.returncode == 0, revoked.stderr
    deadline = time.monotonic() + 15  # key lookups are cached for api.key_cache_s (5 s)
    while client.get("/v1/rubrics", headers=as_scorer).status_code != 401:
        assert time.monotonic() < deadline, "a revoked key is still accepted"
        time.sleep(0.25)


def test_serve_refuses_to_start_unsafely(tmp_path: Path) -> None:
    """No keys and a public address, or an unmigrated database: a clear message, no server."""
    env = {
        "JUDGE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'fresh.db'}",
        "JUDGE_REDIS_URL": "redis://127.0.0.1:1/0",  # never reached: both exit before
    }
    stack = ServiceStack(tmp_path, env)
    try:
        for command in (["serve", "--port", "0"], ["worker"]):
            done = stack.judge(*command, timeout=60)
            assert done.returncode != 0, done.stdout
            assert "run `judge db upgrade` first" in done.stderr, done.stderr
        done = stack.judge("serve", "--host", "0.0.0.0", "--port", "0", "--migrate", timeout=60)
    finally:
        stack.stop()
    assert done.returncode != 0
    assert "refusing to bind 0.0.0.0" in done.stderr
    assert "judge keys create" in done.stderr


# -- 8. the batch CLI -----------------------------------------------------------------------------
def test_batch_cli_submit_wait_status_results(sqlite_stack: ServiceStack, tmp_path: Path) -> None:
    stack = sqlite_stack
    n = 25
    rows = [item("cli", i) for i in range(n)]
    rows[2]["metadata"]["note"] = f"a{SEPARATORS}b"
    source = tmp_path / "items.jsonl"
    source.write_bytes(jsonl(rows))
    out = tmp_path / "out.jsonl"
    url = ["--url", stack.base_url]
    done = stack.invoke(
        "batch", "submit", str(source), "--rubric", "epitome", *url, "--wait", "-o", str(out),
        "--interval", "0.2",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    match = re.search(r"batch ([0-9a-f]{32}): 25 items queued, 0 rejected", done.stderr)
    assert match, done.stderr
    batch_id = match.group(1)
    assert f"wrote {n} results to {out}" in done.stderr
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["line"] for r in written] == list(range(1, n + 1))
    assert {r["status"] for r in written} == {"completed"}
    assert written[2]["metadata"]["note"] == f"a{SEPARATORS}b"

    status = stack.invoke("batch", "status", batch_id, *url, "--format", "json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert (data["status"], data["completed"], data["total"]) == ("completed", n, n)
    text = stack.invoke("batch", "status", batch_id, *url)
    assert f"{n}/{n} completed" in text.stdout

    again = tmp_path / "again.jsonl"
    fetched = stack.invoke("batch", "results", batch_id, *url, "-o", str(again))
    assert fetched.returncode == 0, fetched.stderr
    assert again.read_text() == out.read_text()
    to_stdout = stack.invoke("batch", "results", batch_id, *url)
    assert to_stdout.stdout == out.read_text()

    missing = stack.invoke("batch", "status", "0" * 32, *url)
    assert missing.returncode != 0
    assert "HTTP 404" in missing.stderr
