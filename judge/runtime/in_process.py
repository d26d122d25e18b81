"""Run jobs inside the current process (the embedded default: no broker needed), and wait
for jobs to finish wherever they run.

:class:`InProcessRunner` is a dispatcher: a queue drained by ``concurrency`` coroutines on the
server's event loop, each calling :meth:`JobService.run_job`. It also sweeps for jobs whose
dispatch was lost (e.g. the process stopped mid-batch), so they are redone on restart, and for
calibration and probe runs whose report the stopped process did not store.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import logging
from collections.abc import Mapping, Sequence
from typing import Protocol

from judge.persistence.tables import ScoreJob
from judge.runtime.economy import economy_forever
from judge.runtime.job_retry import JobRetryPolicy
from judge.runtime.outbox import ClearBehind
from judge.runtime.sweeper import sweep_forever
from judge.services.economy import EconomyService
from judge.services.jobs import JobService, failure_message

log = logging.getLogger(__name__)


class _Wait:
    """One caller's wait: the jobs it still waits for, the future that wakes it, and the
    finished jobs' rows that their notices carried."""

    __slots__ = ("done", "jobs", "pending")

    def __init__(self, pending: set[str], done: asyncio.Future[None]) -> None:
        self.pending = pending
        self.done = done
        self.jobs: dict[str, ScoreJob] = {}

    def finished(self, job_id: str, job: ScoreJob | None = None) -> None:
        self.pending.discard(job_id)
        if job is not None:
            self.jobs[job_id] = job
        if not self.pending and not self.done.done():
            self.done.set_result(None)


class _Expected:
    """A wait registered at once (:meth:`JobWaiter.expect`), awaited later."""

    def __init__(self, waiter: JobWaiter, wait: _Wait) -> None:
        self._waiter = waiter
        self._wait = wait

    async def wait(self, timeout: float) -> Mapping[str, ScoreJob]:
        try:
            if self._wait.pending and timeout > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self._wait.done), timeout)
        finally:
            self.close()
        return self._wait.jobs

    def close(self) -> None:
        self._waiter._forget(self._wait)


class JobWaiter:
    """Wake callers waiting for jobs: ``notify`` after a job finishes; ``wait`` until all the
    given jobs are finished or the timeout passes.

    Waiters are woken by the completion notices alone (no waiter polls the database). Notices
    lost on the way (a Redis subscription dropped for a moment) are covered by one shared check
    every ``check_s`` (:meth:`start`), a single query for every job still awaited, however
    many callers wait. A caller that stops waiting (its client went away: the wait is
    cancelled) leaves nothing behind."""

    def __init__(self, jobs: JobService, *, check_s: float = 1.0) -> None:
        self._jobs = jobs
        self._check_s = check_s
        self._by_job: dict[str, list[_Wait]] = {}
        self._task: asyncio.Task[None] | None = None

    @property
    def awaited(self) -> int:
        """How many distinct jobs someone is waiting for."""
        return len(self._by_job)

    def notify(self, job_id: str, job: ScoreJob | None = None) -> None:
        for wait in self._by_job.pop(job_id, ()):
            wait.finished(job_id, job)

    def _register(self, job_ids: Sequence[str]) -> _Wait:
        wait = _Wait(set(job_ids), asyncio.get_running_loop().create_future())
        for job_id in wait.pending:
            self._by_job.setdefault(job_id, []).append(wait)
        if not wait.pending:
            wait.done.set_result(None)
        return wait

    def _forget(self, wait: _Wait) -> None:
        for job_id in list(wait.pending):
            self._release(job_id, wait)
        if not wait.done.done():
            wait.done.cancel()

    def expect(self, job_ids: Sequence[str]) -> _Expected:
        """Register a wait for jobs not yet dispatched: their notices cannot come before it,
        so nothing is read from the database."""
        return _Expected(self, self._register(job_ids))

    async def wait(self, job_ids: Sequence[str], timeout: float) -> Mapping[str, ScoreJob]:
        if timeout <= 0 or not job_ids:
            return {}
        # registered before the look at the database: a notice between the two is not lost
        wait = self._register(job_ids)
        try:
            unfinished = await self._jobs.unfinished_among(sorted(wait.pending))
            for job_id in wait.pending - unfinished:
                self._release(job_id, wait)
                wait.finished(job_id)
            if wait.pending:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(wait.done), timeout)
        finally:
            self._forget(wait)
        return wait.jobs

    def _release(self, job_id: str, wait: _Wait) -> None:
        waits = self._by_job.get(job_id)
        if waits is None:
            return
        with contextlib.suppress(ValueError):
            waits.remove(wait)
        if not waits:
            del self._by_job[job_id]

    async def start(self) -> None:
        self._task = asyncio.create_task(self._check_forever())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def check(self) -> None:
        """Wake the waiters of every awaited job that has finished (its notice was lost)."""
        awaited = list(self._by_job)
        if awaited:
            unfinished = await self._jobs.unfinished_among(awaited)
            for job_id in awaited:
                if job_id not in unfinished:
                    self.notify(job_id)

    async def _check_forever(self) -> None:
        while True:
            await asyncio.sleep(self._check_s)
            try:
                await self.check()
            except Exception:  # the database is away: notices still wake the waiters
                log.warning("could not check the awaited jobs", exc_info=True)


class Notify(Protocol):
    """Told when a job has finished (:meth:`JobWaiter.notify`, or a hand-over to another
    thread's waiter), with its row as just stored when this process finished it."""

    def notify(self, job_id: str, job: ScoreJob | None = None) -> None: ...


#: (lane, order, job id, the context of its dispatch, the job's row when it was inserted
#: already claimed for this runner)
_Queued = tuple[int, int, str, contextvars.Context | None, ScoreJob | None]


class InProcessRunner:
    def __init__(
        self,
        jobs: JobService,
        waiter: Notify,
        *,
        concurrency: int,
        economy: EconomyService | None = None,
    ) -> None:
        self._jobs = jobs
        #: polls provider batches (judge.runtime.economy); None: economy batches wait
        self.economy = economy
        self._waiter = waiter
        self._concurrency = concurrency
        #: (lane, order, job id, the context of its dispatch: an HTTP request's trace, when
        #: tracing, the claimed row); the interactive lane (0) is served before the bulk
        #: lane's backlog (1)
        self._queue: asyncio.PriorityQueue[_Queued] = asyncio.PriorityQueue()
        self._order = itertools.count()
        self._tasks: list[asyncio.Task[None]] = []
        #: outbox rows cleared behind the dispatch, many dispatches' rows per statement
        self._sent = ClearBehind(jobs)

    def _put(
        self,
        job_id: str,
        context: contextvars.Context | None,
        interactive: bool,
        claimed: ScoreJob | None = None,
    ) -> None:
        lane = 0 if interactive else 1
        self._queue.put_nowait((lane, next(self._order), job_id, context, claimed))

    async def dispatch_claimed(self, jobs: Sequence[ScoreJob]) -> None:
        """Run jobs inserted already claimed for this runner (a single score: the
        interactive lane), with no claim and no outbox row to clear: a restart or the
        sweeper finds them as running jobs whose lease lapsed."""
        context = contextvars.copy_context()
        for job in jobs:
            self._put(job.id, context.copy(), True, job)

    async def dispatch(self, job_ids: Sequence[str], *, interactive: bool = False) -> None:
        context = contextvars.copy_context()
        for job_id in job_ids:  # a copy each: a job's spans must not become another's parent
            self._put(job_id, context.copy(), interactive)
        # Queued in memory: a restart finds them as unfinished jobs, the outbox is not needed.
        # Its rows are cleared behind, off the caller's path (a score waited for pays no
        # write for it); until then the drainer may send a job again, which is harmless.
        self._sent.clear(job_ids)

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(self._work()) for _ in range(self._concurrency)]
        self._tasks.append(asyncio.create_task(sweep_forever(self._jobs, self.dispatch)))
        if self.economy is not None:
            self._tasks.append(asyncio.create_task(economy_forever(self.economy, self.dispatch)))
        await self.dispatch(await self._jobs.recoverable_job_ids())

    async def stop(self, grace_s: float = 10.0) -> None:
        """Let running jobs finish for up to ``grace_s``; unfinished ones stay in the database
        and are picked up at the next start."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._queue.join(), timeout=grace_s)
        await self._sent.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    @property
    def backlog(self) -> int:
        return self._queue.qsize()

    async def _work(self) -> None:
        while True:
            _, _, job_id, context, claimed = await self._queue.get()
            finished = None
            try:
                # in the dispatcher's context, so the job's spans join the request's trace
                run = self._jobs.run(job_id, claimed=claimed)
                finished = await asyncio.create_task(run, context=context)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                await self._retry_or_give_up(job_id, exc)
            finally:
                self._queue.task_done()
                # the row as stored goes along: a ?wait= caller answers without reading it
                self._waiter.notify(job_id, finished)

    async def _retry_or_give_up(self, job_id: str, exc: Exception) -> None:
        """A run raised (not an abstention: a bug or a lost database): retry with backoff,
        and after ``worker.max_attempts`` claims mark the job failed (:class:`JobRetryPolicy`)."""
        policy = JobRetryPolicy.from_settings(self._jobs.settings)
        try:
            job = await self._jobs.get_job(job_id)
            attempts = job.attempts if job is not None else policy.max_attempts
            if policy.exhausted(attempts):
                log.error(
                    "job %s raised %r on %d attempts; marking it failed", job_id, exc, attempts
                )
                await self._jobs.give_up(job_id, failure_message(exc, attempts))
                return
        except Exception:
            attempts = 1
        delay = policy.delay_s(max(attempts - 1, 0))
        log.warning("job %s raised %r; retrying in %.0fs", job_id, exc, delay)
        asyncio.get_running_loop().call_later(delay, self._put, job_id, None, False)
