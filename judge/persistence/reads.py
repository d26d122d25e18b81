"""Short reads on an event loop of their own (a thread), with their own small pool.

Why: in the embedded mode the API's event loop also runs the jobs. Measured during a batch,
a status poll first waited 100-580 ms for a connection of the main pool (all checked out by
jobs), then, on a pool of its own, still waited a loop turn (10-30 ms under load) for each of
its driver round trips (connect/ping, query, fetch, cursor close). On this loop every driver
step is immediate; the caller's loop is entered once, for the result. The thread is the
project's one :class:`~judge.loop_thread.LoopThread`.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from judge.loop_thread import LoopThread

T = TypeVar("T")


class ReadLoop:
    """Runs ``read(session)`` on a daemon thread's loop, started on first use; the engine is
    made there by ``make_engine`` (asyncpg connections belong to the loop that opened them)."""

    def __init__(self, make_engine: Callable[[], AsyncEngine]) -> None:
        self._make_engine = make_engine
        self._lock = threading.Lock()
        self._thread: LoopThread | None = None
        self._engine: AsyncEngine | None = None
        self._sessions: async_sessionmaker[AsyncSession] | None = None

    def _started(self) -> LoopThread:
        with self._lock:
            if self._thread is None:
                self._thread = LoopThread("db-reads")
            return self._thread

    async def run(self, read: Callable[[AsyncSession], Awaitable[T]]) -> T:
        return await self._started().call(self._read(read))

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
            thread, self._thread = self._thread, None
        if thread is None:
            return
        engine, self._engine, self._sessions = self._engine, None, None
        if engine is not None:
            await thread.call(engine.dispose())
        await thread.stop(timeout_s=None)
