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
import contextvars
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from judge.services.runner import InProcessRunner, JobWaiter
from judge.services.runtime import ServiceRuntime, build_runtime
from judge.settings import Settings

T = TypeVar("T")


class _NotifyAcross:
    """The waiter of the API's loop, notified from the job thread."""

    def __init__(self, waiter: JobWaiter, loop: asyncio.AbstractEventLoop) -> None:
        self._waiter, self._loop = waiter, loop

    def notify(self, job_id: str) -> None:
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._waiter.notify, job_id)


class JobThread:
    """A dispatcher for the API: ``start``, ``dispatch`` and ``stop`` are awaited on the API's
    loop and run on the job thread's."""

    def __init__(self, settings: Settings, waiter: JobWaiter) -> None:
        self._settings = settings
        self._waiter = waiter
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="judge-jobs", daemon=True
        )
        self._runtime: ServiceRuntime | None = None
        self._runner: InProcessRunner | None = None

    async def _across(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the job loop in a copy of the caller's context (its trace: a job's
        spans join the request's), and wait for it without blocking the caller's loop."""
        context = contextvars.copy_context()

        async def in_context() -> T:
            return await asyncio.create_task(coro, context=context)

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(in_context(), self._loop))

    async def start(self) -> None:
        notify = _NotifyAcross(self._waiter, asyncio.get_running_loop())
        self._thread.start()

        async def open_runner() -> None:
            self._runtime = build_runtime(self._settings)
            await self._runtime.database.check_migrated()
            self._runner = InProcessRunner(
                self._runtime.jobs, notify, concurrency=self._settings.worker.concurrency
            )
            await self._runner.start()

        await self._across(open_runner())

    async def dispatch(self, job_ids: Sequence[str]) -> None:
        if self._runner is None:
            raise RuntimeError("the job thread is not started")
        await self._across(self._runner.dispatch(list(job_ids)))

    async def stop(self) -> None:
        async def close() -> None:
            if self._runner is not None:
                await self._runner.stop()
            if self._runtime is not None:
                await self._runtime.close()

        try:
            if self._thread.is_alive():
                await self._across(close())
        finally:
            if self._thread.ident is not None:  # started
                self._loop.call_soon_threadsafe(self._loop.stop)
                await asyncio.to_thread(self._thread.join, 30)
            if not self._loop.is_running():
                self._loop.close()
