"""Job-completion notices over Redis pub/sub: workers publish a job id when they finish it;
the API's waiters wake up at once instead of polling the database."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from judge.redis_client import redis_client
from judge.runtime.in_process import JobWaiter

log = logging.getLogger(__name__)
CHANNEL = "judge:jobs:done"


class RedisNotifier:
    def __init__(self, redis_url: str, waiter: JobWaiter) -> None:
        self._redis: Any = redis_client(redis_url)
        self._waiter = waiter
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._listen())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._redis.aclose()

    async def ping(self) -> None:
        await asyncio.wait_for(self._redis.ping(), timeout=3)

    async def _listen(self) -> None:
        while True:
            try:
                async with self._redis.pubsub() as pubsub:
                    await pubsub.subscribe(CHANNEL)
                    async for message in pubsub.listen():
                        if message.get("type") == "message":
                            data = message["data"]
                            self._waiter.notify(data.decode() if isinstance(data, bytes) else data)
            except asyncio.CancelledError:
                raise
            except Exception:  # Redis went away: the waiter's shared check covers the gap
                log.warning("lost the Redis subscription; reconnecting", exc_info=True)
                await asyncio.sleep(1.0)


async def publish_done(client: Any, job_id: str) -> None:
    try:
        await client.publish(CHANNEL, job_id)
    except Exception:  # a lost notice only delays a waiter until the shared check
        log.warning("could not publish completion of job %s", job_id, exc_info=True)
