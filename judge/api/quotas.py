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
    _limiter: MovingWindowRateLimiter = field(init=False)
    _waiting: Counter[str | None] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._rates = parse_many(self.settings.rate_limit)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    async def check_rate(self, key_id: str) -> None:
        """One request of ``key_id``; 429 when one of the configured rates is exceeded."""
        for rate in self._rates:
            if not await self._limiter.hit(rate, "key", key_id):
                stats = await self._limiter.get_window_stats(rate, "key", key_id)
                wait = stats.reset_time - time.time()
                raise too_many(f"rate limit {rate} of this API key exceeded", wait, limit=str(rate))

    async def check_queue(self, owner: str | None, items: int) -> None:
        """Room for ``items`` more: in the owner's quota of unfinished items, and in the
        global queue."""
        depth, mine = await self.runtime.jobs.queue_counts(owner)
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
