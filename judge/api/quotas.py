"""Per-key request rates, queued-item quotas, the global queue depth and ``?wait=`` waiter
slots. Every refusal is a 429 problem with ``Retry-After``.

Rates are counted with the ``limits`` library (moving window) in this process's memory: with
several API processes each enforces the limit on its own share of the traffic. Queue counts
come from the database at submission; two submissions racing may both pass (a soft quota).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from limits import RateLimitItem, parse_many
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter

from judge.api.problems import ProblemError
from judge.runtime.composition import ServiceRuntime
from judge.settings import ApiSettings

#: how long a caller refused for a full queue is asked to wait
QUEUE_RETRY_AFTER_S = 30


def too_many(detail: str, retry_after_s: float, **extra: Any) -> ProblemError:
    return ProblemError(429, detail, retry_after=max(1, math.ceil(retry_after_s)), **extra)


@dataclass
class Quotas:
    settings: ApiSettings
    runtime: ServiceRuntime
    _rates: list[RateLimitItem] = field(init=False)
    _failure_rates: list[RateLimitItem] = field(init=False)
    _limiter: MovingWindowRateLimiter = field(init=False)
    _waiting: Counter[str | None] = field(default_factory=Counter)
    _aggregations: int = 0

    def __post_init__(self) -> None:
        self._rates = parse_many(self.settings.rate_limit)
        self._failure_rates = parse_many(self.settings.auth_failure_limit)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    async def check_rate(self, key_id: str) -> None:
        """One request of ``key_id``; 429 when one of the configured rates is exceeded."""
        for rate in self._rates:
            if not await self._limiter.hit(rate, "key", key_id):
                raise await self._over(rate, "key", key_id, "of this API key")

    async def check_auth_failures(self, client: str) -> None:
        """Before a key is looked up: 429 when ``client`` (an address) failed authentication
        more often than ``api.auth_failure_limit`` allows (no lookup, no cache entry)."""
        for rate in self._failure_rates:
            if not await self._limiter.test(rate, "auth-failure", client):
                raise await self._over(rate, "auth-failure", client, "of failed authentications")

    async def auth_failed(self, client: str) -> None:
        for rate in self._failure_rates:
            await self._limiter.hit(rate, "auth-failure", client)

    async def _over(self, rate: RateLimitItem, kind: str, who: str, what: str) -> ProblemError:
        stats = await self._limiter.get_window_stats(rate, kind, who)
        wait = stats.reset_time - time.time()
        return too_many(f"rate limit {rate} {what} exceeded", wait, limit=str(rate))

    async def check_queue(self, owner: str | None, items: int) -> None:
        """Room for ``items`` more: in the owner's quota of unfinished items, and in the
        global queue."""
        depth, mine = await self.runtime.jobs.queue_counts(owner)
        self.admit(depth, mine, items)

    def admit(self, depth: int, mine: int, items: int) -> None:
        """:meth:`check_queue` on counts already read (``depth`` queued items in all, ``mine``
        unfinished items of the owner), e.g. in the session that then stores the items."""
        cap = self.settings.max_queue_depth
        if depth + items > cap:
            raise too_many(
                f"the queue is full ({depth} items queued, at most {cap}); retry later",
                QUEUE_RETRY_AFTER_S,
                field="items",
            )
        quota = self.settings.max_queued_per_key
        if mine + items > quota:
            raise too_many(
                f"this API key has {mine} unfinished items; at most {quota} may be queued",
                QUEUE_RETRY_AFTER_S,
                field="items",
            )

    @contextlib.asynccontextmanager
    async def aggregation_slot(self) -> AsyncIterator[None]:
        """One of ``api.max_aggregations`` concurrent aggregation comparisons (429 beyond)."""
        cap = self.settings.max_aggregations
        if self._aggregations >= cap:
            raise too_many(
                f"{cap} aggregation comparisons are already running; retry later",
                5,
                field="query",
            )
        self._aggregations += 1
        try:
            yield
        finally:
            self._aggregations -= 1

    @contextlib.asynccontextmanager
    async def waiter(self, owner: str | None) -> AsyncIterator[None]:
        """A slot for one ``?wait=`` request (429 when none is free)."""
        total = sum(self._waiting.values())
        if total >= self.settings.max_waiters:
            raise too_many(
                f"{total} requests are already waiting for results; retry without ?wait= "
                "and poll the Location",
                1,
                field="query.wait",
            )
        if self._waiting[owner] >= self.settings.max_waiters_per_key:
            raise too_many(
                f"this API key already has {self._waiting[owner]} requests waiting; retry "
                "without ?wait= and poll the Location",
                1,
                field="query.wait",
            )
        self._waiting[owner] += 1
        try:
            yield
        finally:
            self._waiting[owner] -= 1
            if not self._waiting[owner]:
                del self._waiting[owner]
