"""Listing a caller's runs (newest first, a page at a time, filtered; sessions too), a batch's
summary and cancelling a batch, through the use cases on SQLite and PostgreSQL; no job runs,
so every submitted item stays queued until cancelled."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from judge.domain.listing import ListFilter
from judge.domain.principal import Principal
from judge.errors import BatchNotFound
from judge.persistence import runs
from judge.persistence.tables import CalibrationRun
from judge.runtime.composition import ServiceRuntime
from tests.integration.services.test_ownership import (
    ADMIN,
    ALICE,
    BOB,
    DIMS,
    Admit,
    _intake,
    _runtime,
    item,
)
from tests.integration.services.test_sessions import SESSION

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


async def _sessions(runtime: ServiceRuntime, intake: Any, plain_job: str) -> None:
    """Sessions: their owner's (admin: all), newest first, paged and filtered like batches,
    never among the batches; a checkpoint's job knows its session."""

    async def submit() -> str:
        view = await runtime.sessions.submit(
            ALICE, intake, SESSION, rubric_id="rescue-couple", panel_name=None
        )
        return view.id

    one, two = await submit(), await submit()
    listed = runtime.sessions.listed
    mine = await listed(ALICE, ListFilter())
    assert ([s.id for s in mine.sessions], mine.next_offset) == ([two, one], None)
    newest = mine.sessions[0]
    assert (newest.status, newest.supporter, newest.queued) == ("queued", "t", newest.total)
    assert newest.total >= 2  # a job per client checkpoint at least
    assert newest.simulated
    assert (newest.rubric.id, newest.completed, newest.failed) == ("rescue-couple", 0, 0)
    page = await listed(ALICE, ListFilter(limit=1))
    assert ([s.id for s in page.sessions], page.next_offset) == ([two], 1)
    page = await listed(ALICE, ListFilter(offset=1, limit=1))
    assert ([s.id for s in page.sessions], page.next_offset) == ([one], None)
    assert (await listed(BOB, ListFilter())).sessions == []
    assert {s.id for s in (await listed(ADMIN, ListFilter())).sessions} == {one, two}
    assert (await listed(ALICE, ListFilter(rubric="epitome"))).sessions == []
    assert (await listed(ALICE, ListFilter(status="completed"))).sessions == []
    batches = (await runtime.batches.listed(ADMIN, ListFilter())).batches
    assert newest.batch_id not in {b.id for b in batches}
    rows = await runtime.batches.rows(ALICE, newest.batch_id, 10)
    stored = await runtime.scores.stored(ALICE, rows[0].job_id)
    assert stored.session_id == two
    assert (await runtime.scores.stored(ALICE, plain_job)).session_id is None


async def _scenario(runtime: ServiceRuntime) -> None:
    intake = _intake(runtime, Admit())

    async def batch(who: Principal, n: int) -> str:
        lines = [(i + 1, item(i)) for i in range(n)]
        view = await runtime.batches.submit(
            who, intake, rubric_id="epitome", panel_name=None, lines=lines
        )
        return view.id

    first = await batch(ALICE, 2)
    second = await batch(ALICE, 3)
    bobs = await batch(BOB, 1)
    labelled = [{"item": item(n), "labels": {"expert": dict.fromkeys(DIMS, 1)}} for n in range(2)]
    run = await runtime.calibrations.start(
        ALICE, intake, rubric_id="epitome", panel_name=None, items=labelled
    )
    probe = await runtime.probes.start(
        ALICE, intake, rubric_id="epitome", panel_name=None, kind="verbosity", items=[item(2)]
    )

    listed = runtime.batches.listed
    mine = await listed(ALICE, ListFilter())
    # newest first, the caller's own, and no calibration's or probe's batch among them
    assert [b.id for b in mine.batches] == [second, first]
    assert mine.next_offset is None
    assert [b.id for b in (await listed(BOB, ListFilter())).batches] == [bobs]
    assert {b.id for b in (await listed(ADMIN, ListFilter())).batches} == {first, second, bobs}
    page = await listed(ALICE, ListFilter(limit=1))
    assert ([b.id for b in page.batches], page.next_offset) == ([second], 1)
    page = await listed(ALICE, ListFilter(offset=1, limit=1))
    assert ([b.id for b in page.batches], page.next_offset) == ([first], None)
    assert (mine.batches[0].total, mine.batches[0].queued) == (3, 3)
    assert mine.batches[0].simulated  # the default panel is the simulator's personas
    # filters
    assert (await listed(ALICE, ListFilter(rubric="lend-an-ear"))).batches == []
    panel = mine.batches[0].panel_name
    assert len((await listed(ALICE, ListFilter(panel=panel))).batches) == 2
    assert (await listed(ALICE, ListFilter(panel="no-such-panel"))).batches == []
    assert len((await listed(ALICE, ListFilter(status="queued"))).batches) == 2
    assert (await listed(ALICE, ListFilter(status="completed"))).batches == []

    # calibrations and probes: their owner's (admin: all), newest first, without reports
    calibrations, next_offset = await runtime.calibrations.listed(ALICE, ListFilter())
    assert ([c.id for c in calibrations], next_offset) == ([run.id], None)
    assert calibrations[0].report is None
    assert (await runtime.calibrations.listed(BOB, ListFilter()))[0] == []
    assert [p.id for p in (await runtime.probes.listed(ALICE, ListFilter()))[0]] == [probe.id]
    assert (await runtime.probes.listed(BOB, ListFilter()))[0] == []
    assert len((await runtime.probes.listed(ADMIN, ListFilter(status="running")))[0]) == 1

    # a summary of items not scored yet: no dimension, nothing simulated
    summary = await runtime.batches.summary(ALICE, first, 10)
    assert (summary.total, summary.completed, summary.dimensions) == (2, 0, {})
    with pytest.raises(BatchNotFound):
        await runtime.batches.summary(BOB, first, 10)

    # cancel: another key's batch is not found; the owner's queued items fail as cancelled
    with pytest.raises(BatchNotFound):
        await runtime.batches.cancel(BOB, second)
    cancelled = await runtime.batches.cancel(ALICE, second)
    assert (cancelled.status, cancelled.failed, cancelled.queued) == ("completed", 3, 0)
    again = await runtime.batches.cancel(ALICE, second)  # harmless
    assert (again.failed, again.completed) == (3, 0)
    rows = await runtime.batches.rows(ALICE, second, 10)
    assert [r.status for r in rows] == ["failed"] * 3
    done = await listed(ALICE, ListFilter(status="completed"))
    assert [b.id for b in done.batches] == [second]
    assert [b.id for b in (await listed(ALICE, ListFilter(status="queued"))).batches] == [first]
    # a calibration's items are not a batch to cancel
    stored = await runs.get_run(runtime.jobs.database, CalibrationRun, run.id)
    assert stored is not None
    assert stored.batch_id is not None
    with pytest.raises(BatchNotFound):
        await runtime.batches.cancel(ALICE, stored.batch_id)
    assert (await runtime.batches.view(ALICE, first)).queued == 2  # untouched
    plain = await runtime.batches.rows(ALICE, first, 10)
    await _sessions(runtime, intake, plain[0].job_id)


def test_listings_summary_and_cancel(database_url: str, clean_env: None) -> None:
    async def run() -> None:
        runtime = await _runtime(database_url)
        try:
            await _scenario(runtime)
        finally:
            await runtime.close()

    asyncio.run(run())
