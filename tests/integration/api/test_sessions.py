"""Sessions through the API in process (SQLite and PostgreSQL): a RESCUE-BENCH couple session
scored checkpoint by checkpoint with the simulated panel on the embedded runner, its windows,
trajectory and measures; bad sessions are 4xx naming the field, never a 5xx."""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import pytest

from judge.labels.rescue import read_sessions, rescue_session
from tests.fixtures.in_process import InProcessApi
from tests.integration.services.test_sessions import SESSION

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

RESCUE = Path("rescue-bench") / "benchmark_subset.jsonl"


def wait_session(api: InProcessApi, session_id: str, timeout: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        got = api.client.get(f"/v1/sessions/{session_id}")
        assert got.status_code == 200, got.text
        view: dict[str, Any] = got.json()
        if view["status"] == "completed":
            return view
        assert time.monotonic() < deadline, f"session not done: {view['status']}"
        time.sleep(0.2)


def test_a_rescue_session_is_judged_checkpoint_by_checkpoint(
    in_process_api: InProcessApi, shared_data: Path
) -> None:
    raw = next(
        s
        for s in read_sessions(shared_data / RESCUE)
        if s["sample_id"] == "alan_and_evelyn/001_s01e01_ct25_segment04"
    )
    session = rescue_session(raw)
    sent = in_process_api.client.post(
        "/v1/sessions", json={"rubric": "rescue-couple", "session": session}
    )
    assert sent.status_code == 202, sent.text
    assert sent.headers["location"] == f"/v1/sessions/{sent.json()['id']}"
    view = wait_session(in_process_api, sent.json()["id"])
    clients = [i for i, t in enumerate(session["turns"]) if t["speaker"] != "therapist"]
    assert [c["index"] for c in view["checkpoints"]] == clients
    assert view["simulated"] is True
    assert view["failed"] == 0
    for c in view["checkpoints"]:
        assert c["status"] == "completed"
        recent = c["windows"]["recent"]
        assert (recent["start"], recent["end"]) == (max(0, c["index"] - 3), c["index"] + 1)
        # the relation pattern sees the whole prefix (one job when both windows coincide)
        if c["index"] > 3:
            assert c["windows"]["prefix"]["start"] == 0
        else:
            assert "prefix" not in c["windows"]
        assert {"focus_intensity", "relation_pattern", "intervene_now"} <= set(c["dimensions"])
        nxt = session["turns"][c["index"] + 1]["speaker"] if c["index"] + 1 < 16 else None
        assert c["supporter_next"] == (None if nxt is None else nxt == "therapist")
    trajectory = view["trajectory"]
    assert set(trajectory["members"]) == {"Alan", "Evelyn"}
    assert len(trajectory["relation"]) == len(clients)
    assert view["measures"]["supporter"] == "therapist"
    assert set(view["measures"]["timing"]) == {
        "timing_agreement",
        "missed_openings",
        "premature_turns",
    }
    # the therapist's rows name their targets: nothing is inferred
    assert not any(t["to_inferred"] for t in view["turns"])


def _session() -> dict[str, Any]:
    return copy.deepcopy(SESSION)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda s: s.update(supporter="nobody"), "session.supporter"),
        (lambda s: s.update(checkpoints=[2]), "session.checkpoints[0]"),
        (lambda s: s.update(checkpoints=[9]), "session.checkpoints[0]"),
        (lambda s: s.update(checkpoints="all"), "session.checkpoints"),
        (lambda s: s["turns"][2].update(to=["carol"]), "session.turns[2].to[0]"),
        (lambda s: s["turns"][2].update(to="ann"), "session.turns[2].to"),
        (lambda s: s["turns"][0].update(text=5), "session.turns[0].text"),
        (lambda s: s["turns"][1].update(speaker="carol"), "session.turns[1].speaker"),
        (lambda s: s["participants"][2].update(role="client"), "session.supporter"),
    ],
)
def test_bad_sessions_are_4xx_naming_the_field(
    in_process_api: InProcessApi, change: Any, field: str
) -> None:
    session = _session()
    change(session)
    since = len(in_process_api.log)
    got = in_process_api.client.post(
        "/v1/sessions", json={"rubric": "rescue-couple", "session": session}
    )
    assert 400 <= got.status_code < 500, got.text
    assert got.json()["field"] == field, got.json()
    assert in_process_api.unhandled(since) == []


def test_a_bad_request_around_the_session(in_process_api: InProcessApi) -> None:
    client = in_process_api.client
    got = client.post("/v1/sessions", json={"rubric": "rescue-couple", "session": 3})
    assert got.status_code == 400 or got.status_code == 422
    assert got.json()["field"].startswith("session")
    got = client.post("/v1/sessions", json={"rubric": "nope", "session": _session()})
    assert got.status_code == 404
    got = client.get(f"/v1/sessions/{'0' * 32}")
    assert got.status_code == 404
