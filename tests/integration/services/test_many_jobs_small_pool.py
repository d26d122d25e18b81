"""Many jobs in flight on a small connection pool: a calibration run at the default
concurrency (64 jobs in flight) on a main pool of one connection plus one in overflow
finishes, on SQLite and PostgreSQL, with the simulator's real HTTP server as judges.

A job that held a connection while it awaited a judge, or opened a second session inside a
first, would leave the others waiting for the pool until it timed out (the run then fails)
or, on a pool of the default size under load, stall; this run would hang or fail. The
timeout is a hang guard, not a measurement."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from judge.domain.principal import OPERATOR
from judge.domain.wire import wire_json
from judge.persistence.database import Database
from judge.runtime.composition import build_runtime
from judge.settings import load_settings
from judge.simulator import SimulatorProcess
from tests.fixtures.sample_texts import POSTS, RESPONSES

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(240),
    # the persistence layer runs in this process (see test_calibration_rescue.py)
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
]

N = 150
RESAMPLES = 200
DIMS = ("emotional_reactions", "interpretations", "explorations")


def labelled(n: int) -> dict[str, Any]:
    """A distinct item (no two share a text, so no judge answer is reused) with labels."""
    text = f"{RESPONSES[n % len(RESPONSES)]} ({n})"
    item = {"id": f"item-{n}", "seeker_post": POSTS[n % len(POSTS)], "response": text}
    return {"id": item["id"], "item": item, "labels": {"expert": dict.fromkeys(DIMS, n % 3)}}


def test_a_run_at_the_default_concurrency_finishes_on_a_pool_of_two(
    database_url: str, service_simulator: SimulatorProcess, clean_env: None
) -> None:
    settings = load_settings(
        database_url=database_url,
        simulator={"url": service_simulator.base_url},
        calibration_resamples=RESAMPLES,  # the report is not this test's subject
    )
    assert settings.worker.concurrency == 64  # the default `judge calibrate` runs at

    async def run() -> dict[str, Any]:
        database = Database(settings.database_url, pool_size=1)
        await database.upgrade()
        runtime = build_runtime(settings, database=database)
        try:
            calibration, job_ids = await runtime.calibrations.submit(
                rubric_id="epitome", panel_name=None, items=[labelled(n) for n in range(N)]
            )
            await runtime.jobs.run_all(job_ids)
            assert runtime.database.engine.pool.size() == 1
            return wire_json(await runtime.calibrations.view(OPERATOR, calibration.id))
        finally:
            await runtime.close()

    view = asyncio.run(run())
    assert view["progress"] == {"total": N, "completed": N, "failed": 0}
    assert view["status"] == "completed"
    assert view["report"]["n_items"] == N
    assert view["report"]["resamples"] == RESAMPLES
