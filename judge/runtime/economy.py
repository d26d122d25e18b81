"""The economy poller both runners start (the embedded job thread and each Celery worker):
every ``economy.poll_interval_s`` it creates, polls and fetches provider batches
(:class:`judge.services.economy.EconomyService`) and sends the jobs it released to the runner.

Its state is in the database, so a restarted process continues where the last one stopped;
two workers polling at once are safe (every step is a guarded statement). A released job whose
send fails keeps its outbox row for the API's drainer (and is re-sent by the sweeps)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from judge.services.economy import EconomyService

log = logging.getLogger(__name__)

Resend = Callable[[Sequence[str]], Awaitable[None]]


async def economy_forever(economy: EconomyService, resend: Resend) -> None:
    """Poll until cancelled."""
    interval = economy.jobs.settings.economy.poll_interval_s
    while True:
        await asyncio.sleep(interval)
        try:
            released = await economy.tick()
            if released:
                await resend(released)
                await economy.jobs.mark_sent(released)
        except Exception:
            log.warning("economy poll failed; will retry", exc_info=True)
