"""Several tenants on one server: fail-closed API keys, data owned by the key that created it,
a call cache partitioned per key, caps on what one request may ask for, and idempotent
submission. Real processes (``judge serve`` on SQLite, jobs in-process), nothing mocked."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import ServiceStack, SimulatorProcess, make_stack, sqlite_url

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

NDJSON = {"Content-Type": "application/x-ndjson"}
PROBLEM = "application/problem+json"
#: epitome's dimensions, each 0..2
DIMS = ("emotional_reactions", "interpretations", "explorations")


def item(tag: str, n: int) -> dict[str, Any]:
    return {
        "id": f"{tag}-{n}",
        "seeker_post": f"{POSTS[n % len(POSTS)]} ({tag} case {n})",
        "response": RESPONSES[n % len(RESPONSES)],
    }


def labelled(tag: str, n: int, experts: int = 1) -> dict[str, Any]:
    labels = {f"expert{e}": dict.fromkeys(DIMS, (n + e) % 3) for e in range(experts)}
    return {"id": f"{tag}-{n}", "item": item(tag, n), "labels": labels}


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def problem(response: httpx.Response, status: int, field: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    if field is not None:
        assert body.get("field") == field, body
    return body


@pytest.fixture(scope="module")
def keyed_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
) -> Iterator[ServiceStack]:
    """``judge serve`` on loopback with keys required explicitly, small caps to reach."""
    workdir = tmp_path_factory.mktemp("keyed-stack")
    stack = make_stack(
        workdir,
        database_url=sqlite_url(workdir),
        simulator=service_simulator,
        config=service_config,
        redis_url=None,
    )
    stack.env |= {
        "JUDGE_API__REQUIRE_KEYS": "true",
        "JUDGE_API__KEY_CACHE_S": "0.5",
        "JUDGE_API__MAX_ITEM_CHARS": "2000",
        "JUDGE_API__MAX_CALIBRATION_ITEMS": "6",
        "JUDGE_API__MAX_EXPERTS": "2",
        "JUDGE_API__MIN_CANARY_INTERVAL_S": "60",
        "JUDGE_API__RELIABILITY_PAGE": "2",
        "JUDGE_API__RESULTS_PAGE": "3",
    }
    try:
        stack.start_api()
        yield stack
    finally:
        stack.stop()


def test_keys_are_required_even_when_none_exist_and_after_the_last_is_revoked(
    keyed_stack: ServiceStack,
) -> None:
    stack, client = keyed_stack, keyed_stack.client
    body = {"rubric": "epitome", "item": item("auth", 0)}
    # no key exists yet: still closed (never derived from the key count)
    problem(client.post("/v1/scores", json=body), 401)
    problem(client.get("/v1/rubrics"), 401)
    problem(client.get("/v1/scores/" + "0" * 32), 401)
    assert client.get("/health").status_code == 200
    assert client.get("/ready").status_code == 200
    assert client.get("/metrics").status_code == 200
    assert client.get("/schema/openapi.json").status_code == 200
    assert client.get("/schema/swagger").status_code == 200

    secret = stack.create_key("only", "score")
    assert client.get("/v1/rubrics", headers=bearer(secret)).status_code == 200
    problem(client.get("/v1/rubrics", headers=bearer("ej_not-a-key")), 401)
    problem(client.get("/v1/canaries", headers=bearer(secret)), 403)  # calibrate scope

    revoked = stack.judge("keys", "revoke", secret[:10])
    assert revoked.returncode == 0, revoked.stderr
    deadline = time.monotonic() + 10  # key lookups are cached for 0.5 s here
    while client.get("/v1/rubrics", headers=bearer(secret)).status_code != 401:
        assert time.monotonic() < deadline, "a revoked key is still accepted"
        time.sleep(0.1)
    # the last key is gone: anonymous requests are still refused
    problem(client.post("/v1/scores", json=body), 401)
    problem(client.get("/v1/rubrics"), 401)


def wait_done(client: httpx.Client, url: str, headers: dict[str, str]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        got = client.get(url, headers=headers)
        assert got.status_code == 200, got.text
        data: dict[str, Any] = got.json()
        if data["status"] in ("completed", "failed"):
            return data
        assert time.monotonic() < deadline, data
        time.sleep(0.2)


def test_data_belongs_to_its_key_and_admin_reads_all(keyed_stack: ServiceStack) -> None:
    stack, client = keyed_stack, keyed_stack.client
    alice = bearer(stack.create_key("alice", "score", "batch", "calibrate"))
    bob = bearer(stack.create_key("bob", "score", "batch", "calibrate"))
    admin = bearer(stack.create_key("root", "admin"))
    score = client.post(
        "/v1/scores", params={"wait": 60}, json={"rubric": "epitome", "item": item("own", 0)},
        headers=alice,
    )  # fmt: skip
    assert score.status_code == 200, score.text
    job_id = score.json()["id"]
    batch = client.post(
        "/v1/batches", params={"rubric": "epitome"}, headers=NDJSON | alice,
        content="".join(json.dumps(item("own", n)) + "\n" for n in range(1, 8)),
    )  # fmt: skip
    assert batch.status_code == 202, batch.text
    batch_id = batch.json()["id"]
    run = client.post(
        "/v1/calibrations", params={"wait": 60}, headers=alice,
        json={"rubric": "epitome", "items": [labelled("cal", n) for n in range(3)]},
    )  # fmt: skip
    assert run.status_code == 200, run.text
    run_id = run.json()["id"]
    probe = client.post(
        "/v1/probes", params={"wait": 60}, headers=alice,
        json={"rubric": "epitome", "kind": "verbosity", "items": [item("probe", 0)]},
    )  # fmt: skip
    assert probe.status_code == 200, probe.text
    wait_done(client, f"/v1/batches/{batch_id}", alice)

    owned = [
        f"/v1/probes/{probe.json()['id']}",
        f"/v1/scores/{job_id}",
        f"/v1/batches/{batch_id}",
        f"/v1/batches/{batch_id}/results",
        f"/v1/calibrations/{run_id}",
        f"/v1/calibrations/{run_id}/report",
        f"/v1/calibrations/{run_id}/aggregation",
    ]
    for url in owned:
        assert client.get(url, headers=alice).status_code == 200, url
        assert client.get(url, headers=admin).status_code == 200, url
        problem(client.get(url, headers=bob), 404)
    results = client.get(f"/v1/batches/{batch_id}/results", headers=alice)  # 3 per page here
    assert [json.loads(line)["line"] for line in results.text.splitlines()] == list(range(1, 8))

    # a canary on someone else's run is refused as if the run did not exist
    canary = {"calibration_id": run_id, "interval_s": 3600}
    problem(client.post("/v1/canaries", json=canary, headers=bob), 404, "calibration_id")
    created = client.post("/v1/canaries", json=canary, headers=alice)
    assert created.status_code == 201, created.text
    assert [c["id"] for c in client.get("/v1/canaries", headers=bob).json()] == []
    mine = [c["id"] for c in client.get("/v1/canaries", headers=alice).json()]
    assert mine == [created.json()["id"]]
    assert created.json()["id"] in [
        c["id"] for c in client.get("/v1/canaries", headers=admin).json()
    ]

    history = client.get("/v1/reliability/epitome", headers=bob).json()
    assert (history["calibrations"], history["canaries"]) == ([], [])
    history = client.get("/v1/reliability/epitome", headers=alice).json()
    assert [c["id"] for c in history["calibrations"]] == [run_id]
    # a labelling plan cannot read another key's batch either
    plan = {"rubric": "epitome", "pool_batch": batch_id, "budget": 2}
    problem(client.post("/v1/calibrations/plan", json=plan, headers=bob), 422, "pool_batch")
    planned = client.post("/v1/calibrations/plan", json=plan, headers=alice)
    assert planned.status_code == 200, planned.text


def test_the_call_cache_is_partitioned_per_key(keyed_stack: ServiceStack) -> None:
    """The same text scored by two keys: the second key's call is not a cache hit (a hit
    would tell it that someone else scored this text); the same key's repeat is."""
    stack, client = keyed_stack, keyed_stack.client
    carol = bearer(stack.create_key("carol", "score"))
    dave = bearer(stack.create_key("dave", "score"))
    body = {"rubric": "epitome", "item": item("secret", 0)}

    def hits(headers: dict[str, str]) -> int:
        got = client.post("/v1/scores", params={"wait": 60}, json=body, headers=headers)
        assert got.status_code == 200, got.text
        assert got.json()["status"] == "completed"
        return int(got.json()["usage"]["cache_hits"])

    assert hits(carol) == 0
    assert hits(dave) == 0  # not served from carol's entries
    assert hits(carol) == 3  # one per judge: carol's own entries


def test_caps_on_items_calibrations_canaries_and_history(keyed_stack: ServiceStack) -> None:
    stack, client = keyed_stack, keyed_stack.client
    erin = bearer(stack.create_key("erin", "score", "batch", "calibrate"))
    long_item = {"seeker_post": "x" * 1500, "response": "y" * 600}  # 2100 > 2000 characters
    problem(
        client.post("/v1/scores", json={"rubric": "epitome", "item": long_item}, headers=erin),
        422,
        "item.turns",
    )
    batch = client.post(
        "/v1/batches", params={"rubric": "epitome"}, headers=NDJSON | erin,
        content=json.dumps(item("cap", 0)) + "\n" + json.dumps(long_item) + "\n",
    )  # fmt: skip
    assert batch.status_code == 202, batch.text
    assert batch.json()["total"] == 1
    assert batch.json()["rejections"][0]["line"] == 2
    assert batch.json()["rejections"][0]["field"] == "item.turns"

    too_many = {"rubric": "epitome", "items": [labelled("big", n) for n in range(7)]}
    problem(client.post("/v1/calibrations", json=too_many, headers=erin), 413, "items")
    experts = {"rubric": "epitome", "items": [labelled("exp", 0, experts=3)]}
    problem(client.post("/v1/calibrations", json=experts, headers=erin), 422, "items[0].labels")

    runs = []
    for n in range(3):
        run = client.post(
            "/v1/calibrations", params={"wait": 60}, headers=erin,
            json={"rubric": "epitome", "items": [labelled(f"page{n}", 0)]},
        )  # fmt: skip
        assert run.status_code == 200, run.text
        runs.append(run.json()["id"])
    fast = {"calibration_id": runs[0], "interval_s": 5}
    problem(client.post("/v1/canaries", json=fast, headers=erin), 422, "interval_s")

    first = client.get("/v1/reliability/epitome", headers=erin).json()
    assert [r["id"] for r in first["calibrations"]] == runs[:2]  # 2 per page here
    assert first["next_offset"] == 2
    second = client.get(
        "/v1/reliability/epitome", params={"offset": 2, "limit": 100}, headers=erin
    ).json()
    assert [r["id"] for r in second["calibrations"]] == runs[2:]
    assert second["next_offset"] is None


def test_an_idempotency_key_makes_a_retry_return_the_first_submission(
    keyed_stack: ServiceStack,
) -> None:
    stack, client = keyed_stack, keyed_stack.client
    frank = bearer(stack.create_key("frank", "score", "batch"))
    grace = bearer(stack.create_key("grace", "score", "batch"))
    body = {"rubric": "epitome", "item": item("idem", 0)}
    once = {"Idempotency-Key": "retry-me-1"}
    first = client.post("/v1/scores", json=body, headers=frank | once)
    again = client.post("/v1/scores", json=body, headers=frank | once)
    assert first.status_code in (200, 202)
    assert again.status_code in (200, 202)
    assert first.json()["id"] == again.json()["id"]
    other = client.post("/v1/scores", json=body, headers=grace | once)  # keys are per API key
    assert other.json()["id"] != first.json()["id"]
    changed = {"rubric": "epitome", "item": item("idem", 1)}
    problem(
        client.post("/v1/scores", json=changed, headers=frank | once), 422, "header.Idempotency-Key"
    )
    problem(
        client.post("/v1/scores", json=body, headers=frank | {"Idempotency-Key": "a b"}),
        422,
        "header.Idempotency-Key",
    )

    lines = "".join(json.dumps(item("idem-batch", n)) + "\n" for n in range(5))
    submit = {"params": {"rubric": "epitome"}, "content": lines}
    key = {"Idempotency-Key": "batch-7"}
    batch = client.post("/v1/batches", headers=NDJSON | frank | key, **submit)
    retry = client.post("/v1/batches", headers=NDJSON | frank | key, **submit)
    assert batch.status_code == retry.status_code == 202
    assert batch.json()["id"] == retry.json()["id"]
    plain = client.post("/v1/batches", headers=NDJSON | frank, **submit)
    assert plain.json()["id"] != batch.json()["id"]
