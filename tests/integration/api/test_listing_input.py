"""The listing, summary and cancel routes and the viewer's pages given bad input, on SQLite and
PostgreSQL (the composition root's app in process): a 4xx naming the field, never a 5xx; and
a real batch's summary and listing once it is scored."""

from __future__ import annotations

import pytest

from tests.e2e.test_service import NDJSON, assert_problem, item, jsonl, wait_batch
from tests.fixtures.in_process import InProcessApi

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

MISSING = "0" * 32


def test_listing_routes_name_the_bad_field(in_process_api: InProcessApi) -> None:
    client = in_process_api.client
    for path in ("/v1/batches", "/v1/calibrations", "/v1/probes"):
        for params, field in (
            ({"limit": 0}, "query.limit"),
            ({"limit": 101}, "query.limit"),
            ({"limit": "many"}, "query.limit"),
            ({"offset": -1}, "query.offset"),
            ({"status": "bogus"}, "query.status"),
            ({"rubric": ""}, "query.rubric"),
            ({"panel": "p" * 101}, "query.panel"),
            ({"rubric": "epi\x00tome"}, "query.rubric"),
            ({"panel": "a\nb"}, "query.panel"),
        ):
            assert_problem(client.get(path, params=params), 422, field)
    # a run's statuses are not a batch's, and the other way round
    assert_problem(client.get("/v1/probes", params={"status": "queued"}), 422, "query.status")
    assert_problem(client.get("/v1/batches", params={"status": "failed"}), 422, "query.status")
    for method, path in (("POST", "cancel"), ("GET", "summary")):
        bad = client.request(method, f"/v1/batches/not-an-id/{path}")
        assert 400 <= bad.status_code < 500, bad.text
        assert bad.json()["field"] == "path.batch_id"
        assert_problem(client.request(method, f"/v1/batches/{MISSING}/{path}"), 404)


def test_viewer_pages_name_the_bad_field(in_process_api: InProcessApi) -> None:
    client = in_process_api.client
    for path, field in (
        ("/ui/runs?status=bogus", "query.status"),
        ("/ui/batches/not-an-id", "path.batch_id"),
        (f"/ui/batches/{MISSING}?level=great", "query.level"),
        (f"/ui/batches/{MISSING}/items.csv?sort=size", "query.sort"),
        ("/ui/items/xyz", "path.job_id"),
        ("/ui/drift?rubric=no-such-rubric", "query.rubric"),
    ):
        page = client.get(path)
        assert 400 <= page.status_code < 500, (path, page.status_code, page.text[:300])
        assert page.headers["content-type"].startswith("text/html"), path
        assert field in page.text, (path, page.text[:500])
    for path in (f"/ui/batches/{MISSING}", f"/ui/items/{MISSING}", f"/ui/calibrations/{MISSING}"):
        page = client.get(path)
        assert page.status_code == 404, path
        assert "text/html" in page.headers["content-type"]


def test_a_scored_batch_is_listed_and_summarised(in_process_api: InProcessApi) -> None:
    client = in_process_api.client
    rows = [item("listed", n) for n in range(4)]
    body = jsonl(rows)[:-1] + b"\n{not json\n"
    submitted = client.post("/v1/batches?rubric=epitome", content=body, headers=NDJSON)
    assert submitted.status_code == 202, submitted.text
    batch_id = submitted.json()["id"]
    wait_batch(in_process_api, batch_id)  # type: ignore[arg-type]
    listed = client.get("/v1/batches", params={"status": "completed"}).json()
    mine = [b for b in listed["batches"] if b["id"] == batch_id]
    assert len(mine) == 1
    assert (mine[0]["completed"], mine[0]["rejected"], mine[0]["simulated"]) == (4, 1, True)
    summary = client.get(f"/v1/batches/{batch_id}/summary").json()
    assert summary["simulated"] is True
    assert set(summary["dimensions"]) == {"emotional_reactions", "interpretations", "explorations"}
    for dim in summary["dimensions"].values():
        assert dim["n"] == 4
        assert sum(dim["scores"].values()) == 4
        assert sum(dim["levels"].values()) == 4
        shares = dim["shares"]
        assert shares["trusted"] + shares["caution"] + shares["untrusted"] == pytest.approx(1)
        # no calibration: every flag says so, and the reason is among the top ones
        assert "uncalibrated" in [r["reason"] for r in dim["top_reasons"]]
