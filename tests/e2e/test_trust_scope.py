"""Trust belongs to its tenant: one API key's calibration runs never decide another key's
reliability flags, plans or history, until an admin shares a run (recorded, reversible).
Real processes: ``judge serve`` and a Celery worker on PostgreSQL and Redis, the simulator as
the only stand-in."""

from __future__ import annotations

import random
import time
from typing import Any

import httpx
import pytest

from tests.fixtures.stacks import ServiceStack, query

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

PROBLEM = "application/problem+json"
DIMS = ("emotional_reactions", "interpretations", "explorations")
POSTS = (
    "I lost my job today and I don't know how to tell my family.",
    "My best friend moved away and the evenings feel empty.",
    "I keep failing the driving test and I'm starting to feel stupid.",
    "My dad is in hospital and nobody tells me anything.",
    "I moved to a new city and I haven't talked to anyone in a week.",
    "My exam results came back and they are worse than I hoped.",
)
REPLIES = (
    "That sounds really frightening. What do you think worries you most?",
    "Just get over it.",
    "I understand how lonely that must feel; missing someone close is hard.",
    "Have you tried going to the gym?",
)


def item(tag: str, n: int) -> dict[str, Any]:
    return {
        "id": f"{tag}-{n}",
        "seeker_post": f"{POSTS[n % len(POSTS)]} ({tag} {n})",
        "response": REPLIES[n % len(REPLIES)],
    }


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def score(client: httpx.Client, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    got = client.post("/v1/scores", params={"wait": 60}, json=body, headers=headers)
    assert got.status_code == 200, got.text
    result: dict[str, Any] = got.json()
    assert result["status"] == "completed", result
    return result


def flags(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {dim: result["dimensions"][dim]["reliability"] for dim in DIMS}


def calibrate(
    client: httpx.Client, headers: dict[str, str], items: list[dict[str, Any]]
) -> dict[str, Any]:
    run = client.post(
        "/v1/calibrations", params={"wait": 120}, headers=headers,
        json={"rubric": "epitome", "items": items},
    )  # fmt: skip
    assert run.status_code == 200, run.text
    view: dict[str, Any] = run.json()
    assert view["status"] == "completed", view
    return view


def flags_until(
    client: httpx.Client, headers: dict[str, str], body: dict[str, Any], source: str
) -> dict[str, dict[str, Any]]:
    """The flags once every dimension's source is ``source`` (a worker remembers which runs
    apply for a few seconds)."""
    deadline = time.monotonic() + 60
    while True:
        found = flags(score(client, headers, body))
        if all(flag["source"] == source for flag in found.values()):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.5)


def test_one_keys_calibration_never_moves_another_keys_flags_unless_an_admin_shares_it(
    postgresql_stack: ServiceStack,
) -> None:
    stack, client = postgresql_stack, postgresql_stack.client
    victim = bearer(stack.create_key("victim", "score", "calibrate"))
    attacker = bearer(stack.create_key("attacker", "score", "calibrate"))
    admin = bearer(stack.create_key("root", "admin"))
    probe = {"rubric": "epitome", "item": item("victim", 0)}
    before = flags(score(client, victim, probe))
    assert {flag["source"] for flag in before.values()} == {"rubric-prior"}

    # random labels, then labels copying the panel's own output (the attacker scores the
    # items first and hands the aggregate back as the "experts'" labels)
    rng = random.Random(7)
    noise = [
        {"id": f"noise-{n}", "item": item("noise", n),
         "labels": {"x": {dim: rng.randint(0, 2) for dim in DIMS}}}
        for n in range(8)
    ]  # fmt: skip
    noise_run = calibrate(client, attacker, noise)["id"]
    copied = []
    for n in range(12):
        scored = score(client, attacker, {"rubric": "epitome", "item": item("copy", n)})
        labels = {dim: scored["dimensions"][dim]["score"] for dim in DIMS}
        copied.append({"id": f"copy-{n}", "item": item("copy", n), "labels": {"x": labels}})
    copy_run = calibrate(client, attacker, copied)["id"]

    # the attacker's own flags now rest on its latest run; the victim's are untouched
    own = flags_until(client, attacker, probe, f"calibration:{copy_run}")
    assert own != before
    assert flags(score(client, victim, probe)) == before
    for run_id in (noise_run, copy_run):
        got = client.get(f"/v1/calibrations/{run_id}", headers=victim)
        assert got.status_code == 404, got.text
    history = client.get("/v1/reliability/epitome", headers=victim).json()
    assert history["calibrations"] == []
    plan = client.post("/v1/calibrations/plan", json={"rubric": "epitome"}, headers=victim)
    assert plan.status_code == 200, plan.text
    assert noise_run not in plan.text
    assert copy_run not in plan.text

    # only an admin may share; then the run decides every key's flags, and every key reads it
    refused = client.put(f"/v1/calibrations/{copy_run}/shared", headers=attacker)
    assert refused.status_code == 403, refused.text
    shared = client.put(f"/v1/calibrations/{copy_run}/shared", headers=admin)
    assert shared.status_code == 200, shared.text
    assert shared.json()["shared"] is True
    moved = flags_until(client, victim, probe, f"calibration:{copy_run}")
    assert moved == own
    seen = client.get(f"/v1/calibrations/{copy_run}", headers=victim)
    assert seen.status_code == 200, seen.text
    assert (seen.json()["shared"], seen.json()["owned"]) == (True, False)
    assert client.get(f"/v1/calibrations/{copy_run}/report", headers=victim).status_code == 200
    listed = client.get("/v1/reliability/epitome", headers=victim).json()["calibrations"]
    assert [(r["id"], r["shared"]) for r in listed] == [(copy_run, True)]
    assert client.get(f"/v1/calibrations/{noise_run}", headers=victim).status_code == 404

    # withdrawn: the victim's flags are its own again, and the run is the attacker's alone
    withdrawn = client.delete(f"/v1/calibrations/{copy_run}/shared", headers=admin)
    assert withdrawn.status_code == 200, withdrawn.text
    assert withdrawn.json()["shared"] is False
    assert flags_until(client, victim, probe, "rubric-prior") == before
    assert client.get(f"/v1/calibrations/{copy_run}", headers=victim).status_code == 404
    assert client.get(f"/v1/calibrations/{copy_run}", headers=attacker).status_code == 200

    # both decisions are recorded, with the admin's key
    decisions = query(
        stack.database_url,
        f"SELECT shared, by_key_id FROM calibration_shares WHERE run_id = '{copy_run}' ORDER BY id",
    )
    admin_id = query(stack.database_url, "SELECT id FROM api_keys WHERE name = 'root'")[0][0]
    assert [tuple(row) for row in decisions] == [(True, admin_id), (False, admin_id)]

    # the operator shares from the command line (recorded without a key)
    shared_here = stack.invoke("calibrate", "share", noise_run)
    assert shared_here.returncode == 0, shared_here.stderr
    assert client.get(f"/v1/calibrations/{noise_run}", headers=victim).status_code == 200
    recorded = query(
        stack.database_url,
        f"SELECT shared, by_key_id FROM calibration_shares WHERE run_id = '{noise_run}'",
    )
    assert [tuple(row) for row in recorded] == [(True, None)]


@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_sharing_refuses_bad_and_unknown_run_ids(service_stack: ServiceStack, method: str) -> None:
    stack, client = service_stack, service_stack.client
    admin = bearer(stack.keys.get("share-admin") or stack.create_key("share-admin", "admin"))
    for run_id, status in (("0" * 32, 404), ("not-an-id", 422), ("a%00b", 422)):
        got = client.request(method, f"/v1/calibrations/{run_id}/shared", headers=admin)
        assert got.status_code == status, got.text
        assert got.headers["content-type"].startswith(PROBLEM)
        assert got.json()["field"] == ("id" if status == 404 else "path.run_id")
    if method == "PUT":  # and from the command line
        missing = stack.invoke("calibrate", "share", "0" * 32)
        assert missing.returncode == 2, missing.stdout
        assert "0" * 32 in missing.stderr
