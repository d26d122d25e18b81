"""The simulator's own HTTP cost: requests/s and server CPU per request, per wire format.

``python -m judge.bench.simulator_load [--wrk]`` starts a simulator process and measures, for
each wire format (OpenAI chat completions, Anthropic Messages, Gemini generateContent):

- ``burst``: wall time for N concurrent requests at the simulator's latency (default 1,000 at
  200 ms), each on its own connection (raw asyncio streams);
- ``rate``: requests/s at zero latency with ``wrk`` (Debian package) when ``--wrk`` is given
  and it is installed, else from the httpx client;
- server CPU per request (user + system time of the simulator process, from psutil).

Used to decide issue 13's "framework router or hand-written one" for the simulator; the numbers
are in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil

from judge.domain.item import parse_item
from judge.domain.judgment_schema import judgment_schema
from judge.domain.render import render_conversation
from judge.rubrics import RubricRegistry
from judge.simulator import SimulatorOptions, SimulatorProcess

ITEM = {"seeker_post": "I failed my exam again.", "response": "That sounds hard. What happened?"}


#: Headers each provider's API requires (beyond the content type).
HEADERS = {
    "openai": {"Authorization": "Bearer sim"},
    "anthropic": {"x-api-key": "sim", "anthropic-version": "2023-06-01"},
    "gemini": {"x-goog-api-key": "sim"},
}


def _bodies() -> dict[str, tuple[str, dict[str, Any]]]:
    """Path (under the simulator's root) and body of one judge call per wire format, as
    LiteLLM sends them for the epitome rubric."""
    rubric = RubricRegistry.from_directory().get("epitome")
    schema = judgment_schema(rubric, list(rubric.dimensions), ())
    text = render_conversation(parse_item(ITEM), rubric.unit)
    system = "You rate empathy in peer-support replies (EPITOME)."
    return {
        "openai": (
            "/v1/chat/completions",
            {
                "model": "accurate",
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": text},
                ],
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "judgment", "strict": True, "schema": schema},
                },
            },
        ),
        "anthropic": (
            "/v1/messages",
            {
                "model": "accurate",
                "system": [{"type": "text", "text": system}],
                "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
                "tools": [{"name": "json_tool_call", "input_schema": schema}],
                "tool_choice": {"type": "tool", "name": "json_tool_call"},
                "max_tokens": 4096,
            },
        ),
        "gemini": (
            "/v1beta/models/accurate:generateContent",
            {
                "system_instruction": {"parts": [{"text": system}]},
                "contents": [{"role": "user", "parts": [{"text": text}]}],
                "generationConfig": {
                    "response_mime_type": "application/json",
                    "response_json_schema": schema,
                },
            },
        ),
    }


def _cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return float(times.user + times.system)


async def _raw_post(
    host: str, port: int, path: str, payload: bytes, headers: dict[str, str]
) -> int:
    """One HTTP/1.1 POST on its own connection; the status code. Raw asyncio streams: httpx's
    pool spends seconds opening a thousand connections at once, which is the client's cost,
    not the server's."""
    reader, writer = await asyncio.open_connection(host, port)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        + "\r\n"
    )
    writer.write(head.encode() + payload)
    await writer.drain()
    status = await reader.readline()
    await reader.read()
    writer.close()
    return int(status.split()[1])


async def _burst(
    url: str, body: dict[str, Any], n: int, headers: dict[str, str]
) -> tuple[float, int]:
    parsed = httpx.URL(url)
    payload = json.dumps(body).encode()
    host, port, path = parsed.host, parsed.port or 80, parsed.raw_path.decode()
    started = time.perf_counter()
    codes = await asyncio.gather(*(_raw_post(host, port, path, payload, headers) for _ in range(n)))
    return time.perf_counter() - started, sum(1 for c in codes if c == 200)


def _wrk(
    url: str, body: dict[str, Any], headers: dict[str, str], seconds: int, connections: int
) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "post.lua"
        payload = json.dumps(body).replace("\\", "\\\\").replace("'", "\\'")
        script.write_text(
            "wrk.method = 'POST'\n"
            "wrk.headers['Content-Type'] = 'application/json'\n"
            + "".join(f"wrk.headers['{k}'] = '{v}'\n" for k, v in headers.items())
            + f"wrk.body = '{payload}'\n",
            encoding="utf-8",
        )
        done = subprocess.run(
            ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "-s", str(script), url],
            capture_output=True,
            text=True,
            check=True,
        )
    for line in done.stdout.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split()[1])
    raise RuntimeError(f"wrk printed no rate:\n{done.stdout}\n{done.stderr}")


def _measure(sim: SimulatorProcess, run: Callable[[], tuple[float, int]]) -> dict[str, float]:
    proc = psutil.Process(sim.pid)
    before = _cpu(proc)
    seconds, requests = run()
    cpu = _cpu(proc) - before
    return {
        "seconds": round(seconds, 3),
        "requests": requests,
        "requests_per_s": round(requests / seconds, 1),
        "server_cpu_us_per_request": round(cpu * 1e6 / max(1, requests), 1),
    }


def _one_format(
    sim: SimulatorProcess, fmt: str, latency: float, args: Any
) -> tuple[str, dict[str, float]]:
    path, body = _bodies()[fmt]
    headers = HEADERS[fmt]
    url = f"{sim.root_url}{path}"
    asyncio.run(_burst(url, body, 50, headers))  # warm-up
    if latency > 0:
        n = args.burst
        return f"burst_{n}_at_{latency:g}ms", _measure(
            sim, lambda: asyncio.run(_burst(url, body, n, headers))
        )
    if args.wrk and shutil.which("wrk") is not None:

        def wrk_run() -> tuple[float, int]:
            rate = _wrk(url, body, headers, args.seconds, 32)
            return float(args.seconds), int(rate * args.seconds)

        return "rate_wrk_c32", _measure(sim, wrk_run)
    return "rate_httpx_c32", _measure(
        sim, lambda: asyncio.run(_rate(url, body, headers, args.rate_requests, 32))
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--burst", type=int, default=1000, help="concurrent requests")
    parser.add_argument("--latency-ms", type=float, default=200.0, help="for the burst")
    parser.add_argument("--rate-requests", type=int, default=3000, help="httpx rate run size")
    parser.add_argument("--wrk", action="store_true", help="measure the rate with wrk")
    parser.add_argument("--seconds", type=int, default=8, help="wrk duration")
    parser.add_argument("--formats", default="openai,anthropic,gemini")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    for latency in (args.latency_ms, 0.0):
        with SimulatorProcess(SimulatorOptions(latency_ms=latency, jitter_ms=0)) as sim:
            for fmt in args.formats.split(","):
                key, numbers = _one_format(sim, fmt, latency, args)
                results.setdefault(fmt, {})[key] = numbers
    sys.stdout.write(json.dumps(results, indent=2) + "\n")


async def _rate(
    url: str, body: dict[str, Any], headers: dict[str, str], n: int, connections: int
) -> tuple[float, int]:
    """``n`` requests over ``connections`` keep-alive connections, as fast as they go."""
    ok = 0
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(i)
    limits = httpx.Limits(max_connections=connections)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def worker() -> None:
            nonlocal ok
            while not queue.empty():
                queue.get_nowait()
                if (await client.post(url, json=body, headers=headers)).status_code == 200:
                    ok += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        return time.perf_counter() - started, ok


if __name__ == "__main__":
    main()
