"""The one sweeper both runners call (the embedded job thread and each Celery worker): it
re-sends what a stopped or disconnected process left behind.

- every second: jobs this process claimed whose run failed while the database was down
  (orphans), handed back and re-sent as soon as it answers again;
- every ``worker.sweep_interval_s``: jobs running past their lease (and, when the runner's
  queue is empty, jobs queued too long: their message was lost), the queue-depth gauge, and
  calibration and probe runs whose last job finished in a process that stopped before it
  stored their report.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from judge.services.jobs import JobService

log = logging.getLogger(__name__)
#: how often orphans are looked for (a set in memory: no query when it is empty)
ORPHAN_CHECK_S = 1.0

Resend = Callable[[Sequence[str]], Awaitable[None]]


async def sweep_forever(
    jobs: JobService,
    resend: Resend,
    *,
    queue_is_empty: Callable[[], Awaitable[bool]] | None = None,
    sweep_at_start: bool = False,
) -> None:
    """Sweep until cancelled. ``resend`` hands job ids to the runner again; with
    ``queue_is_empty`` (the broker's queue), jobs queued too long are re-sent when it is.
    ``sweep_at_start``: the first full sweep one second after start (a worker starting after
    another was killed), not one interval later (the embedded runner re-sends every unfinished
    job at start itself)."""
    interval = jobs.settings.worker.sweep_interval_s
    loop = asyncio.get_running_loop()
    swept = loop.time() - interval if sweep_at_start else loop.time()
    while True:
        await asyncio.sleep(ORPHAN_CHECK_S)
        try:
            orphans = await jobs.release_orphans()
            if orphans:
                await resend(orphans)
        except Exception:
            log.warning("could not re-send orphaned jobs; will retry", exc_info=True)
        if loop.time() - swept < interval:
            continue
        swept = loop.time()
        try:
            include_queued = queue_is_empty is not None and await queue_is_empty()
            await jobs.queue_depth()
            stale = await jobs.stale_job_ids(include_queued=include_queued)
            if stale:
                log.info("re-sending %d job(s) whose run was lost", len(stale))
                await resend(stale)
            await jobs.sweep_runs()
        except Exception:
            log.warning("sweep of lost jobs and unreported runs failed; will retry", exc_info=True)
