"""Calibration and probe runs are finalized by an explicit call when their last job finishes,
never by a read; a run whose process stopped between its last job and storing the report is
shown as ``finalizing`` and stored by the periodic sweep. In process, on SQLite and
PostgreSQL, with the simulator's real HTTP server as judges."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from judge.domain.principal import OPERATOR
from judge.domain.wire import wire_json
from judge.errors import CalibrationNotReady
from judge.persistence.database import Database
from judge.persistence.tables import CalibrationRun, ProbeRun, ScoreJob
from judge.runtime.composition import ServiceRuntime, build_runtime
from judge.settings import load_settings
from judge.simulator import SimulatorProcess
from tests.fixtures.sample_texts import POSTS, RESPONSES

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(180),
    # the persistence layer runs in this process (see test_calibration_rescue.py)
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
]

DIMS = ("emotional_reactions", "interpretations", "explorations")
#: the sweep leaves alone runs whose last job finished less than this long ago
SWEEP_S = 1.0


def item(n: int) -> dict[str, Any]:
    return {"id": f"item-{n}", "seeker_post": POSTS[n % len(POSTS)], "response": RESPONSES[n]}


def labelled(n: int) -> dict[str, Any]:
    return {"id": f"item-{n}", "item": item(n), "labels": {"expert": dict.fromkeys(DIMS, n % 3)}}


async def _runtime(database_url: str, simulator_url: str) -> ServiceRuntime:
    settings = load_settings(
        database_url=database_url,
        simulator={"url": simulator_url},
        worker={"sweep_interval_s": SWEEP_S},
    )
    database = Database(settings.database_url)
    try:
        await database.upgrade()
    finally:
        await database.dispose()
    return build_runtime(settings)


async def _row(runtime: ServiceRuntime, table: type[Any], run_id: str) -> dict[str, Any]:
    async with runtime.database.session() as session:
        row = await session.get(table, run_id, populate_existing=True)
        assert row is not None
        return dict(row.model_dump())


async def _view(runs: Any, run_id: str) -> dict[str, Any]:
    """A run as the API shows it, to the operator."""
    return wire_json(await runs.view(OPERATOR, run_id))


class _BrokenFollower:
    async def after_batch_job(self, job: ScoreJob) -> None:
        raise RuntimeError("a follower bug")

    async def sweep(self, *, grace_s: float) -> None:
        raise RuntimeError("a follower bug")


async def _scenario(runtime: ServiceRuntime) -> None:
    calibrations, probes, jobs = runtime.calibrations, runtime.probes, runtime.jobs
    follower = jobs.follower
    assert follower is not None

    # the explicit call: the last job's process stores the report, nobody reads the run
    done, job_ids = await calibrations.submit(
        rubric_id="epitome", panel_name=None, items=[labelled(n) for n in range(4)]
    )
    await jobs.run_all(job_ids)
    stored = await _row(runtime, CalibrationRun, done.id)
    assert stored["status"] == "completed"
    assert stored["report_json"]

    # ... and a canary run of it gets its drift from the canary step of that call
    canary = await runtime.canaries.register(
        OPERATOR, baseline_run_id=done.id, interval_s=60, name=None
    )
    repeat, job_ids = await runtime.canaries.start(canary.id)
    await jobs.run_all(job_ids)
    report = (await _view(calibrations, repeat.id))["report"]
    assert report["canary"]["id"] == canary.id
    assert set(report["drift"]) == set(DIMS)

    # a process stops between its runs' last jobs and their reports (no follower told)
    jobs.follower = None
    run, job_ids = await calibrations.submit(
        rubric_id="epitome", panel_name=None, items=[labelled(n) for n in range(3)]
    )
    probe, probe_jobs = await probes.submit(
        rubric_id="epitome", panel_name=None, kind="verbosity", items=[item(0), item(1)]
    )
    await jobs.run_all([*job_ids, *probe_jobs])
    run_row = await _row(runtime, CalibrationRun, run.id)
    probe_row = await _row(runtime, ProbeRun, probe.id)

    # reads show it as finalizing and write nothing
    view = await _view(calibrations, run.id)
    assert view["status"] == "finalizing"
    assert view["progress"] == {"total": 3, "completed": 3, "failed": 0}
    assert "report" not in view
    assert (await _view(probes, probe.id))["status"] == "finalizing"
    with pytest.raises(CalibrationNotReady):
        await runtime.insights.compare_aggregation(OPERATOR, run.id)
    assert await _row(runtime, CalibrationRun, run.id) == run_row
    assert await _row(runtime, ProbeRun, probe.id) == probe_row
    assert run_row["status"] == "running"
    assert run_row["report_json"] is None

    # the sweep leaves runs alone while their last job is recent, then stores the reports
    jobs.follower = follower
    await jobs.sweep_runs()
    assert (await _row(runtime, CalibrationRun, run.id))["status"] == "running"
    await asyncio.sleep(SWEEP_S + 0.2)
    await jobs.sweep_runs()
    view = await _view(calibrations, run.id)
    assert view["status"] == "completed"
    assert view["report"]["n_items"] == 3
    probe_view = await _view(probes, probe.id)
    assert probe_view["status"] == "completed"
    assert probe_view["report"]["kind"] == "verbosity"
    assert await calibrations.finalize_unreported(grace_s=0) == 0
    assert await probes.finalize_unreported(grace_s=0) == 0

    # a follower's failure is logged and never fails the job
    jobs.follower = _BrokenFollower()
    broken, job_ids = await calibrations.submit(
        rubric_id="epitome", panel_name=None, items=[labelled(0)]
    )
    await jobs.run_all(job_ids)
    finished = await jobs.get_job(job_ids[0])
    assert finished is not None
    assert finished.status == "completed"
    assert (await _view(calibrations, broken.id))["status"] == "finalizing"
    jobs.follower = follower


def test_runs_are_finalized_by_their_last_job_or_the_sweep_never_by_a_read(
    database_url: str, service_simulator: SimulatorProcess, clean_env: None
) -> None:
    async def run() -> None:
        runtime = await _runtime(database_url, service_simulator.base_url)
        try:
            await _scenario(runtime)
        finally:
            await runtime.close()

    asyncio.run(run())
