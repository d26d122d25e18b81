"""Per-model concurrency and rate limits around any :class:`ChatClient`.

With Redis configured the limits are shared by every process (API and all workers): a
concurrency slot is a member of a sorted set scored by its expiry, so a crashed process's
slots lapse by themselves; the rate limit is a sliding one-minute window of request stamps.
Without Redis the same limits hold within the process (asyncio primitives).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Protocol

from judge.llm.client import ChatClient, ChatRequest, ChatResult

_ACQUIRE = """
local key, now, expiry, limit, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]),
    tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if redis.call('ZCARD', key) < limit then
  redis.call('ZADD', key, expiry, member)
  redis.call('PEXPIRE', key, math.ceil((expiry - now) * 1000) + 1000)
  return 1
end
return 0
"""
_RATE = """
local key, now, window, limit, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]),
    tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if redis.call('ZCARD', key) < limit then
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, math.ceil(window * 1000) + 1000)
  return 0
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return tostring(tonumber(oldest[2]) + window - now)
"""
_SLOT_TTL_S = 300.0
_POLL_S = 0.02


class ModelLimit(Protocol):
    """One model's limits (``limits:`` in the configuration); None = no limit."""

    @property
    def max_concurrency(self) -> int | None: ...

    @property
    def requests_per_minute(self) -> int | None: ...


class ModelLimiter:
    def __init__(self, limits: Mapping[str, ModelLimit], redis_url: str | None = None) -> None:
        self._limits = dict(limits)
        self._redis: Any = None
        if redis_url and limits:
            from judge.redis_client import redis_client

            self._redis = redis_client(redis_url)
        self._local_sems: dict[str, asyncio.Semaphore] = {}
        self._local_stamps: dict[str, deque[float]] = {}

    async def close(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()

    @asynccontextmanager
    async def slot(self, model: str) -> AsyncIterator[None]:
        limit = self._limits.get(model)
        if limit is None:
            yield
            return
        if limit.requests_per_minute:
            await self._rate(model, limit.requests_per_minute)
        if not limit.max_concurrency:
            yield
            return
        if self._redis is None:
            sem = self._local_sems.setdefault(model, asyncio.Semaphore(limit.max_concurrency))
            async with sem:
                yield
            return
        key, member = f"judge:limit:conc:{model}", uuid.uuid4().hex
        while not await self._redis.eval(
            _ACQUIRE, 1, key, time.time(), time.time() + _SLOT_TTL_S, limit.max_concurrency, member
        ):
            await asyncio.sleep(_POLL_S)
        try:
            yield
        finally:
            await self._redis.zrem(key, member)

    async def _rate(self, model: str, per_minute: int) -> None:
        if self._redis is None:
            stamps = self._local_stamps.setdefault(model, deque())
            while True:
                now = time.monotonic()
                while stamps and stamps[0] <= now - 60:
                    stamps.popleft()
                if len(stamps) < per_minute:
                    stamps.append(now)
                    return
                await asyncio.sleep(stamps[0] + 60 - now)
        key = f"judge:limit:rpm:{model}"
        while True:
            wait = await self._redis.eval(
                _RATE, 1, key, time.time(), 60, per_minute, uuid.uuid4().hex
            )
            if not float(wait):
                return
            await asyncio.sleep(max(float(wait), _POLL_S))


class LimitedClient:
    def __init__(self, inner: ChatClient, limiter: ModelLimiter) -> None:
        self._inner = inner
        self._limiter = limiter

    async def complete(self, request: ChatRequest) -> ChatResult:
        async with self._limiter.slot(request.model):
            return await self._inner.complete(request)
