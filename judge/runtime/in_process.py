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
import logging
from collections.abc import Sequence
from typing import Protocol

from judge.runtime.job_retry import JobRetryPolicy
from judge.runtime.sweeper import sweep_forever
from judge.services.jobs import JobService, failure_message, is_finished

log = logging.getLogger(__name__)


class JobWaiter:
    """Wake callers waiting for jobs: ``notify`` after a job finishes; ``wait`` until all the
    given jobs are finished or the timeout passes. Missed notifications are covered by a
    periodic look at the database."""

    def __init__(self, jobs: JobService, *, poll_s: float = 0.25) -> None:
        self._jobs = jobs
        self._poll_s = poll_s
        self._events: dict[str, asyncio.Event] = {}

    def notify(self, job_id: str) -> None:
        event = self._events.get(job_id)
        if event is not None:
            event.set()

    async def _finished(self, job_id: str) -> bool:
        job = await self._jobs.get_job(job_id)
        return job is None or is_finished(job)

    async def wait(self, job_ids: Sequence[str], timeout: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        pending = list(job_ids)
        events = {j: self._events.setdefault(j, asyncio.Event()) for j in pending}
        try:
            while pending:
                pending = [j for j in pending if not await self._finished(j)]
                remaining = deadline - loop.time()
                if not pending or remaining <= 0:
                    return
                waits = [asyncio.ensure_future(events[j].wait()) for j in pending]
                try:
                    await asyncio.wait(
                        waits, timeout=min(remaining, self._poll_s), return_when="ALL_COMPLETED"
                    )
                finally:
                    for w in waits:
                        w.cancel()
        finally:
            for j in events:
                self._events.pop(j, None)


class Notify(Protocol):
    """Told when a job has finished (:meth:`JobWaiter.notify`, or a hand-over to another
    thread's waiter)."""

    def notify(self, job_id: str) -> None: ...


class InProcessRunner:
    def __init__(self, jobs: JobService, waiter: Notify, *, concurrency: int) -> None:
        self._jobs = jobs
        self._waiter = waiter
        self._concurrency = concurrency
        #: job ids with the context of their dispatch (an HTTP request's trace, when tracing)
        self._queue: asyncio.Queue[tuple[str, contextvars.Context | None]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []

    async def dispatch(self, job_ids: Sequence[str]) -> None:
        context = contextvars.copy_context()
        for job_id in job_ids:  # a copy each: a job's spans must not become another's parent
            self._queue.put_nowait((job_id, context.copy()))
        # queued in memory: a restart finds them as unfinished jobs, the outbox is not needed
        await self._jobs.mark_sent(job_ids)

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(self._work()) for _ in range(self._concurrency)]
        self._tasks.append(asyncio.create_task(sweep_forever(self._jobs, self.dispatch)))
        await self.dispatch(await self._jobs.recoverable_job_ids())

    async def stop(self, grace_s: float = 10.0) -> None:
        """Let running jobs finish for up to ``grace_s``; unfinished ones stay in the database
        and are picked up at the next start."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._queue.join(), timeout=grace_s)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    @property
    def backlog(self) -> int:
        return self._queue.qsize()

    async def _work(self) -> None:
        while True:
            job_id, context = await self._queue.get()
            try:
                # in the dispatcher's context, so the job's spans join the request's trace
                await asyncio.create_task(self._jobs.run_job(job_id), context=context)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                await self._retry_or_give_up(job_id, exc)
            finally:
                self._queue.task_done()
                self._waiter.notify(job_id)

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
        asyncio.get_running_loop().call_later(delay, self._queue.put_nowait, (job_id, None))
