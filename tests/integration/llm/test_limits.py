"""Per-model limits hold across processes: two limiters sharing one Redis (as two workers
would) never exceed the concurrency limit together, and the rate limit spaces requests."""

from __future__ import annotations

import asyncio

import pytest

from judge.llm.limits import ModelLimiter
from judge.settings import ModelLimit

pytestmark = pytest.mark.integration


async def _peak_in_flight(limiters: list[ModelLimiter], model: str, calls: int) -> int:
    in_flight = peak = 0

    async def one(limiter: ModelLimiter) -> None:
        nonlocal in_flight, peak
        async with limiter.slot(model):
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.05)
            in_flight -= 1

    await asyncio.gather(*(one(limiters[n % len(limiters)]) for n in range(calls)))
    return peak


def test_concurrency_limit_is_shared_through_redis(redis_url: str) -> None:
    async def run() -> int:
        limits = {"openai/limited": ModelLimit(max_concurrency=2)}
        first, second = ModelLimiter(limits, redis_url), ModelLimiter(limits, redis_url)
        try:
            return await _peak_in_flight([first, second], "openai/limited", 12)
        finally:
            await first.close()
            await second.close()

    assert asyncio.run(run()) == 2


def test_without_redis_the_limit_holds_in_the_process() -> None:
    async def run() -> tuple[int, int]:
        limiter = ModelLimiter({"openai/limited": ModelLimit(max_concurrency=3)}, None)
        limited = await _peak_in_flight([limiter], "openai/limited", 12)
        free = await _peak_in_flight([limiter], "openai/other", 12)
        return limited, free

    assert asyncio.run(run()) == (3, 12)


def test_requests_per_minute_is_shared_through_redis(redis_url: str) -> None:
    async def run() -> bool:
        limits = {"openai/rpm": ModelLimit(requests_per_minute=4)}
        first, second = ModelLimiter(limits, redis_url), ModelLimiter(limits, redis_url)
        try:
            for limiter in (first, second, first, second):  # four fit in the minute
                await asyncio.wait_for(_enter(limiter, "openai/rpm"), timeout=30)
            fifth = asyncio.ensure_future(_enter(second, "openai/rpm"))
            await asyncio.sleep(0.5)
            held_back = not fifth.done()
            fifth.cancel()
            return held_back
        finally:
            await first.close()
            await second.close()

    assert asyncio.run(run()), "a fifth request within the minute was let through"


async def _enter(limiter: ModelLimiter, model: str) -> None:
    async with limiter.slot(model):
        pass
