"""The baselines: a plain LiteLLM ``asyncio.gather`` script making the same calls as the service,
and (``--client raw``) the same requests as bare HTTP posts, the machine's ceiling.

Each item's prompt is rendered exactly as the judges see it (``judge.llm.prompts.build_messages``
and the rubric's ``response_format``), then one ``litellm.acompletion`` per judge, concurrently,
with at most ``--concurrency`` items in flight (the service's items-in-flight setting). No
persistence, no cache, no retries, no aggregation: the rate a bare script reaches on this machine.

Run alone::

    uv run python -m judge.bench.baseline --items 200 --latency-ms 200 --concurrency 64

(starts its own simulator) or against a running one with ``--api-base http://HOST:PORT/v1``
and the exact items with ``--items-file FILE.jsonl``. Prints one JSON object.
"""

from __future__ import annotations

from judge._offline import configure_offline_env

configure_offline_env()

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Awaitable, Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from judge.bench.profiles import PANEL_MODELS  # noqa: E402
from judge.bench.workload import read_jsonl, synthetic_items  # noqa: E402
from judge.domain.item import parse_item  # noqa: E402
from judge.domain.judgment_schema import judgment_schema, response_format  # noqa: E402
from judge.domain.rubric import Rubric  # noqa: E402
from judge.llm.prompts import build_messages  # noqa: E402

Messages = list[dict[str, str]]


def render(rubric: Rubric, raw: Any) -> tuple[Messages, dict[str, Any]]:
    """The messages and response_format a judge of the panel receives for ``raw``."""
    item = parse_item(raw)
    dimensions = list(rubric.dimensions)
    participants = tuple(p.id for p in item.clients)
    fmt = response_format(judgment_schema(rubric, dimensions, participants))
    return build_messages(rubric, item, dimensions), fmt


async def run_baseline(
    *,
    api_base: str,
    rubric: Rubric,
    items: Sequence[Any],
    concurrency: int,
    models: Sequence[str] = PANEL_MODELS,
    api_key: str = "simulator",
    warmup: int = 3,
    before_start: Callable[[], None] | None = None,
    client: str = "litellm",
) -> dict[str, Any]:
    """Warm up (a few calls), call ``before_start`` (in a thread), then run and measure.
    ``client``: ``litellm`` (``litellm.acompletion``) or ``raw`` (one shared
    ``httpx.AsyncClient`` posting the chat-completions body: no SDK, the HTTP ceiling)."""
    gate = asyncio.Semaphore(concurrency)
    counts = {"calls": 0, "errors": 0, "unparsed": 0, "prompt_tokens": 0}
    if client == "raw":
        call, close = _raw_caller(api_base, api_key, counts)
    else:
        call, close = _litellm_caller(api_base, api_key, counts)

    async def one(raw: Any) -> None:
        async with gate:
            messages, fmt = render(rubric, raw)
            await asyncio.gather(*(call(m, messages, fmt) for m in models))

    for raw in synthetic_items(warmup, tag=f"baseline-warmup-{client}"):
        await one(raw)
    counts.update(calls=0, errors=0, unparsed=0, prompt_tokens=0)
    if before_start is not None:
        await asyncio.to_thread(before_start)
    cpu_before = time.process_time()
    started = time.perf_counter()
    await asyncio.gather(*(one(raw) for raw in items))
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu_before
    await close()
    return {
        "client": client,
        "items": len(items),
        "concurrency": concurrency,
        "judges": len(models),
        "seconds": round(seconds, 3),
        "items_per_s": round(len(items) / seconds, 2),
        "llm_calls": counts["calls"],
        "llm_errors": counts["errors"],
        "unparsed_replies": counts["unparsed"],
        "prompt_tokens_per_item": round(counts["prompt_tokens"] / max(1, len(items)), 1),
        "cpu_seconds": round(cpu, 2),
        "cpu_ms_per_call": round(cpu * 1000 / max(1, counts["calls"]), 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


Caller = Callable[[str, Messages, dict[str, Any]], Awaitable[None]]
Closer = Callable[[], Awaitable[None]]


async def _nothing_to_close() -> None:
    return None


def _raw_caller(api_base: str, api_key: str, counts: dict[str, int]) -> tuple[Caller, Closer]:
    """Bare HTTP posts on one aiohttp session (LiteLLM's own transport; httpx's connection
    pool costs far more CPU at a few hundred concurrent requests, so it would understate the
    ceiling)."""
    import aiohttp

    session: aiohttp.ClientSession | None = None
    url = f"{api_base.rstrip('/')}/chat/completions"
    headers = {"authorization": f"Bearer {api_key}"}

    async def call(model: str, messages: Messages, fmt: dict[str, Any]) -> None:
        nonlocal session
        if session is None:  # created on the running loop
            session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                timeout=aiohttp.ClientTimeout(total=60),
            )
        counts["calls"] += 1
        body = {
            "model": model.split("/", 1)[-1],
            "messages": messages,
            "response_format": fmt,
            "temperature": 0,
        }
        try:
            async with session.post(url, json=body, headers=headers) as response:
                response.raise_for_status()
                data = await response.json()
        except (aiohttp.ClientError, ValueError):
            counts["errors"] += 1
            return
        counts["prompt_tokens"] += int((data.get("usage") or {}).get("prompt_tokens") or 0)
        try:
            json.loads(data["choices"][0]["message"]["content"] or "")
        except (ValueError, KeyError, IndexError, TypeError):
            counts["unparsed"] += 1

    async def close() -> None:
        if session is not None:
            await session.close()

    return call, close


def _litellm_caller(api_base: str, api_key: str, counts: dict[str, int]) -> tuple[Caller, Closer]:
    import litellm

    litellm.suppress_debug_info = True

    async def call(model: str, messages: Messages, fmt: dict[str, Any]) -> None:
        counts["calls"] += 1
        try:
            response = await litellm.acompletion(
                model=model,
                messages=messages,
                response_format=fmt,
                temperature=0,
                api_base=api_base,
                api_key=api_key,
                timeout=60,
            )
        except Exception:
            counts["errors"] += 1
            return
        counts["prompt_tokens"] += int(getattr(response.usage, "prompt_tokens", 0) or 0)
        try:
            json.loads(response.choices[0].message.content or "")
        except ValueError:
            counts["unparsed"] += 1

    return call, _nothing_to_close


def _wait_for_go() -> None:
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m judge.bench.baseline", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--api-base", help="a running simulator (…/v1); default: start one")
    parser.add_argument("--items-file", type=Path, help="JSON Lines items (default: synthetic)")
    parser.add_argument("--items", type=int, default=200, help="synthetic items (default 200)")
    parser.add_argument("--latency-ms", type=float, default=200.0, help="for a started simulator")
    parser.add_argument("--concurrency", type=int, default=64, help="items in flight")
    parser.add_argument("--rubric", default="epitome")
    parser.add_argument(
        "--client",
        choices=("litellm", "raw"),
        default="litellm",
        help="litellm.acompletion, or raw HTTP posts (the machine's ceiling)",
    )
    parser.add_argument(
        "--wait-for-go",
        action="store_true",
        help="after warming up, print 'ready' and wait for a line on stdin (used by judge bench)",
    )
    args = parser.parse_args(argv)

    from judge.rubrics import RubricRegistry
    from judge.simulator import SimulatorOptions, SimulatorProcess

    rubric = RubricRegistry.from_directory(None).get(args.rubric)
    if args.items_file:
        items = read_jsonl(args.items_file.read_bytes())
    else:
        items = synthetic_items(args.items, tag="baseline")
    simulator = None
    api_base = args.api_base
    if api_base is None:
        simulator = SimulatorProcess(
            SimulatorOptions(latency_ms=args.latency_ms, jitter_ms=0)
        ).start()
        api_base = simulator.base_url
    try:
        result = asyncio.run(
            run_baseline(
                api_base=api_base,
                rubric=rubric,
                items=items,
                concurrency=args.concurrency,
                before_start=_wait_for_go if args.wait_for_go else None,
                client=args.client,
            )
        )
    finally:
        if simulator is not None:
            simulator.stop()
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
