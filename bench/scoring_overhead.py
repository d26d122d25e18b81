"""In-process overhead of scoring one item with a 3-judge panel, and LLM calls and prompt size
per rubric.

Run: ``uv run python -m bench.scoring_overhead [--n 50] [--warmup 5] [--latency-ms 100]``

The simulator answers every call after exactly ``--latency-ms`` (jitter 0), so for one item
whose three judges are called concurrently, end-to-end time minus that latency is what the
service adds: prompt rendering, LiteLLM, HTTP on loopback, parsing, aggregation and flags. The
same three calls made with plain ``litellm.acompletion`` + ``asyncio.gather`` are measured as a
baseline, and posted with raw httpx as the floor (simulator work plus loopback HTTP), so the
shares of LiteLLM and of the service's own code are visible. Items are scored sequentially after a
warm-up. Token counts are the simulator's estimate (about four characters per token).

Writes ``bench/results/scoring_overhead.json`` (git-ignored) and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from judge._offline import configure_offline_env

configure_offline_env()

import httpx  # noqa: E402
import litellm  # noqa: E402

from judge.domain.item import Item, parse_item  # noqa: E402
from judge.domain.judgment_schema import judgment_schema, response_format  # noqa: E402
from judge.domain.rubric import Rubric  # noqa: E402
from judge.llm.litellm_client import LiteLLMClient  # noqa: E402
from judge.llm.prompts import build_messages  # noqa: E402
from judge.panel.judge_call import JudgeTarget  # noqa: E402
from judge.panel.run import Panel, score_item  # noqa: E402
from judge.rubrics import RubricRegistry  # noqa: E402
from judge.samples import load_sample  # noqa: E402
from judge.settings import SIMULATED_PERSONAS  # noqa: E402
from judge.simulator import SimulatorOptions, SimulatorProcess  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "scoring_overhead.json"
API_KEY = "simulator"


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (``q`` in 0..100)."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summary(values_ms: list[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(values_ms, 50), 2),
        "p95": round(percentile(values_ms, 95), 2),
        "mean": round(statistics.fmean(values_ms), 2),
        "min": round(min(values_ms), 2),
        "max": round(max(values_ms), 2),
    }


def make_panel(base_url: str, *, per_dimension: bool = False) -> Panel:
    """The default simulated panel (accurate, noisy, lenient), as ``judge score`` builds it."""
    return Panel(
        name="simulated",
        judges=tuple(
            JudgeTarget(
                model=f"openai/{persona}",
                params={"temperature": 0},
                api_base=base_url,
                api_key=API_KEY,
                timeout_s=60.0,
            )
            for persona in SIMULATED_PERSONAS
        ),
        per_dimension_calls=per_dimension,
        simulated=True,
    )


async def overhead_run(
    rubric: Rubric, item: Item, panel: Panel, client: LiteLLMClient, n: int, warmup: int
) -> tuple[list[float], list[float]]:
    """(end-to-end ms, slowest client-side judge call ms) per scored item."""
    for _ in range(warmup):
        await score_item(rubric=rubric, item=item, panel=panel, client=client)
    totals, slowest = [], []
    for _ in range(n):
        started = time.perf_counter()
        result = await score_item(rubric=rubric, item=item, panel=panel, client=client)
        totals.append((time.perf_counter() - started) * 1000)
        slowest.append(max(c.latency_ms for c in result.calls))
        assert result.usage.llm_calls == len(panel.judges), result.usage
    return totals, slowest


async def baseline_run(
    rubric: Rubric, item: Item, base_url: str, n: int, warmup: int, *, raw_http: bool
) -> list[float]:
    """The same three requests with plain ``litellm.acompletion`` and ``asyncio.gather``, or
    (``raw_http``) posted with httpx: the floor set by the simulator and loopback HTTP."""
    dims = list(rubric.dimensions)
    participants = tuple(p.id for p in item.clients)
    fmt = response_format(judgment_schema(rubric, dims, participants))
    messages = build_messages(rubric, item, dims)
    http = httpx.AsyncClient(base_url=base_url, headers={"authorization": f"Bearer {API_KEY}"})

    async def post(persona: str) -> None:
        body = {"model": persona, "messages": messages, "response_format": fmt, "temperature": 0}
        response = await http.post("/chat/completions", json=body, timeout=60.0)
        response.raise_for_status()
        json.loads(response.content)

    async def once() -> None:
        if raw_http:
            await asyncio.gather(*(post(persona) for persona in SIMULATED_PERSONAS))
            return
        await asyncio.gather(
            *(
                litellm.acompletion(
                    model=f"openai/{persona}",
                    messages=messages,
                    response_format=fmt,
                    api_base=base_url,
                    api_key=API_KEY,
                    temperature=0,
                    timeout=60.0,
                    max_retries=0,
                    num_retries=0,
                )
                for persona in SIMULATED_PERSONAS
            )
        )

    async with http:
        for _ in range(warmup):
            await once()
        totals = []
        for _ in range(n):
            started = time.perf_counter()
            await once()
            totals.append((time.perf_counter() - started) * 1000)
    return totals


async def per_rubric(registry: RubricRegistry, base_url: str) -> list[dict[str, Any]]:
    """Score each rubric's first expert example once per call mode; calls and tokens."""
    client = LiteLLMClient()
    rows = []
    for rubric in registry.all():
        item = parse_item(rubric.expert_examples[0].input, field_prefix="input")
        row: dict[str, Any] = {
            "rubric": rubric.id,
            "dimensions": len(rubric.dimensions),
            "expert_example": rubric.expert_examples[0].id,
        }
        for mode, per_dimension in (("per_item", False), ("per_dimension", True)):
            panel = make_panel(base_url, per_dimension=per_dimension)
            result = await score_item(rubric=rubric, item=item, panel=panel, client=client)
            calls = [c for c in result.calls if c.purpose == "judge"]
            row[mode] = {
                "llm_calls_per_item": result.usage.llm_calls,
                "calls_per_judge": round(result.usage.llm_calls / len(panel.judges), 2),
                "repairs": sum(1 for c in result.calls if c.purpose == "repair"),
                "prompt_tokens_per_call": round(
                    statistics.fmean(c.prompt_tokens for c in calls), 1
                ),
                "completion_tokens_per_call": round(
                    statistics.fmean(c.completion_tokens for c in calls), 1
                ),
                "prompt_tokens_per_item": result.usage.prompt_tokens,
            }
        rows.append(row)
    return rows


def print_report(report: dict[str, Any]) -> None:
    cfg = report["config"]
    print(
        f"\nScoring overhead: 3-judge EPITOME item, simulator latency {cfg['latency_ms']:g} ms "
        f"(jitter 0), n={cfg['n']} sequential after {cfg['warmup']} warm-up, in-process; "
        f"{cfg['cpus']} CPUs, load average {cfg['load_average_1m_before']} at start\n"
    )
    header = f"{'measure (ms)':<58}{'p50':>9}{'p95':>9}{'mean':>9}{'max':>9}"
    print(header)
    print("-" * len(header))
    labels = {
        "service_overhead_ms": "service overhead: end-to-end - simulator latency",
        "outside_llm_client_ms": "  of which outside the LLM client (e2e - slowest call)",
        "end_to_end_ms": "end-to-end score_item",
        "baseline_litellm_gather_overhead_ms": "baseline: plain litellm gather - simulator latency",
        "floor_raw_http_gather_overhead_ms": "floor: raw httpx gather - simulator latency",
    }
    for key, label in labels.items():
        s = report["overhead"][key]
        print(f"{label:<58}{s['p50']:>9.2f}{s['p95']:>9.2f}{s['mean']:>9.2f}{s['max']:>9.2f}")

    print("\nLLM calls per item and prompt tokens per call, 3-judge panel, each rubric's first")
    print("expert example (tokens: simulator estimate, ~4 characters per token)\n")
    header = (
        f"{'rubric':<22}{'dims':>5}{'calls/item':>12}{'prompt tok/call':>17}"
        f"{'compl tok/call':>16}{'per-dim calls':>15}{'per-dim prompt tok/call':>25}"
    )
    print(header)
    print("-" * len(header))
    for row in report["rubrics"]:
        a, b = row["per_item"], row["per_dimension"]
        print(
            f"{row['rubric']:<22}{row['dimensions']:>5}{a['llm_calls_per_item']:>12}"
            f"{a['prompt_tokens_per_call']:>17.0f}{a['completion_tokens_per_call']:>16.0f}"
            f"{b['llm_calls_per_item']:>15}{b['prompt_tokens_per_call']:>25.0f}"
        )
    print(f"\nwritten: {RESULTS}")


async def run(n: int, warmup: int, latency_ms: float) -> dict[str, Any]:
    load_before = round(os.getloadavg()[0], 2)  # other work on the machine inflates the numbers
    registry = RubricRegistry.from_directory()
    epitome = registry.get("epitome")
    item = parse_item(load_sample("reddit_style_post.json"))
    options = SimulatorOptions(latency_ms=latency_ms, jitter_ms=0)
    with SimulatorProcess(options) as sim:
        client = LiteLLMClient()
        panel = make_panel(sim.base_url)
        totals, slowest = await overhead_run(epitome, item, panel, client, n, warmup)
        baseline = await baseline_run(epitome, item, sim.base_url, n, warmup, raw_http=False)
        floor = await baseline_run(epitome, item, sim.base_url, n, warmup, raw_http=True)
        rubrics = await per_rubric(registry, sim.base_url)
    return {
        "config": {
            "n": n,
            "warmup": warmup,
            "latency_ms": latency_ms,
            "jitter_ms": 0,
            "judges": [f"openai/{p}" for p in SIMULATED_PERSONAS],
            "rubric": f"{epitome.id} v{epitome.version}",
            "item": "judge/samples/reddit_style_post.json",
            "python": platform.python_version(),
            "litellm": metadata.version("litellm"),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "load_average_1m_before": load_before,
        },
        "overhead": {
            "service_overhead_ms": summary([t - latency_ms for t in totals]),
            "outside_llm_client_ms": summary([t - s for t, s in zip(totals, slowest, strict=True)]),
            "end_to_end_ms": summary(totals),
            "baseline_litellm_gather_overhead_ms": summary([t - latency_ms for t in baseline]),
            "floor_raw_http_gather_overhead_ms": summary([t - latency_ms for t in floor]),
        },
        "rubrics": rubrics,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50, help="measured items (default 50)")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up items (default 5)")
    parser.add_argument("--latency-ms", type=float, default=100.0, help="simulator latency")
    args = parser.parse_args()
    report = asyncio.run(run(args.n, args.warmup, args.latency_ms))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print_report(report)


if __name__ == "__main__":
    main()
