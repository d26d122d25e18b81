"""The canary scheduler behind ``judge beat``: start every due canary run and dispatch it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from judge.services.canaries import CanaryService

log = logging.getLogger(__name__)
Dispatch = Callable[[Sequence[str]], Awaitable[None]]


async def start_due_canaries(canaries: CanaryService, dispatch: Dispatch) -> list[str]:
    """Start a run for every canary whose interval has passed; returns the new run ids."""
    started = []
    for canary in await canaries.due():
        run, job_ids = await canaries.start(canary.id)
        await dispatch(job_ids)
        log.info(
            "canary %s (%s): run %s with %d items", canary.name, canary.id, run.id, len(job_ids)
        )
        started.append(run.id)
    return started


async def beat_forever(canaries: CanaryService, dispatch: Dispatch, *, tick_s: float) -> None:
    while True:
        try:
            await start_due_canaries(canaries, dispatch)
        except Exception:  # a failed tick is logged; the next one tries again
            log.exception("canary tick failed")
        await asyncio.sleep(tick_s)
