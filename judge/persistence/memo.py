"""Answers remembered for a few seconds (or, with ``ttl_s=math.inf``, for good: values that
never change, such as a batch's mode or kind), each loaded once however many ask at the same
time.

Without the single flight, every item in flight missed together when an answer expired (64
items, 64 identical queries: about 1.7 lookups per item over a 1,000-item batch, cProfile);
the jobs of a round start and finish together, so each read the same batch row (25 reads for
a 24-job batch run together; one with the memo).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


def _retrieved(future: asyncio.Future[Any]) -> None:
    # its awaiters may all have been cancelled: the outcome is still taken, never left unseen
    if not future.cancelled():
        future.exception()


class TtlMemo(Generic[Key, Value]):
    """``get(key, load)``: the remembered answer while younger than ``ttl_s``, else one
    ``load()`` shared by every caller waiting for it; a failed load is not remembered.
    :meth:`forget` drops all answers, and a load already under way when it is called is not
    remembered. With ``limit``, the answers are cleared when that many are remembered."""

    def __init__(self, ttl_s: float, *, limit: int | None = None) -> None:
        self._ttl = ttl_s
        self._limit = limit
        self._answers: dict[Key, tuple[float, Value]] = {}
        self._loading: dict[Key, asyncio.Future[Value]] = {}
        self._generation = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def forget(self) -> None:
        self._answers.clear()
        self._loading.clear()
        self._generation += 1

    async def get(self, key: Key, load: Callable[[], Awaitable[Value]]) -> Value:
        now = time.monotonic()
        hit = self._answers.get(key)
        if hit is not None and now - hit[0] < self._ttl:
            return hit[1]
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop: loads of the old one are not shared
            self._loop, self._loading = loop, {}
        loading = self._loading.get(key)
        if loading is None:
            loading = loop.create_task(self._load(key, load, self._generation))
            loading.add_done_callback(_retrieved)
            self._loading[key] = loading
        return await asyncio.shield(loading)

    async def _load(self, key: Key, load: Callable[[], Awaitable[Value]], generation: int) -> Value:
        started = time.monotonic()
        try:
            value = await load()
        finally:
            if generation == self._generation:
                self._loading.pop(key, None)
        if generation == self._generation:
            if self._limit is not None and len(self._answers) >= self._limit:
                self._answers.clear()
            self._answers[key] = (started, value)
        return value
