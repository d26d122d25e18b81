"""The transactional job outbox: every job is written with an outbox row in the transaction
that creates it; the row is deleted once the job is in its runner's hands. When a request
dies between the commit and the send (an API killed mid-POST, a broker that did not answer),
the :class:`OutboxDrainer` sends the rows left behind: at start-up and every
``api.outbox_interval_s``, not at the workers' requeue threshold a minute later. A job sent
twice is harmless: claiming a job is guarded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Sequence
from datetime import timedelta

from judge.persistence import idempotency
from judge.persistence import jobs as repo
from judge.persistence.rounds import Rounds
from judge.persistence.tables import utcnow
from judge.services.jobs import Dispatcher, JobService

log = logging.getLogger(__name__)
#: rows sent per round of the drainer
DRAIN_BATCH = 1_000
#: jobs per send (and per outbox clear): a large batch is on the broker chunk by chunk, and a
#: request that dies mid-send leaves only its unsent chunks to the drainer
SEND_CHUNK = 500
#: expired idempotency keys are deleted this often
PURGE_EVERY_S = 600.0


class ClearBehind:
    """Outbox rows of jobs already in their runner's hands, deleted off the sender's path,
    many sends' rows per statement (:class:`~judge.persistence.rounds.Rounds`). A row left
    behind (a failed delete, a crash first) only lets the drainer send its job again, which
    is harmless: claims are guarded."""

    def __init__(self, jobs: JobService) -> None:
        self._jobs = jobs
        self._rounds: Rounds[Sequence[str], None] = Rounds(self._clear)
        self._clearing: set[asyncio.Task[None]] = set()

    def clear(self, job_ids: Sequence[str]) -> None:
        if not job_ids:
            return
        task = asyncio.create_task(self._rounds.submit(list(job_ids)))
        self._clearing.add(task)
        task.add_done_callback(self._cleared)

    async def _clear(self, rounds: Sequence[Sequence[str]]) -> list[None]:
        await self._jobs.mark_sent([job_id for job_ids in rounds for job_id in job_ids])
        return [None] * len(rounds)

    def _cleared(self, task: asyncio.Task[None]) -> None:
        self._clearing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("could not clear outbox rows (the drainer sends them again, harmless)")

    async def close(self) -> None:
        """Wait for the deletes under way (at shutdown)."""
        await asyncio.gather(*self._clearing, return_exceptions=True)


class OutboxDispatcher:
    """Send through ``inner`` (which raises when it cannot) in chunks of ``chunk`` jobs,
    clearing each chunk's outbox rows once it is sent; a failed send is logged and its chunk
    and the rest are left to the drainer. An interactive send (a single score, maybe waited
    for) has its row cleared behind, off the caller's path, many sends' rows per statement:
    until then the drainer may send it again, which is harmless."""

    def __init__(self, inner: Dispatcher, jobs: JobService, *, chunk: int = SEND_CHUNK) -> None:
        self._inner = inner
        self._jobs = jobs
        self._chunk = chunk
        #: jobs a dispatch of this process is still sending (their rows are not the drainer's)
        self.sending: set[str] = set()
        self._behind = ClearBehind(jobs)

    async def dispatch(self, job_ids: Sequence[str], *, interactive: bool = False) -> None:
        unsent = list(job_ids)
        self.sending.update(unsent)
        try:
            for start in range(0, len(unsent), self._chunk):
                part = unsent[start : start + self._chunk]
                try:
                    await self._inner.dispatch(part, interactive=interactive)
                except Exception:
                    left = len(unsent) - start
                    log.warning(
                        "could not enqueue %d job(s); the outbox will retry", left, exc_info=True
                    )
                    return
                self.sending.difference_update(part)
                if interactive:
                    self._behind.clear(part)
                    continue
                try:
                    await self._jobs.mark_sent(part)
                except Exception:  # the drainer sends them again: a harmless duplicate
                    log.warning("could not clear %d outbox row(s)", len(part), exc_info=True)
        finally:
            self.sending.difference_update(unsent)

    async def close(self) -> None:
        """Finish clearing the rows of sent jobs (at shutdown)."""
        await self._behind.close()


class OutboxDrainer:
    """Sends the outbox rows that requests left behind. Rows of a submission this process is
    still sending (``open``: an :class:`OutboxDispatcher`'s ``sending``) are never re-sent,
    however long a large batch takes to send."""

    def __init__(
        self, jobs: JobService, dispatcher: Dispatcher, *, open_: Collection[str] = frozenset()
    ) -> None:
        self._jobs = jobs
        self._dispatcher = dispatcher
        self._open = open_
        self._task: asyncio.Task[None] | None = None

    async def drain(self, *, grace_s: float) -> int:
        """Send every outbox row older than ``grace_s`` (younger ones belong to requests
        still sending them) and not of an open submission; returns how many."""
        sent = 0
        while True:
            before = utcnow() - timedelta(seconds=grace_s)
            async with self._jobs.database.session() as session:
                found = await repo.outbox_pending(session, before=before, limit=DRAIN_BATCH)
            ids = [job_id for job_id in found if job_id not in self._open]
            if ids:
                log.info("sending %d job(s) left in the outbox", len(ids))
                await self._dispatcher.dispatch(ids)
                sent += len(ids)
            if len(found) < DRAIN_BATCH or not ids:
                return sent

    async def start(self) -> None:
        try:
            await self.drain(grace_s=0)  # at start-up every row is a crashed request's
        except Exception:
            log.warning("could not drain the job outbox at start-up", exc_info=True)
        self._task = asyncio.create_task(self._forever())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _forever(self) -> None:
        api = self._jobs.settings.api
        loop = asyncio.get_running_loop()
        purged = loop.time()
        while True:
            await asyncio.sleep(api.outbox_interval_s)
            try:
                await self.drain(grace_s=api.outbox_grace_s)
                if loop.time() - purged > PURGE_EVERY_S:
                    purged = loop.time()
                    await idempotency.purge_expired(
                        self._jobs.database, ttl_s=api.idempotency_ttl_s
                    )
            except Exception:  # the database is down: try again next round
                log.warning("draining the job outbox failed; will retry", exc_info=True)
