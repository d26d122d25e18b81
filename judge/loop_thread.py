"""An asyncio event loop on a daemon thread of its own, for code that must not share the
caller's loop: a Celery worker's jobs (whose task threads block), the embedded jobs beside the
API's loop, and the status reads. Work is submitted in a copy of the caller's context, so a
trace's current span stays the parent of what runs there.

The standard library's ``asyncio.run_coroutine_threadsafe`` does the crossing; this adds only
the thread's lifetime and the caller's context (one copy, where three had grown)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """Started on construction; :meth:`stop` (or :meth:`stop_blocking`) ends it."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the thread's loop in a copy of the caller's context."""
        context = contextvars.copy_context()

        async def in_context() -> T:
            return await asyncio.create_task(coro, context=context)

        return asyncio.run_coroutine_threadsafe(in_context(), self.loop)

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` there and await its result without blocking the caller's loop."""
        return await asyncio.wrap_future(self.submit(coro))

    def call_blocking(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` there and wait for its result (from a thread without a loop)."""
        return self.submit(coro).result()

    def stop_blocking(self, timeout_s: float | None = 30) -> None:
        """Stop the loop, wait for the thread, close the loop."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout_s)
        if not self.loop.is_running():
            self.loop.close()

    async def stop(self, timeout_s: float | None = 30) -> None:
        await asyncio.to_thread(self.stop_blocking, timeout_s)
