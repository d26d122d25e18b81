"""Item-level guarantees on the real stack (issue 27): ``judge serve`` and a Celery worker on
SQLite and Redis, the simulated default panel over HTTP. ``judge calibrate --url`` on
labelled items shows the guarantee table; a batch scored afterwards carries intervals and
guarantees, ``GET /v1/batches/{id}/escalations`` and ``judge batch escalations`` list the
items a person must see (with the conversation), and ``judge score`` on the same database
shows the interval and the guarantee; every table fits 80 columns. Labels: the ``accurate``
persona's ratings stand in for the experts (simulated judges)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.simulator.process import SimulatorProcess
from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import (
    DEFAULT_PANEL,
    RedisDatabases,
    ServiceStack,
    make_stack,
    sqlite_url,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

DIMS = ("emotional_reactions", "interpretations", "explorations")
GUARANTEE = {"agreement": 0.8, "confidence": 0.9, "agree_within": 0, "level": 0.9}
N = 40


def item(n: int) -> dict[str, Any]:
    return {
        "id": f"item-{n}",
        "seeker_post": f"{POSTS[n % len(POSTS)]} (day {n})",
        "response": RESPONSES[(n // len(POSTS)) % len(RESPONSES)],
    }


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    redis_databases: RedisDatabases,
) -> Iterator[ServiceStack]:
    workdir = tmp_path_factory.mktemp("guarantee-stack")
    config = workdir / "judge.yaml"
    judges = [{"model": m, "simulated": True} for m in DEFAULT_PANEL]
    config.write_text(
        json.dumps(
            {
                "default_panel": "default",
                "panels": {"default": {"judges": judges}},
                # an evidence gate 40 simulated items can pass (the gate still applies)
                "reliability": {"min_items": 20, "floor": 0.0, "line": 0.2, "guarantee": GUARANTEE},
            }
        )
    )
    url = redis_databases.acquire()
    built = make_stack(
        workdir,
        database_url=sqlite_url(workdir),
        simulator=service_simulator,
        config=config,
        redis_url=url,
    )
    built.env["COLUMNS"] = "80"
    try:
        built.start_worker()
        built.start_api()
        yield built
    finally:
        built.stop()
        redis_databases.release(url)


def batch(stack: ServiceStack, items: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    response = stack.client.post("/v1/batches", json={"rubric": "epitome", "items": items})
    assert response.status_code in (200, 202), response.text
    batch_id = response.json()["id"]
    deadline = time.monotonic() + 240
    while stack.client.get(f"/v1/batches/{batch_id}").json()["status"] != "completed":
        assert time.monotonic() < deadline
        time.sleep(0.3)
    lines = stack.client.get(f"/v1/batches/{batch_id}/results").text.splitlines()
    return batch_id, [json.loads(line) for line in lines]


def fits(text: str) -> None:
    wide = [line for line in text.splitlines() if len(line) > 80]
    assert not wide, "\n".join(wide)


def test_calibrate_score_and_escalate_through_the_api_and_the_cli(
    stack: ServiceStack, tmp_path: Path
) -> None:
    items = [item(n) for n in range(N)]
    _, before = batch(stack, items)
    for result in before:
        assert result["escalate"] == "human"
        assert result["dimensions"]["emotional_reactions"]["guarantee"]["reason"] == (
            "not_calibrated"
        )

    labels = tmp_path / "labels.jsonl"
    with labels.open("w", encoding="utf-8") as out:
        for it, result in zip(items, before, strict=True):
            expert = {}
            for dim in DIMS:
                (rating,) = [
                    j["rating"]
                    for j in result["dimensions"][dim]["judges"]
                    if j["model"] == "openai/accurate"
                ]
                expert[dim] = rating
            out.write(json.dumps({"id": it["id"], "item": it, "labels": {"e1": expert}}) + "\n")
    done = stack.invoke("calibrate", "--rubric", "epitome", "--url", stack.base_url, str(labels))
    assert done.returncode == 0, done.stderr
    assert "Guarantees" in done.stdout
    for dim in DIMS:
        assert dim in done.stdout
    fits(done.stdout.split("Guarantees", 1)[1])

    fresh = [item(n) for n in range(N, N + 10)]
    batch_id, after = batch(stack, items[:5] + fresh)
    for result in after:
        for dim in DIMS:
            part = result["dimensions"][dim]
            assert part["interval"]["level"] == 0.9
            how = part.get("aggregation") or {}
            # the interval is around the panel's equal aggregate (what calibration measures)
            equal = how["equal_score"] if how.get("method") == "weighted" else part["score"]
            assert part["interval"]["low"] <= equal <= part["interval"]["high"]
            assert part["guarantee"]["guaranteed"] == (part["guarantee"]["reason"] is None)
    escalated = [r for r in after if r["escalate"] == "human"]
    assert escalated

    response = stack.client.get(f"/v1/batches/{batch_id}/escalations")
    assert response.status_code == 200, response.text
    listed = response.json()
    assert listed["completed"] == len(after)
    assert [e["job_id"] for e in listed["items"]] == [r["id"] for r in escalated]
    sent = {it["id"]: it for it in items[:5] + fresh}
    for entry in listed["items"]:
        assert entry["item"]["response"] == sent[entry["id"]]["response"]
    missing = stack.client.get(f"/v1/batches/{'0' * 32}/escalations")
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith("application/problem+json")

    shown = stack.invoke("batch", "escalations", batch_id, "--url", stack.base_url)
    assert shown.returncode == 0, shown.stderr
    assert f"{len(escalated)} of {len(after)} completed items need a person" in shown.stdout
    fits(shown.stdout)
    as_json = stack.invoke(
        "batch", "escalations", batch_id, "--url", stack.base_url, "--format", "json"
    )
    assert json.loads(as_json.stdout) == listed

    table = stack.invoke("batch", "results", batch_id, "--url", stack.base_url, "--format", "table")
    assert table.returncode == 0, table.stderr
    assert "escalate: human" in table.stdout
    assert "[0-2] 90%" in table.stdout or "[0-1] 90%" in table.stdout
    fits(table.stdout)

    one = tmp_path / "one.json"
    one.write_text(json.dumps(fresh[0]), encoding="utf-8")
    scored = stack.invoke("score", "--rubric", "epitome", str(one))
    assert scored.returncode == 0, scored.stderr
    assert "90%" in scored.stdout
    assert "guarantee: agreement >= 0.8" in scored.stdout
    fits(scored.stdout)
