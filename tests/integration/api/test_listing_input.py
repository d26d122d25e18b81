"""The listing, summary and cancel routes and the viewer's pages given bad input, on SQLite and
PostgreSQL (the composition root's app in process): a 4xx naming the field, never a 5xx; and
a real batch's summary and listing once it is scored."""

from __future__ import annotations

import json
from statistics import mean, median

import pytest

from tests.e2e.test_service import NDJSON, assert_problem, item, jsonl, results, wait_batch
from tests.fixtures.in_process import InProcessApi
from tests.integration.services.test_sessions import SESSION

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

MISSING = "0" * 32


def test_listing_routes_name_the_bad_field(in_process_api: InProcessApi) -> None:
    client = in_process_api.client
    for path in ("/v1/batches", "/v1/sessions", "/v1/calibrations", "/v1/probes"):
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
    assert_problem(client.get("/v1/sessions", params={"status": "failed"}), 422, "query.status")
    for method, path in (("POST", "cancel"), ("GET", "summary")):
        bad = client.request(method, f"/v1/batches/not-an-id/{path}")
        assert 400 <= bad.status_code < 500, bad.text
        assert bad.json()["field"] == "path.batch_id"
        assert_problem(client.request(method, f"/v1/batches/{MISSING}/{path}"), 404)


def test_viewer_pages_name_the_bad_field(in_process_api: InProcessApi) -> None:
    client = in_process_api.client
    for path, field in (
        ("/ui/runs?status=bogus", "query.status"),
        ("/ui/runs?sessions_offset=-1", "query.sessions_offset"),
        ("/ui/runs?batches_offset=x", "query.batches_offset"),
        ("/ui/runs?limit=0", "query.limit"),
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
    # the centre, against the scores computed here from the batch's results
    lines = results(in_process_api, batch_id)  # type: ignore[arg-type]
    scored = [r["dimensions"] for r in lines if "dimensions" in r]  # not the rejected line
    assert len(scored) == 4
    for dim_id, dim in summary["dimensions"].items():
        scores = [d[dim_id]["score"] for d in scored if d[dim_id]["score"] is not None]
        assert (dim["scale"], dim["scored"], dim["modal"]) == ("ordinal", len(scores), [])
        assert dim["mean"] == pytest.approx(mean(scores), abs=1e-4)
        assert dim["median"] == median(scores)


def test_sessions_are_listed_and_the_runs_page_pages_each_kind(
    in_process_api: InProcessApi,
) -> None:
    client = in_process_api.client
    batches = []
    for n in range(2):
        sent = client.post("/v1/batches", json={"rubric": "epitome", "items": [item("paged", n)]})
        assert sent.status_code == 202, sent.text
        batches.append(sent.json()["id"])
    sent = client.post("/v1/sessions", json={"rubric": "rescue-couple", "session": SESSION})
    assert sent.status_code == 202, sent.text
    session_id = sent.json()["id"]
    listed = client.get("/v1/sessions", params={"rubric": "rescue-couple"}).json()
    assert [s["id"] for s in listed["sessions"]][:1] == [session_id]
    assert listed["sessions"][0]["supporter"] == "t"
    assert session_id not in {b["id"] for b in client.get("/v1/batches").json()["batches"]}
    # the runs page: the newest of each kind, a link to the older ones, which keeps the filter
    page = client.get("/ui/runs", params={"limit": 1, "rubric": "epitome"})
    assert page.status_code == 200, page.text
    assert f"/ui/batches/{batches[1]}" in page.text
    assert f"/ui/batches/{batches[0]}" not in page.text
    older = client.get("/ui/runs?rubric=epitome&limit=1&batches_offset=1")
    assert f"/ui/batches/{batches[0]}" in older.text
    assert f"/ui/batches/{batches[1]}" not in older.text
    assert 'href="/ui/runs?rubric=epitome&amp;limit=1&amp;batches_offset=1"' in page.text
    assert 'href="/ui/runs?rubric=epitome&amp;limit=1"' in older.text  # back to the newest
    sessions = client.get("/ui/runs", params={"rubric": "rescue-couple"})
    assert f'href="/ui/sessions/{session_id}"' in sessions.text
    # a checkpoint's item page links to its session; a plain batch's item to none
    checkpoint = client.get(f"/v1/batches/{sent.json()['batch_id']}/results").text.split("\n")[0]
    item_page = client.get(f"/ui/items/{json.loads(checkpoint)['id']}")
    assert f'href="/ui/sessions/{session_id}"' in item_page.text
    plain = client.get(f"/v1/batches/{batches[0]}/results").text.split("\n")[0]
    assert "/ui/sessions/" not in client.get(f"/ui/items/{json.loads(plain)['id']}").text
