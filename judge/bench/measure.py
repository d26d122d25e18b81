"""The measuring client: single items with ``?wait=``, batches (JSON Lines upload, progress
polls), each bundled rubric's expert examples, and the simulator's own floor. LLM calls and
tokens are counted by the simulator (``GET /_simulator/stats``), never taken from the service."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from judge.bench.procs import BenchError
from judge.simulator import SimulatorProcess

NDJSON = {"content-type": "application/x-ndjson"}


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def _r(value: float, digits: int = 2) -> float:
    return round(value, digits)


@dataclass(frozen=True)
class SimCounts:
    calls: int
    errors: int
    prompt_tokens: int
    completion_tokens: int

    @classmethod
    def read(cls, sim: SimulatorProcess) -> SimCounts:
        models = sim.stats()["models"].values()
        return cls(
            calls=sum(m["calls"] for m in models),
            errors=sum(sum(m["errors"].values()) for m in models),
            prompt_tokens=sum(m["prompt_tokens"] for m in models),
            completion_tokens=sum(m["completion_tokens"] for m in models),
        )

    def __sub__(self, other: SimCounts) -> SimCounts:
        return SimCounts(
            self.calls - other.calls,
            self.errors - other.errors,
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
        )


def _check(response: httpx.Response, what: str) -> dict[str, Any]:
    if response.status_code >= 400:
        raise BenchError(f"{what}: HTTP {response.status_code}: {response.text[:500]}")
    data: dict[str, Any] = response.json()
    return data


def score_one(client: httpx.Client, rubric: str, item: Any, wait_s: float) -> dict[str, Any]:
    response = client.post(
        "/v1/scores", params={"wait": wait_s}, json={"rubric": rubric, "item": item}
    )
    body = _check(response, "POST /v1/scores")
    if body.get("status") != "completed":
        raise BenchError(f"a single item did not complete within {wait_s:g} s: {body}")
    return body


def single_items(
    client: httpx.Client, rubric: str, items: Sequence[Any], latency_ms: float
) -> dict[str, Any]:
    """Score ``items`` one after another with ``?wait=``; overhead = end to end - latency."""
    e2e: list[float] = []
    scoring: list[float] = []
    slowest_call: list[float] = []
    for item in items:
        started = time.perf_counter()
        body = score_one(client, rubric, item, wait_s=60)
        e2e.append((time.perf_counter() - started) * 1000)
        scoring.append(float(body["timings_ms"]["total"]))
        timings = body["timings_ms"]
        slowest_call.append(max(float(v) for k, v in timings.items() if k.startswith("judge:")))
    overhead = [v - latency_ms for v in e2e]
    outside = [a - b for a, b in zip(e2e, scoring, strict=True)]
    adapter = [v - latency_ms for v in slowest_call]
    return {
        "samples": len(e2e),
        "e2e_p50_ms": _r(percentile(e2e, 50)),
        "overhead_p50_ms": _r(percentile(overhead, 50)),
        "overhead_p95_ms": _r(percentile(overhead, 95)),
        "overhead_max_ms": _r(max(overhead)),
        "overhead_ms": [_r(v, 1) for v in overhead],
        # where the overhead goes (p50 of each part): the slowest judge's LLM time as the
        # adapter measured it, minus the simulator's latency; the rest of scoring (cache
        # lookups, rendering, aggregation); everything outside scoring (HTTP, persistence,
        # dispatch, queue, waiting for the completion notice)
        "breakdown_p50_ms": {
            "adapter_slowest_call": _r(percentile(adapter, 50)),
            "panel_after_calls": _r(
                percentile([s - c for s, c in zip(scoring, slowest_call, strict=True)], 50)
            ),
            "outside_scoring": _r(percentile(outside, 50)),
        },
    }


def run_batch(
    client: httpx.Client,
    sim: SimulatorProcess,
    rubric: str,
    jsonl: bytes,
    *,
    poll_s: float,
    timeout_s: float,
) -> dict[str, Any]:
    """Upload a JSON Lines batch and poll its progress until done; each poll also asks
    ``/health``, and both are timed (is the API responsive while the batch runs?)."""
    before = SimCounts.read(sim)
    polls: list[float] = []
    healths: list[float] = []
    started = time.perf_counter()
    status = _check(
        client.post("/v1/batches", params={"rubric": rubric}, content=jsonl, headers=NDJSON),
        "POST /v1/batches",
    )
    submit_s = time.perf_counter() - started
    batch_id = status["id"]
    while status["status"] != "completed":
        if time.perf_counter() - started > timeout_s:
            raise BenchError(f"batch {batch_id} not done after {timeout_s:g} s: {status}")
        time.sleep(poll_s)
        asked = time.perf_counter()
        _check(client.get("/health"), "GET /health")
        healths.append((time.perf_counter() - asked) * 1000)
        asked = time.perf_counter()
        status = _check(client.get(f"/v1/batches/{batch_id}"), "GET /v1/batches/{id}")
        polls.append((time.perf_counter() - asked) * 1000)
    seconds = time.perf_counter() - started
    used = SimCounts.read(sim) - before
    total = max(1, status["total"])
    return {
        "items": status["total"],
        "completed": status["completed"],
        "failed": status["failed"],
        "rejected": status["rejected"],
        "seconds": _r(seconds, 3),
        "submit_seconds": _r(submit_s, 3),
        "items_per_s": _r(status["total"] / seconds),
        "llm_calls": used.calls,
        "llm_errors": used.errors,
        "llm_calls_per_item": _r(used.calls / total, 3),
        "prompt_tokens_per_item": _r(used.prompt_tokens / total, 1),
        "polls": len(polls),
        "poll_p50_ms": _r(percentile(polls, 50)) if polls else None,
        "poll_p95_ms": _r(percentile(polls, 95)) if polls else None,
        "health_p95_ms": _r(percentile(healths, 95)) if healths else None,
    }


def _wait_batch(client: httpx.Client, batch_id: str, poll_s: float, timeout_s: float) -> None:
    deadline = time.perf_counter() + timeout_s
    while True:
        status = _check(client.get(f"/v1/batches/{batch_id}"), "GET /v1/batches/{id}")
        if status["status"] == "completed":
            return
        if time.perf_counter() > deadline:
            raise BenchError(f"batch {batch_id} not done after {timeout_s:g} s: {status}")
        time.sleep(poll_s)


def rubric_examples(
    client: httpx.Client, sim: SimulatorProcess, *, poll_s: float, timeout_s: float
) -> dict[str, Any]:
    """Score each bundled rubric's expert examples (one batch per rubric, all at once). Calls
    and tokens per rubric come from the results' usage (the simulator's own counts, relayed);
    their sum is checked against the simulator's statistics."""
    from judge.rubrics import RubricRegistry

    before = SimCounts.read(sim)
    submitted: dict[str, tuple[Any, dict[str, Any]]] = {}
    for rubric in RubricRegistry.from_directory(None).all():
        items = [example.input for example in rubric.expert_examples]
        if items:
            status = _check(
                client.post("/v1/batches", json={"rubric": rubric.id, "items": items}),
                f"POST /v1/batches ({rubric.id})",
            )
            submitted[rubric.id] = (rubric, status)
    for _, status in submitted.values():
        _wait_batch(client, status["id"], poll_s, timeout_s)
    used = SimCounts.read(sim) - before
    out: dict[str, Any] = {}
    totals = {"llm_calls": 0, "prompt_tokens": 0}
    for rubric_id, (rubric, status) in submitted.items():
        results = [
            json.loads(line)
            for line in client.get(f"/v1/batches/{status['id']}/results").text.splitlines()
            if line.strip()
        ]
        done = [r for r in results if r.get("status") == "completed"]
        usage = {
            key: sum(int(r["usage"].get(key, 0)) for r in done)
            for key in ("llm_calls", "prompt_tokens", "completion_tokens", "cache_hits")
        }
        totals["llm_calls"] += usage["llm_calls"]
        totals["prompt_tokens"] += usage["prompt_tokens"]
        n = max(1, len(done))
        judges = max((len(r["panel"]) for r in done), default=0)
        out[rubric_id] = {
            "items": status["total"],
            "rejected": status["rejected"],
            "completed": len(done),
            "dimensions": len(rubric.dimensions),
            "judges": judges,
            "llm_calls_per_item": _r(usage["llm_calls"] / n, 3),
            "calls_per_judge_per_item": _r(usage["llm_calls"] / n / judges, 3) if judges else None,
            "prompt_tokens_per_item": _r(usage["prompt_tokens"] / n, 1),
            "completion_tokens_per_item": _r(usage["completion_tokens"] / n, 1),
            # calls beyond one per judge and item: repairs of unusable replies, or retries
            "extra_calls": usage["llm_calls"] - judges * len(done),
            "cache_hits": usage["cache_hits"],
        }
    if (totals["llm_calls"], totals["prompt_tokens"]) != (used.calls, used.prompt_tokens):
        raise BenchError(
            f"the results' usage ({totals}) disagrees with the simulator's counts "
            f"({used.calls} calls, {used.prompt_tokens} prompt tokens)"
        )
    return out


def simulator_floor(
    sim: SimulatorProcess, rubric_id: str, items: Sequence[Any], models: Sequence[str]
) -> dict[str, Any]:
    """A bare httpx client calling the simulator with the same prompts (one call per judge,
    concurrently, per item): the part of "overhead" that is the simulator's own, not ours."""
    from judge.bench.baseline import render
    from judge.rubrics import RubricRegistry

    rubric = RubricRegistry.from_directory(None).get(rubric_id)

    async def run() -> list[float]:
        samples = []
        async with httpx.AsyncClient(base_url=sim.base_url, timeout=60) as client:
            for raw in items:
                messages, fmt = render(rubric, raw)
                started = time.perf_counter()
                replies = await asyncio.gather(
                    *(
                        client.post(
                            "/chat/completions",
                            json={"model": m, "messages": messages, "response_format": fmt},
                        )
                        for m in models
                    )
                )
                samples.append((time.perf_counter() - started) * 1000)
                for reply in replies:
                    reply.raise_for_status()
        return samples

    samples = asyncio.run(run())[1:]  # the first one opens the connections
    latency = sim.options.latency_ms
    return {
        "samples": len(samples),
        "overhead_p50_ms": _r(percentile([s - latency for s in samples], 50)),
        "overhead_p95_ms": _r(percentile([s - latency for s in samples], 95)),
    }
