"""Short reads on an event loop of their own (a thread), with their own small pool.

Why: in the embedded mode the API's event loop also runs the jobs. Measured during a batch,
a status poll first waited 100-580 ms for a connection of the main pool (all checked out by
jobs), then, on a pool of its own, still waited a loop turn (10-30 ms under load) for each of
its driver round trips (connect/ping, query, fetch, cursor close). On this loop every driver
step is immediate; the caller's loop is entered once, for the result. A few lines of
``run_coroutine_threadsafe``: no library in the lock does this for an async SQLAlchemy engine.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

T = TypeVar("T")


class ReadLoop:
    """Runs ``read(session)`` on a daemon thread's loop; the engine is made there on first
    use by ``make_engine`` (asyncpg connections belong to the loop that opened them)."""

    def __init__(self, make_engine: Callable[[], AsyncEngine]) -> None:
        self._make_engine = make_engine
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._engine: AsyncEngine | None = None
        self._sessions: async_sessionmaker[AsyncSession] | None = None

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=loop.run_forever, name="db-reads", daemon=True
                )
                self._thread.start()
                self._loop = loop
            return self._loop

    async def run(self, read: Callable[[AsyncSession], Awaitable[T]]) -> T:
        future = asyncio.run_coroutine_threadsafe(self._read(read), self._running_loop())
        return await asyncio.wrap_future(future)

    async def _read(self, read: Callable[[AsyncSession], Awaitable[T]]) -> T:
        if self._sessions is None:
            self._engine = self._make_engine()
            self._sessions = async_sessionmaker(
                self._engine, class_=AsyncSession, expire_on_commit=False
            )
        async with self._sessions() as session:
            return await read(session)

    async def close(self) -> None:
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        engine, self._engine, self._sessions = self._engine, None, None
        if engine is not None:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(engine.dispose(), loop))
        loop.call_soon_threadsafe(loop.stop)
        await asyncio.to_thread(thread.join)
        loop.close()
