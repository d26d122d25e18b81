"""Sessions end to end: RESCUE-BENCH subset sessions submitted with the client to ``judge serve``
and judged by a Celery worker (simulated judges over real HTTP), read back as a trajectory
with the supporter's measures; ``judge score --session`` prints the same session's timeline
within 80 columns."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from empathy_judge_client.timeline import WIDTH, timeline
from judge.client import AsyncJudgeClient, InvalidInput, JudgeClient, NotFound
from judge.labels.rescue import read_sessions, rescue_session
from tests.fixtures.axe import axe_source, axe_violations, blocking
from tests.fixtures.browser import visit
from tests.fixtures.stacks import ServiceStack

pytestmark = [pytest.mark.integration, pytest.mark.data, pytest.mark.timeout(300)]

RESCUE = Path("rescue-bench") / "benchmark_subset.jsonl"
SHORT = "erica_and_sean/009_s03e18_ct25_segment10"


@pytest.fixture(scope="module")
def sessions(shared_data: Path) -> dict[str, dict[str, Any]]:
    return {s["sample_id"]: s for s in read_sessions(shared_data / RESCUE)}


@pytest.fixture
def client(sqlite_stack: ServiceStack) -> Iterator[JudgeClient]:
    with JudgeClient(sqlite_stack.base_url, poll_interval=0.1) as judge:
        yield judge


def test_sessions_are_judged_by_a_celery_worker(
    client: JudgeClient, sessions: dict[str, dict[str, Any]]
) -> None:
    submitted = {
        sid: client.submit_session(rescue_session(sessions[sid]), "rescue-couple")
        for sid in (SHORT, "alan_and_evelyn/001_s01e01_ct25_segment04")
    }
    for sid, first in submitted.items():
        view = client.wait_session(first.id, timeout=240)
        rows = sessions[sid]["rows"]
        clients = [i for i, r in enumerate(rows) if r["primary_speaker"] != "Therapist"]
        assert [c.index for c in view.checkpoints] == clients
        assert view.completed == view.total
        assert view.failed == 0
        assert view.simulated
        assert all(c.status == "completed" for c in view.checkpoints)
        # every judged relation pattern is in the trajectory, transitions between them
        patterns = [p.pattern for p in view.trajectory.relation]
        assert len(patterns) == len(clients)
        labelled = [p for p in patterns if p is not None]
        changes = sum(1 for a, b in itertools.pairwise(labelled) if a != b)
        assert len(view.trajectory.transitions) == changes
        assert view.measures is not None
        assert view.measures.most_distressed in {"Sean", "Erica", "Alan", "Evelyn"}
        lines = timeline(view)
        assert lines[0].startswith("SIMULATED JUDGES")
        assert all(len(line) <= WIDTH for line in lines)


def test_the_async_client_and_bad_sessions(
    sqlite_stack: ServiceStack, sessions: dict[str, dict[str, Any]]
) -> None:
    async def run() -> None:
        async with AsyncJudgeClient(sqlite_stack.base_url, poll_interval=0.1) as judge:
            view = await judge.submit_session(rescue_session(sessions[SHORT]), "rescue-couple")
            done = await judge.wait_session(view.id, timeout=240)
            assert done.status == "completed"
            newest = await judge.list_sessions(limit=1, status="completed")
            assert [s.id for s in newest.sessions] == [view.id]
            with pytest.raises(InvalidInput) as bad:
                await judge.submit_session({"participants": [], "turns": []}, "rescue-couple")
            assert (bad.value.field or "").startswith("session.")
            with pytest.raises(NotFound):
                await judge.session("0" * 32)

    asyncio.run(run())


def test_judge_score_session_prints_the_timeline(
    sqlite_stack: ServiceStack, sessions: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    source = tmp_path / "session.json"
    source.write_text(json.dumps(sessions[SHORT]), encoding="utf-8")
    done = sqlite_stack.judge(
        "score", "--rubric", "rescue-couple", "--session", str(source), timeout=240
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("SIMULATED JUDGES")
    assert any(line.strip().startswith("barrel") for line in lines)
    assert all(len(line) <= WIDTH for line in lines), done.stdout


def test_the_viewer_shows_the_session_timeline_in_chromium(
    client: JudgeClient, sqlite_stack: ServiceStack, sessions: dict[str, dict[str, Any]]
) -> None:
    view = client.submit_session(rescue_session(sessions[SHORT]), "rescue-couple")
    done = client.wait_session(view.id, timeout=240)
    listed = client.list_sessions(rubric="rescue-couple", limit=100).sessions
    assert view.id in {s.id for s in listed}
    assert next(s for s in listed if s.id == view.id).batch_id == done.batch_id

    async def steps(page: Page) -> dict[str, Any]:
        # from the runs list, as a user finds it: the Sessions section links to it
        listed = await page.locator("#sessions a").count()
        async with page.expect_navigation(wait_until="networkidle"):
            await page.click(f'#sessions a[href="/ui/sessions/{view.id}"]')
        return {
            "listed": listed,
            "url": page.url,
            "rows": await page.locator("tr.checkpoint").count(),
            "measures": await page.locator("#measures tbody tr").count(),
            "text": await page.inner_text("main"),
            "timeline": await page.inner_text("#timeline-text"),
            "violations": blocking(await axe_violations(page)),
        }

    seen = visit(
        f"{sqlite_stack.base_url}/ui/runs",
        "viewer-session",
        steps,
        init_script=axe_source(),
    )
    assert seen.problems() == []
    got = seen.result
    assert got["listed"] >= 1
    assert got["url"] == f"{sqlite_stack.base_url}/ui/sessions/{view.id}"
    assert got["rows"] == len(done.checkpoints)
    assert done.measures is not None
    kinds = (done.measures.barrel, done.measures.ripple, done.measures.timing)
    assert got["measures"] == sum(len(m) for m in kinds)
    assert "SIMULATED" in got["text"]
    for t in done.trajectory.transitions:
        assert f"{t.source} → {t.target}" in got["text"]
    assert all(len(line) <= WIDTH for line in got["timeline"].splitlines())
    assert got["violations"] == []
