"""Economy batches through the process stack (issue 30): ``judge serve`` and a real Celery
worker on Redis, SQLite then PostgreSQL, the simulator's OpenAI Batch API as the provider.
An economy batch ends with the same ratings as an interactive one at half the configured
price, and a worker stopped while the provider works on the batch loses nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from judge.simulator import SimulatorOptions, SimulatorProcess
from tests.e2e.test_service import item
from tests.fixtures.stacks import (
    BACKENDS,
    RedisDatabases,
    ServiceStack,
    child_env,
    create_pg_database,
    drop_pg_database,
    make_stack,
    sqlite_url,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

JUDGES = ("openai/accurate", "openai/accurate@b", "openai/lenient")
PRICE = {"input_per_mtok": 2.0, "output_per_mtok": 8.0}


@pytest.fixture(scope="module")
def slow_batches() -> Iterator[SimulatorProcess]:
    """Provider batches that take 4 s: long enough to stop a worker while one is open."""
    options = SimulatorOptions(latency_ms=10, jitter_ms=0, batch_delay_ms=4000)
    with SimulatorProcess(options, env=child_env()) as simulator:
        yield simulator


@pytest.fixture(scope="module", params=BACKENDS)
def economy_stack(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    slow_batches: SimulatorProcess,
    redis_databases: RedisDatabases,
) -> Iterator[tuple[ServiceStack, Any]]:
    workdir = tmp_path_factory.mktemp(f"economy-{request.param}")
    config = {
        "default_panel": "priced",
        "panels": {"priced": {"judges": [{"model": m, "simulated": True} for m in JUDGES]}},
        "prices": dict.fromkeys(JUDGES, PRICE),
    }
    path = workdir / "judge.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    pg_name = None
    if request.param == "sqlite":
        url = sqlite_url(workdir)
    else:
        request.getfixturevalue("postgres_available")
        pg_name, url = create_pg_database()
    redis_url = redis_databases.acquire()
    stack = make_stack(
        workdir, database_url=url, simulator=slow_batches, config=path, redis_url=redis_url
    )
    try:
        worker = stack.start_worker()
        stack.start_api()
        yield stack, worker
    finally:
        stack.stop()
        redis_databases.release(redis_url)
        if pg_name:
            drop_pg_database(pg_name)


def _view(stack: ServiceStack, batch_id: str) -> dict[str, Any]:
    response = stack.client.get(f"/v1/batches/{batch_id}")
    assert response.status_code == 200, response.text
    view: dict[str, Any] = response.json()
    return view


def _until(stack: ServiceStack, batch_id: str, done: Any, timeout: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        view = _view(stack, batch_id)
        if done(view):
            return view
        assert time.monotonic() < deadline, view
        time.sleep(0.2)


def _results(stack: ServiceStack, batch_id: str) -> dict[str, dict[str, Any]]:
    lines = stack.client.get(f"/v1/batches/{batch_id}/results").text.splitlines()
    return {row["item_id"]: row for row in map(json.loads, lines)}


def _list_price(usage: dict[str, Any]) -> float:
    tokens_in, tokens_out = usage["prompt_tokens"], usage["completion_tokens"]
    return float(tokens_in * PRICE["input_per_mtok"] + tokens_out * PRICE["output_per_mtok"]) / 1e6


def test_economy_survives_a_worker_restart_and_costs_half(
    economy_stack: tuple[ServiceStack, Any],
) -> None:
    stack, worker = economy_stack
    items = [item("eco", n) for n in range(5)]
    response = stack.client.post(
        "/v1/batches", json={"rubric": "epitome", "items": items, "mode": "economy"}
    )
    assert response.status_code == 202, response.text
    batch_id = response.json()["id"]
    submitted = _until(
        stack,
        batch_id,
        lambda v: v["economy"]["stage"] in ("submitted to provider", "in progress"),
    )
    assert len(submitted["economy"]["provider_batches"]) == len(JUDGES)
    worker.stop()  # the provider keeps working; nobody polls it now
    time.sleep(5)
    assert _view(stack, batch_id)["completed"] == 0
    stack.start_worker()
    done = _until(stack, batch_id, lambda v: v["status"] == "completed")
    assert (done["completed"], done["failed"], done["economy"]["stage"]) == (5, 0, "released")
    assert {p["status"] for p in done["economy"]["provider_batches"]} == {"fetched"}

    plain = stack.client.post("/v1/batches", json={"rubric": "epitome", "items": items})
    assert plain.status_code == 202, plain.text
    _until(stack, plain.json()["id"], lambda v: v["status"] == "completed")
    economy, interactive = _results(stack, batch_id), _results(stack, plain.json()["id"])
    assert set(economy) == set(interactive) == {f"eco-{n}" for n in range(5)}
    for item_id, result in economy.items():
        other = interactive[item_id]
        for dim, data in result["dimensions"].items():
            assert data["score"] == other["dimensions"][dim]["score"], (item_id, dim)
            assert [j["rating"] for j in data["judges"]] == [
                j["rating"] for j in other["dimensions"][dim]["judges"]
            ]
        assert result["usage"]["llm_calls"] == other["usage"]["llm_calls"] == len(JUDGES)
        # the batch discount: half the configured price of the same tokens
        assert result["usage"]["cost_usd"] == pytest.approx(0.5 * _list_price(result["usage"]))
        assert other["usage"]["cost_usd"] == pytest.approx(_list_price(other["usage"]))
    assert done["cost_usd"] == pytest.approx(sum(r["usage"]["cost_usd"] for r in economy.values()))


def test_the_cli_submits_an_economy_batch_and_shows_the_provider_side(
    economy_stack: tuple[ServiceStack, Any],
) -> None:
    stack, _ = economy_stack
    path = stack.workdir / "economy-cli.jsonl"
    rows = [item("eco-cli", n) for n in range(2)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = stack.judge(
        "batch", "submit", str(path), "--rubric", "epitome", "--mode", "economy",
        "--url", stack.base_url, "--wait", "--interval", "0.2",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = done.stdout + done.stderr  # the bar's console and the messages
    assert "economy: " in shown
    assert "done: 2 completed, 0 failed" in done.stderr
    assert all(len(line) <= 80 for line in shown.splitlines() if "economy" in line)
    batch_id = done.stderr.split()[1].rstrip(":")
    status = stack.judge("batch", "status", batch_id, "--url", stack.base_url)
    assert status.returncode == 0, status.stderr
    assert "economy: released, 0 item(s) waiting" in status.stdout


def test_cancelling_an_economy_batch_fails_its_held_items(
    economy_stack: tuple[ServiceStack, Any],
) -> None:
    stack, _ = economy_stack
    items = [item("eco-cancel", n) for n in range(3)]
    response = stack.client.post(
        "/v1/batches", json={"rubric": "epitome", "items": items, "mode": "economy"}
    )
    assert response.status_code == 202, response.text
    batch_id = response.json()["id"]
    cancelled = stack.client.post(f"/v1/batches/{batch_id}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    view = _until(stack, batch_id, lambda v: v["status"] == "completed")
    assert (view["completed"], view["failed"], view["economy"]["held"]) == (0, 3, 0)
    time.sleep(6)  # the provider batch, if one was created, finishes: nothing is scored
    assert _view(stack, batch_id)["failed"] == 3
