"""One way to make asyncio Redis clients: with retries, so a restarted Redis does not fail
the first command on every pooled connection (``from_url`` clients do not retry at all)."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff


def redis_client(redis_url: str) -> Any:
    return aioredis.from_url(
        redis_url, retry=Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), retries=3)
    )
