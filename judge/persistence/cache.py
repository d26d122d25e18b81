"""The LLM call cache in SQL: one row per exact (model, parameters, messages, schema) request.

Lookups made in the same event-loop turn (a panel's judges ask at once; so do the items of
a batch) are answered by one ``SELECT ... WHERE key IN (...)``, and new entries are written
behind, many rows per transaction, off the caller's path. An entry still in the write buffer
is served from it. A process that dies before a flush loses only cache entries, never results.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlmodel import col

from judge.domain.cached_reply import CachedReply
from judge.persistence.database import Database
from judge.persistence.tables import LlmCacheEntry

log = logging.getLogger(__name__)
_MAX_KEYS_PER_QUERY = 500


@functools.cache
def _insert_statement(postgresql: bool) -> Any:
    """``INSERT ... ON CONFLICT DO NOTHING`` of a cache row, built once per dialect."""
    insert = pg_insert if postgresql else sqlite_insert
    return insert(LlmCacheEntry.__table__).on_conflict_do_nothing()  # type: ignore[attr-defined]


def _reply(row: LlmCacheEntry) -> CachedReply:
    return CachedReply(
        content=row.content,
        resolved_model=row.resolved_model,
        prompt_tokens=row.prompt_tokens,
        completion_tokens=row.completion_tokens,
        cost_usd=row.cost_usd,
        simulated=row.simulated,
    )


class SqlCallCache:
    def __init__(self, database: Database) -> None:
        self._db = database
        self._waiting: dict[str, list[asyncio.Future[CachedReply | None]]] = {}
        self._read_scheduled = False
        self._unwritten: dict[str, dict[str, Any]] = {}
        self._writer: asyncio.Task[None] | None = None

    async def get(self, key: str) -> CachedReply | None:
        pending = self._unwritten.get(key)
        if pending is not None:
            return CachedReply(**{k: pending[k] for k in CachedReply.__dataclass_fields__})
        loop = asyncio.get_running_loop()
        future: asyncio.Future[CachedReply | None] = loop.create_future()
        self._waiting.setdefault(key, []).append(future)
        if not self._read_scheduled:
            self._read_scheduled = True
            loop.call_soon(lambda: loop.create_task(self._read_batch()))
        return await future

    async def _read_batch(self) -> None:
        waiting, self._waiting, self._read_scheduled = self._waiting, {}, False
        keys = list(waiting)
        try:
            found: dict[str, CachedReply] = {}
            async with self._db.session() as session:
                for start in range(0, len(keys), _MAX_KEYS_PER_QUERY):
                    chunk = keys[start : start + _MAX_KEYS_PER_QUERY]
                    rows = await session.execute(
                        select(LlmCacheEntry).where(col(LlmCacheEntry.key).in_(chunk))
                    )
                    found.update({row.key: _reply(row) for row in rows.scalars().all()})
        except Exception as exc:  # a cache that cannot be read is a cache miss
            log.warning("LLM cache lookup failed: %r", exc)
            found = {}
        for key, futures in waiting.items():
            for future in futures:
                if not future.done():
                    future.set_result(found.get(key))

    async def put(self, key: str, model: str, reply: CachedReply) -> None:
        self._unwritten[key] = {
            "key": key,
            "model": model,
            "resolved_model": reply.resolved_model,
            "content": reply.content,
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "cost_usd": reply.cost_usd,
            "simulated": reply.simulated,
        }
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_behind())

    async def _write_behind(self) -> None:
        await asyncio.sleep(0)  # let the other judges of this turn add their entries
        while self._unwritten:
            rows = list(self._unwritten.values())
            try:
                await self._insert(rows)
            except Exception as exc:  # losing cache entries costs calls, never results
                log.warning("could not write %d LLM cache entries: %r", len(rows), exc)
            for row in rows:
                if self._unwritten.get(row["key"]) is row:
                    del self._unwritten[row["key"]]

    async def _insert(self, rows: list[dict[str, Any]]) -> None:
        from judge.persistence.tables import utcnow

        now = utcnow()
        values = [row | {"created_at": now} for row in rows]
        async with self._db.session() as session:
            # one statement compiled once, run for every row (executemany): building a
            # multi-row VALUES per write cost more CPU than the write (cProfile)
            await session.execute(_insert_statement(self._db.url.startswith("postgresql")), values)
            await session.commit()

    async def flush(self) -> None:
        """Write every buffered entry now (on shutdown)."""
        if self._writer is not None and not self._writer.done():
            await self._writer
        if self._unwritten:
            await self._write_behind()
