"""Short reads that must answer at once (a batch's status poll), apart from the jobs' pool.

SQLite (:class:`InlineReads`): on the caller's thread, with the standard library's driver
and a small pool of its own. Why: through aiosqlite every driver step (cursor, execute,
fetch, close) is a hop to the driver's thread and back, and the read loop below added two
more; during a full-speed embedded batch each hop waits for the GIL, held by the job thread,
and for the CPU (measured, 2026-12-07, a 200-item batch at load 10-12: the poll's statement
took 3-10 ms typically and 57-171 ms at worst on the read loop). In WAL mode a reader never
waits for the writer, so the read blocks the caller's loop only for its own execution
(about a millisecond).

PostgreSQL (:class:`ReadLoop`): on an event loop of its own (a thread), with its own small
pool.

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
from typing import Any, TypeVar

from sqlalchemy import Engine, Row, Select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from judge.loop_thread import LoopThread

T = TypeVar("T")


class InlineReads:
    """Runs a SELECT on the caller's thread through ``engine`` (a synchronous SQLite engine,
    autocommit); each read takes a pooled connection and returns it."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def row(self, statement: Select[Any]) -> Row[Any] | None:
        with Session(self._engine) as session:
            return session.execute(statement).one_or_none()

    def close(self) -> None:
        self._engine.dispose()


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
