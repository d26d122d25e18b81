"""Bad requests get a 4xx problem naming the field, on SQLite and PostgreSQL, through the app
in-process (Litestar's test client; the simulator over HTTP stands in for the providers):
path ids on every route, compressed bodies, media types in any case, participant ids that
only look different, and item ids repeated within one submission."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from judge.api.app import create_app
from judge.persistence.database import Database
from judge.settings import Settings
from tests.fixtures.stacks import (
    BACKENDS,
    SimulatorProcess,
    create_pg_database,
    drop_pg_database,
    sqlite_url,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(240),
    # the app factory in-process: Litestar 2.25 warns about the routes' plain ``data`` kwargs
    pytest.mark.filterwarnings("ignore:.*Reserved kwarg 'data' declared without a body marker"),
]

PROBLEM = "application/problem+json"
NDJSON = {"Content-Type": "application/x-ndjson"}


@pytest.fixture(scope="module", params=BACKENDS)
def client(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
) -> Iterator[TestClient[Any]]:
    """The app on a fresh, migrated database of this module (embedded jobs, keys off)."""
    if request.param == "sqlite":
        url, name = sqlite_url(tmp_path_factory.mktemp("validation")), None
    else:
        request.getfixturevalue("postgres_available")
        name, url = create_pg_database()

    async def migrate() -> None:
        database = Database(url)
        await database.upgrade()
        await database.dispose()

    try:
        asyncio.run(migrate())
        settings = Settings(
            database_url=url,
            simulator={"url": service_simulator.base_url},
            api={"require_keys": False},  # the test client is not on loopback
        )
        with TestClient(create_app(settings)) as test_client:
            yield test_client
    finally:
        if name is not None:
            drop_pg_database(name)


def problem(response: Any, status: int, field: str | None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body.get("field") == field, body
    return body


def pair(n: int, **extra: Any) -> dict[str, Any]:
    return {"seeker_post": f"I cannot sleep ({n}).", "response": "That sounds hard."} | extra


# -- path ids ------------------------------------------------------------------------------
def templated_routes(client: TestClient[Any]) -> list[tuple[str, str, list[str]]]:
    """(method, path template, parameter names) of every route with a path parameter."""
    found = []
    for route in client.app.routes:
        names = re.findall(r"{(\w+)(?::\w+)?}", route.path_format)
        if names:
            for method in sorted(route.methods - {"OPTIONS", "HEAD"}):
                found.append((method, route.path_format, names))
    return found


@pytest.mark.parametrize("bad", ["%00", "a%0Ab", "x" * 300])
def test_every_path_id_is_validated(client: TestClient[Any], bad: str) -> None:
    """NUL, a line feed or an overlong id in any route's path: a 4xx (on the API's routes a
    problem naming the parameter), never a 500."""
    routes = templated_routes(client)
    assert len(routes) >= 8, routes  # scores, batches, calibrations, probes, reliability...
    for method, template, names in routes:
        path = template
        for name in names:
            path = re.sub(rf"{{{name}(?::\w+)?}}", bad, path)
        response = client.request(method, path)
        assert 400 <= response.status_code < 500, (method, path, response.text)
        if template.startswith("/v1/"):  # ours (the others: the API docs, Litestar's)
            named = response.json().get("field")
            assert named in {f"path.{n}" for n in names} | {"rubric_id"}, (template, named)


def test_a_pool_batch_that_is_not_an_id_is_422(client: TestClient[Any]) -> None:
    body = {"rubric": "epitome", "pool_batch": "b\x00ad", "budget": 5}
    problem(client.post("/v1/calibrations/plan", json=body), 422, "pool_batch")


# -- bodies --------------------------------------------------------------------------------
@pytest.mark.parametrize("coding", ["gzip", "br", "deflate, gzip", "GZIP"])
def test_a_compressed_body_is_415(client: TestClient[Any], coding: str) -> None:
    response = client.post(
        "/v1/batches",
        params={"rubric": "epitome"},
        content=b"\x1f\x8b\x08\x00compressed",
        headers=NDJSON | {"Content-Encoding": coding},
    )
    problem(response, 415, "header.Content-Encoding")
    assert response.headers["accept-encoding"] == "identity"


def test_identity_is_no_encoding(client: TestClient[Any]) -> None:
    lines = "".join(json.dumps(pair(n)) + "\n" for n in range(2)).encode()
    response = client.post(
        "/v1/batches",
        params={"rubric": "epitome"},
        content=lines,
        headers=NDJSON | {"Content-Encoding": "identity"},
    )
    assert response.status_code == 202, response.text


@pytest.mark.parametrize("media_type", ["Application/X-NDJSON", "APPLICATION/JSONL; charset=utf-8"])
def test_media_types_are_case_insensitive(client: TestClient[Any], media_type: str) -> None:
    lines = "".join(json.dumps(pair(n)) + "\n" for n in range(3)).encode()
    response = client.post(
        "/v1/batches",
        params={"rubric": "epitome"},
        content=lines,
        headers={"Content-Type": media_type},
    )
    assert response.status_code == 202, response.text
    assert (response.json()["total"], response.json()["rejected"]) == (3, 0)


# -- participants and item ids ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Jos\u00e9", "Jose\u0301"),  # NFC and NFD
        ("sam", "s\u0430m"),  # a Cyrillic a
        ("kai", "\uff4bai"),  # a full-width k
        ("Sam", "sam"),  # case
    ],
)
def test_participant_ids_are_unique_once_normalised(
    client: TestClient[Any], first: str, second: str
) -> None:
    item = {
        "participants": [
            {"id": first, "role": "seeker"},
            {"id": second, "role": "supporter"},
        ],
        "turns": [
            {"speaker": first, "text": "I lost my job."},
            {"speaker": second, "text": "I am sorry. How are you holding up?"},
        ],
    }
    response = client.post("/v1/scores", json={"rubric": "epitome", "item": item})
    body = problem(response, 422, "item.participants[1].id")
    assert "unique" in body["detail"]


def test_repeated_item_ids_in_a_batch_are_rejected_and_the_rest_scored(
    client: TestClient[Any],
) -> None:
    items = [pair(1, id="a"), pair(2, id="b"), pair(3, id="a"), pair(4), pair(5)]
    response = client.post("/v1/batches", json={"rubric": "epitome", "items": items})
    assert response.status_code == 202, response.text
    batch = response.json()
    assert (batch["total"], batch["rejected"]) == (4, 1)
    [rejection] = batch["rejections"]
    assert (rejection["line"], rejection["field"]) == (3, "item.id")
    assert "duplicate of line 1" in rejection["message"]


def test_repeated_item_ids_in_a_calibration_are_refused(client: TestClient[Any]) -> None:
    def entry(n: int) -> dict[str, Any]:
        return {"id": "same", "item": pair(n), "labels": {"e1": {"emotional_reactions": 1}}}

    response = client.post(
        "/v1/calibrations", json={"rubric": "epitome", "items": [entry(1), entry(2)]}
    )
    body = problem(response, 422, "items[1].id")
    assert "duplicate of items[0].id" in body["detail"]
