"""The embedded runner on a thread and event loop of its own, with a service runtime of its
own (database engine, LLM client, limits, call cache), as a Celery worker has them.

Why: on the API's event loop, every database round trip of a status poll waited for a turn
of a loop kept busy by the jobs (measured: ``GET /v1/batches/{id}`` p95 80-250 ms on
PostgreSQL during a full-speed batch, against a target of 50 ms). Here HTTP requests and jobs
no longer share a loop; they meet only at :meth:`JobThread.dispatch` and the waiter's
notifications, both handed across with thread-safe calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from judge.loop_thread import LoopThread
from judge.persistence.tables import ScoreJob
from judge.runtime.composition import ServiceRuntime, build_runtime
from judge.runtime.in_process import InProcessRunner, JobWaiter
from judge.settings import Settings


class _NotifyAcross:
    """The waiter of the API's loop, notified from the job thread."""

    def __init__(self, waiter: JobWaiter, loop: asyncio.AbstractEventLoop) -> None:
        self._waiter, self._loop = waiter, loop

    def notify(self, job_id: str, job: ScoreJob | None = None) -> None:
        """``job`` (the row as just stored) is handed over: this thread no longer uses it."""
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._waiter.notify, job_id, job)


class JobThread:
    """A dispatcher for the API: ``start``, ``dispatch`` and ``stop`` are awaited on the API's
    loop and run on the job thread's (in the caller's context: a job's spans join the
    request's trace)."""

    def __init__(self, settings: Settings, waiter: JobWaiter) -> None:
        self._settings = settings
        self._waiter = waiter
        self._thread: LoopThread | None = None
        self._runtime: ServiceRuntime | None = None
        self._runner: InProcessRunner | None = None

    async def start(self) -> None:
        """Build the thread's runtime and start its runner (the API has checked the schema)."""
        notify = _NotifyAcross(self._waiter, asyncio.get_running_loop())
        self._thread = LoopThread("judge-jobs")

        async def open_runner() -> None:
            self._runtime = build_runtime(self._settings)
            self._runner = InProcessRunner(
                self._runtime.jobs,
                notify,
                concurrency=self._settings.worker.concurrency,
                economy=self._runtime.economy,
            )
            await self._runner.start()

        await self._thread.call(open_runner())

    async def dispatch(self, job_ids: Sequence[str], *, interactive: bool = False) -> None:
        if self._thread is None or self._runner is None:
            raise RuntimeError("the job thread is not started")
        await self._thread.call(self._runner.dispatch(list(job_ids), interactive=interactive))

    async def dispatch_claimed(self, jobs: Sequence[ScoreJob]) -> None:
        """Jobs inserted already claimed for this process's runner
        (:meth:`InProcessRunner.dispatch_claimed`); handed over: the caller no longer
        uses these rows."""
        if self._thread is None or self._runner is None:
            raise RuntimeError("the job thread is not started")
        await self._thread.call(self._runner.dispatch_claimed(list(jobs)))

    async def stop(self) -> None:
        if self._thread is None:
            return

        async def close() -> None:
            if self._runner is not None:
                await self._runner.stop()
            if self._runtime is not None:
                await self._runtime.close()

        try:
            await self._thread.call(close())
        finally:
            await self._thread.stop()
