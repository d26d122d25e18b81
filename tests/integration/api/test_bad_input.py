"""Bad input to the API, on the composition root's app in process (SQLite and PostgreSQL):
RFC 9457 problems naming the field, never a 5xx, and a batch's bad lines rejected alone while
the rest is scored. Moved from ``tests/e2e/test_service.py`` and ``test_probes.py``; no
process stack is needed."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.e2e.test_probes import DYADIC
from tests.e2e.test_service import (
    NDJSON,
    assert_each_item_once,
    assert_problem,
    item,
    jsonl,
    wait_batch,
)
from tests.fixtures.in_process import InProcessApi

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


# -- 6. bad inputs ---------------------------------------------------------------------------------
def test_bad_inputs_get_problem_details_and_the_rest_is_scored(
    in_process_api: InProcessApi,
) -> None:
    stack = in_process_api
    client = stack.client
    good = {"rubric": "epitome", "item": item("bad", 0)}
    responses: list[httpx.Response] = []

    def post(path: str, **kwargs: Any) -> httpx.Response:
        response = client.post(path, **kwargs)
        responses.append(response)
        return response

    # wrong types name the field
    assert_problem(post("/v1/scores", json={"rubric": "epitome", "item": 5}), 422, "item")
    turns = {
        "participants": [{"id": "a", "role": "seeker"}, {"id": "b", "role": "supporter"}],
        "turns": [{"speaker": "a", "text": 3}, {"speaker": "b", "text": "hello"}],
    }
    assert_problem(
        post("/v1/scores", json={"rubric": "epitome", "item": turns}), 422, "item.turns[0].text"
    )
    # malformed JSON, and JSON that is not an object
    for raw in (b'{"rubric": "epitome", "item": {', b"[1, 2]", b"", b"\xff\xfe"):
        response = post("/v1/scores", content=raw, headers={"Content-Type": "application/json"})
        assert_problem(response, 422, "body")
    assert_problem(
        post(
            "/v1/batches",
            content=b'{"rubric": "epitome", "items": [',
            headers={"Content-Type": "application/json"},
        ),
        422,
        "body",
    )
    assert_problem(post("/v1/batches", json={"rubric": "epitome", "items": 5}), 422, "items")
    # a huge body
    huge = {"rubric": "epitome", "item": {"seeker_post": "x" * 1_200_000, "response": "ok"}}
    assert_problem(post("/v1/scores", json=huge), 413)
    assert_problem(
        post("/v1/batches", params={"rubric": "epitome"}, content=jsonl([huge]), headers=NDJSON),
        413,
    )
    # unknown rubric
    assert_problem(post("/v1/scores", json=good | {"rubric": "no-such-rubric"}), 404, "rubric")
    assert_problem(
        post(
            "/v1/batches",
            params={"rubric": "no-such"},
            content=jsonl([good["item"]]),
            headers=NDJSON,
        ),
        404,
        "rubric",
    )
    assert_problem(client.get("/v1/rubrics/no-such-rubric"), 404)
    assert_problem(client.get("/v1/scores/0123456789abcdef0123456789abcdef"), 404, "id")
    assert_problem(client.get("/v1/batches/0123456789abcdef0123456789abcdef"), 404, "id")
    # an item that does not fit the rubric's unit: a dyadic item for a family rubric
    assert_problem(
        post("/v1/scores", json=good | {"rubric": "rescue-family"}), 422, "item.participants"
    )
    assert_problem(post("/v1/scores", json=good | {"panel": "no-such-panel"}), 422, "panel")
    assert_problem(post("/v1/scores", params={"wait": "soon"}, json=good), 422, "query.wait")

    # a batch with bad lines: accepted; the bad lines are rejected by line, the rest scored
    lines = [json.dumps(item("badbatch", i), ensure_ascii=False) for i in range(10)]
    lines[3] = lines[3][:25]  # truncated JSON
    lines[5] = json.dumps({"seeker_post": 5, "response": "wrong type"})
    lines[7] = json.dumps({"participants": [{"id": "a", "role": "seeker"}], "turns": []})
    response = post(
        "/v1/batches",
        params={"rubric": "epitome"},
        content="\n".join(lines).encode(),
        headers=NDJSON,
    )
    assert response.status_code == 202, response.text
    batch = response.json()
    assert (batch["total"], batch["rejected"]) == (7, 3)
    rejections = {r["line"]: r for r in batch["rejections"]}
    assert set(rejections) == {4, 6, 8}
    assert rejections[4]["field"] == "line"
    assert "JSON" in rejections[4]["message"]
    assert rejections[6]["field"] == "item.seeker_post"
    assert rejections[8]["field"].startswith("item.participants")
    status = wait_batch(stack, batch["id"])
    assert (status["completed"], status["failed"], status["rejected"]) == (7, 0, 3)
    assert_each_item_once(stack, batch["id"], 10, missing=frozenset({4, 6, 8}))

    assert all(r.status_code < 500 for r in responses)
    assert stack.unhandled() == []


# -- calibration planning and the aggregation comparison: bad input --------------------------
def test_plan_and_aggregation_requests_with_bad_input_name_the_field(
    in_process_api: InProcessApi,
) -> None:
    stack = in_process_api
    post = stack.client.post
    cases = [
        ({"rubric": "epitome", "dimensions": ["empathy"]}, 422, "dimensions[0]"),
        ({"rubric": "epitome", "budget": 5}, 422, "pool"),
        ({"rubric": "epitome", "pool": [{"id": "x", "dimensions": {}}]}, 422, "budget"),
        ({"rubric": "epitome", "pool": ["not a result"], "budget": 1}, 422, "pool[0]"),
        ({"rubric": "epitome", "pool_batch": "no-such-batch", "budget": 1}, 422, "pool_batch"),
        ({"rubric": "epitome", "target_ci_lower": 1.5}, 422, "target_ci_lower"),
        ({"rubric": "epitome", "assurance": 0.3}, 422, "assurance"),
        ({"rubric": "epitome", "assurance": 1.0}, 422, "assurance"),
        ({"rubric": "epitome", "assurance": "high"}, 422, "assurance"),
        ({"rubric": "epitome", "budget": 0, "pool": []}, 422, "budget"),
        ({"rubric": "epitome", "panel": "nope"}, 422, "panel"),
        ({"rubric": "no-such-rubric"}, 404, "rubric"),
        ({"rubric": "epitome", "surprise": 1}, 422, "surprise"),
    ]
    for body, status, field in cases:
        response = post("/v1/calibrations/plan", json=body, headers=stack.headers())
        assert response.status_code == status, (body, response.text)
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["field"] == field, (body, response.json())
    # a good plan on a fresh database: every dimension uncalibrated, min_items to label
    plan = post("/v1/calibrations/plan", json={"rubric": "epitome"}, headers=stack.headers())
    assert plan.status_code == 200, plan.text
    assert {d["status"] for d in plan.json()["dimensions"].values()} == {"uncalibrated"}
    unknown = "/v1/calibrations/0123456789abcdef0123456789abcdef/aggregation"
    missing = stack.client.get(unknown)
    assert (missing.status_code, missing.json()["field"]) == (404, "id")
    malformed = stack.client.get("/v1/calibrations/no-such-run/aggregation")
    assert (malformed.status_code, malformed.json()["field"]) == (422, "path.run_id")
    folds = stack.client.get(unknown, params={"folds": 1})
    assert folds.status_code == 422
    assert folds.json()["field"] == "query.folds"


# -- a copied expert column (issue 23) ---------------------------------------------------------
def test_a_copied_expert_column_is_refused_naming_the_copy(in_process_api: InProcessApi) -> None:
    """Two names for one annotator's labels on 20+ items is a 422 naming the copy's field
    (and nothing is stored); a distinct second expert on the same items is accepted."""
    stack = in_process_api
    e1 = [n % 3 for n in range(24)]
    near = [(v + 1) % 3 if n % 6 == 0 else v for n, v in enumerate(e1)]

    def body(second: list[int]) -> dict[str, Any]:
        return {
            "rubric": "epitome",
            "items": [
                {
                    "item": item("copied", n),
                    "labels": {
                        "e1": {"emotional_reactions": e1[n]},
                        "e1-copy": {"emotional_reactions": second[n]},
                    },
                }
                for n in range(24)
            ],
        }

    path = "/v1/calibrations"

    def stored() -> int:
        listed = stack.client.get(path, headers=stack.headers())
        assert listed.status_code == 200, listed.text
        return len(listed.json()["calibrations"])

    before = stored()
    response = stack.client.post(path, json=body(list(e1)), headers=stack.headers())
    assert_problem(response, 422, "items[0].labels.e1-copy.emotional_reactions")
    assert "repeats expert 'e1'" in response.json()["detail"]
    assert "identical columns on all 24 items both rated" in response.json()["detail"]
    assert stored() == before
    accepted = stack.client.post(path, json=body(near), headers=stack.headers())
    assert accepted.status_code in (200, 202), accepted.text
    assert stack.unhandled() == []


# -- probes --------------------------------------------------------------------------------
BAD_PROBES = [
    ({"rubric": "epitome", "kind": "loudness", "items": DYADIC}, "kind"),
    ({"rubric": "epitome", "kind": "verbosity", "items": []}, "items"),
    ({"rubric": "epitome", "kind": "verbosity", "items": [{"response": 3}]}, "items[0]"),
    ({"rubric": "epitome", "kind": "order", "items": DYADIC}, "kind"),
    ({"rubric": "epitome", "kind": "verbosity", "items": DYADIC, "filler_words": 0}, "filler"),
    ({"rubric": "no-such-rubric", "kind": "verbosity", "items": DYADIC}, "rubric"),
]


@pytest.mark.parametrize(("body", "field"), BAD_PROBES)
def test_bad_probe_requests_are_4xx_naming_the_field(
    in_process_api: InProcessApi, body: dict[str, Any], field: str
) -> None:
    response = in_process_api.client.post("/v1/probes", json=body)
    assert 400 <= response.status_code < 500, response.text
    problem = response.json()
    assert field in (problem.get("field") or "") + json.dumps(problem.get("extra") or ""), problem


def test_an_unknown_probe_is_404(in_process_api: InProcessApi) -> None:
    response = in_process_api.client.get(
        "/v1/probes/0123456789abcdef0123456789abcdef", headers=in_process_api.headers()
    )
    assert response.status_code == 404
    assert response.json()["field"] == "id"
