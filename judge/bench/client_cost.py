"""Client CPU per chat-completion call, by HTTP client, against the simulator.

``python -m judge.bench.client_cost [--calls N] [--rounds R]`` starts a simulator (100 ms, no
jitter, no faults) and sends the same rendered EPITOME prompt with its JSON-schema
``response_format``, 64 in flight, through:

- ``direct``: the service's direct path (:class:`judge.llm.openai_client.OpenAIClient`, retry
  layer and reply classification included);
- ``openai-sdk``: the official ``openai`` SDK on its default httpx transport, as the direct
  path used before;
- ``aiohttp``: the bench's raw HTTP ceiling caller (bare posts on one aiohttp session, the
  reply's JSON parsed: :func:`judge.bench.baseline._raw_caller`), the floor.

It prints calls/s and this process's CPU time per call. Used to choose the direct path's HTTP
client (issue 14); the numbers are in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import SecretStr

from judge.bench.baseline import _raw_caller, render
from judge.bench.simulator_load import ITEM
from judge.llm.client import ChatRequest
from judge.llm.openai_client import OpenAIClient
from judge.rubrics import RubricRegistry
from judge.simulator import SimulatorOptions, SimulatorProcess

IN_FLIGHT = 64
Call = Callable[[], Awaitable[None]]


def _prompt() -> tuple[list[dict[str, str]], dict[str, Any]]:
    """The messages and response_format a judge of the panel receives for one EPITOME item."""
    return render(RubricRegistry.from_directory().get("epitome"), ITEM)


async def _callers(base_url: str) -> tuple[dict[str, Call], Callable[[], Awaitable[None]]]:
    from openai import AsyncOpenAI

    messages, fmt = _prompt()
    direct = OpenAIClient()
    request = ChatRequest(
        model="openai/accurate",
        messages=messages,
        response_format=fmt,
        api_base=base_url,
        api_key=SecretStr("bench"),
        params={"temperature": 0},
    )
    sdk = AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    raw_counts = {"calls": 0, "errors": 0, "unparsed": 0, "prompt_tokens": 0}
    raw_call, raw_close = _raw_caller(base_url, "bench", raw_counts)
    body: dict[str, Any] = {"model": "accurate", "messages": messages, "response_format": fmt}

    async def via_direct() -> None:
        result = await direct.complete(request)
        assert result.ok, result.error

    async def via_sdk() -> None:
        await sdk.chat.completions.create(**body, timeout=60)

    async def via_aiohttp() -> None:
        await raw_call("openai/accurate", messages, fmt)
        assert not raw_counts["errors"], raw_counts

    async def close() -> None:
        await direct.aclose()
        await sdk.close()
        await raw_close()

    return {"direct": via_direct, "openai-sdk": via_sdk, "aiohttp": via_aiohttp}, close


async def _measure(call: Call, calls: int) -> tuple[float, float]:
    """(calls per second, CPU ms per call) for ``calls`` calls, IN_FLIGHT at a time."""
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one() -> None:
        async with gate:
            await call()

    await asyncio.gather(*(one() for _ in range(IN_FLIGHT)))  # connections opened, warm
    cpu, start = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(calls)))
    return calls / (time.perf_counter() - start), (time.process_time() - cpu) / calls * 1000


async def _run(calls: int, rounds: int) -> None:
    options = SimulatorOptions(latency_ms=100, jitter_ms=0, flaky_rate=0, malformed_rate=0)
    simulator = SimulatorProcess(options).start()
    try:
        callers, close = await _callers(simulator.base_url)
        try:
            for round_no in range(1, rounds + 1):
                for name, call in callers.items():
                    rate, cpu_ms = await _measure(call, calls)
                    line = (
                        f"round {round_no} {name:10s} {rate:7.0f} calls/s {cpu_ms:6.3f} ms CPU/call"
                    )
                    sys.stdout.write(line + "\n")
        finally:
            await close()
    finally:
        simulator.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    asyncio.run(_run(args.calls, args.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
