"""Values read once per key and remembered, such as a batch's mode or kind (which never
change). The jobs of a round start and finish together (64 at a time): without sharing, each
of them missed the memory and read the same row (measured: 25 reads of the batch row for a
24-job batch run together; one now)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _retrieved(future: asyncio.Future[Any]) -> None:
    # its awaiters may all have been cancelled: the outcome is still taken, never left unseen
    if not future.cancelled():
        future.exception()


class SharedReads(Generic[K, V]):
    """``await get(key)``: ``read(key)`` once; callers asking while it is under way await the
    same read. A failed read is forgotten (the next caller reads again); the memory is
    cleared past ``limit`` keys."""

    def __init__(self, read: Callable[[K], Awaitable[V]], *, limit: int = 10_000) -> None:
        self._read = read
        self._limit = limit
        self._values: dict[K, asyncio.Future[V]] = {}

    async def get(self, key: K) -> V:
        found = self._values.get(key)
        if found is None:
            if len(self._values) >= self._limit:
                self._values.clear()
            found = asyncio.ensure_future(self._read(key))
            found.add_done_callback(_retrieved)
            self._values[key] = found
        try:
            return await asyncio.shield(found)  # a cancelled caller leaves the read to others
        except Exception:
            if self._values.get(key) is found:
                del self._values[key]
            raise
