"""A batch's mode (interactive or economy) decides each of its jobs' client, and its kind
whether a run follows it; the jobs that start or finish together (a round of the runner's
concurrency) share one read of each, and every job of the batch is scored, on SQLite and
PostgreSQL with the simulator's real HTTP server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import event

from judge.runtime.composition import build_runtime
from judge.settings import load_settings
from judge.simulator import SimulatorProcess
from tests.fixtures.sample_texts import POSTS, RESPONSES

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(240),
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
]

N = 24


def _item(n: int) -> dict[str, Any]:
    return {
        "seeker_post": POSTS[n % len(POSTS)],
        "response": f"{RESPONSES[n % len(RESPONSES)]} ({n})",
    }


def test_the_jobs_of_a_batch_share_the_reads_of_its_mode_and_kind(
    database_url: str, service_simulator: SimulatorProcess, clean_env: None
) -> None:
    settings = load_settings(
        database_url=database_url,
        simulator={"url": service_simulator.base_url},
        worker={"concurrency": N},
    )
    reads: list[str] = []

    async def run() -> tuple[int, int]:
        runtime = build_runtime(settings)
        await runtime.database.upgrade()

        def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
            if statement.lstrip().upper().startswith("SELECT") and "FROM batches" in statement:
                reads.append(statement)

        event.listen(runtime.database.engine.sync_engine, "before_cursor_execute", seen)
        try:
            _, ids = await runtime.jobs.submit_batch(
                rubric_id="epitome", panel_name=None, lines=list(enumerate(map(_item, range(N)), 1))
            )
            await runtime.jobs.run_all(ids)
            return len(ids), len(await runtime.jobs.unfinished_among(ids))
        finally:
            await runtime.close()

    submitted, unfinished = asyncio.run(run())
    assert (submitted, unfinished) == (N, 0)
    # one read for its mode (jobs starting) and one for its kind (the run follower, jobs
    # finishing), each shared by the jobs; before, each job read the row: 25-26 reads
    assert len(reads) == 2, len(reads)
