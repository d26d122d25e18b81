"""Economy batches (``mode: economy``, issue 30) on the composition root's app in process, on
SQLite and PostgreSQL, with jobs on the embedded runner and the simulator's OpenAI Batch API
over real HTTP: bad input is a 4xx naming ``mode``, and an economy batch ends with the same
ratings as an interactive one, its calls made as provider batches."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.e2e.test_service import NDJSON, assert_problem, item, jsonl
from tests.fixtures.in_process import InProcessApi

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


def _submit(api: InProcessApi, body: dict[str, Any]) -> dict[str, Any]:
    response = api.client.post("/v1/batches", json=body)
    assert response.status_code == 202, response.text
    view: dict[str, Any] = response.json()
    return view


def _wait(api: InProcessApi, batch_id: str) -> tuple[dict[str, Any], list[str]]:
    """The finished batch, and every economy stage its view showed on the way."""
    stages: list[str] = []
    deadline = time.monotonic() + 180
    while True:
        view: dict[str, Any] = api.client.get(f"/v1/batches/{batch_id}").json()
        if view.get("economy") and (not stages or stages[-1] != view["economy"]["stage"]):
            stages.append(view["economy"]["stage"])
        if view["status"] == "completed":
            return view, stages
        assert not api.unhandled(), api.unhandled()
        assert time.monotonic() < deadline, view
        time.sleep(0.1)


def _results(api: InProcessApi, batch_id: str) -> dict[str, dict[str, Any]]:
    lines = api.client.get(f"/v1/batches/{batch_id}/results").text.splitlines()

    return {row["item_id"]: row for row in map(json.loads, lines)}


def _ratings(result: dict[str, Any], model: str) -> dict[str, Any]:
    return {
        dim: next(j["rating"] for j in data["judges"] if j["model"] == model)
        for dim, data in result["dimensions"].items()
    }


def test_bad_modes_are_4xx_naming_the_field(in_process_api: InProcessApi) -> None:
    client = in_process_api.client
    body = {"rubric": "epitome", "items": [item("mode", 0)]}
    assert_problem(client.post("/v1/batches", json=body | {"mode": "cheap"}), 422, "mode")
    refused = client.post("/v1/batches", json=body | {"mode": "economy", "panel": "mixed"})
    problem = assert_problem(refused, 422, "mode")
    assert "anthropic/accurate" in problem["detail"]
    assert "gemini/accurate" in problem["detail"]
    lines = jsonl([item("mode", 1)])
    bad_query = client.post(
        "/v1/batches", params={"rubric": "epitome", "mode": "cheap"}, content=lines, headers=NDJSON
    )
    assert bad_query.status_code in (400, 422), bad_query.text
    assert "mode" in bad_query.text
    assert_problem(
        client.post("/v1/batches", params={"mode": "economy"}, json=body), 422, "query.mode"
    )
    assert not in_process_api.unhandled()


def test_an_economy_batch_scores_like_an_interactive_one(in_process_api: InProcessApi) -> None:
    api = in_process_api
    # a tag per backend: the simulator (shared by the session) counts each prompt's failures
    tag = f"economy-{api.backend}"
    items = [item(tag, n) for n in range(4)]
    # FLAKY_PANEL: two accurate judges and one whose every prompt fails twice with HTTP 429,
    # so its batch lines fail at the provider and are made again interactively
    economy = _submit(
        api, {"rubric": "epitome", "panel": "flaky", "items": items, "mode": "economy"}
    )
    assert economy["mode"] == "economy"
    assert economy["economy"]["held"] == 4
    assert economy["queued"] == 4
    done, stages = _wait(api, economy["id"])
    assert (done["completed"], done["failed"]) == (4, 0)
    assert stages[-1] == "released"
    providers = done["economy"]["provider_batches"]
    assert sorted(p["model"] for p in providers) == [
        "openai/accurate@a",
        "openai/accurate@b",
        "openai/fail429-2",
    ]
    assert all(p["status"] == "fetched" and p["requests"] == 4 for p in providers)
    failing = next(p for p in providers if p["model"] == "openai/fail429-2")
    assert (failing["completed"], failing["failed"]) == (0, 4)

    interactive = _submit(
        api,
        {"rubric": "epitome", "panel": "flaky", "items": [item(tag, n) for n in range(4)]},
    )
    assert interactive["mode"] == "interactive"
    assert interactive.get("economy") is None
    _wait(api, interactive["id"])
    got, want = _results(api, economy["id"]), _results(api, interactive["id"])
    assert set(got) == set(want) == {f"{tag}-{n}" for n in range(4)}
    for item_id, result in got.items():
        for model in ("openai/accurate@a", "openai/accurate@b", "openai/fail429-2"):
            assert _ratings(result, model) == _ratings(want[item_id], model)
        assert result["dimensions"].keys() == want[item_id]["dimensions"].keys()
        for dim, data in result["dimensions"].items():
            assert data["score"] == want[item_id]["dimensions"][dim]["score"]
            assert (
                data["reliability"]["level"]
                == want[item_id]["dimensions"][dim]["reliability"]["level"]
            )
    assert not api.unhandled()
