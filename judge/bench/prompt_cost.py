"""Cost per item with and without provider prompt caching, on a SIMULATED 3-judge
Anthropic/OpenAI/Gemini panel (real model names, list prices from LiteLLM's price map, each
judge played by the simulator's ``accurate`` persona).

The same items are scored twice by the panel code and client paths the service uses
(``judge.panel.run.score_item`` over the routing client: LiteLLM's Anthropic and Gemini
adapters, the direct OpenAI path), once against a simulator without a prompt cache (every
prompt token at the input price) and once against one modelling each provider's cache
(:mod:`judge.simulator.prefix_cache`). Cost does not depend on the database or the process
layout, so this runs in-process; the service's own CPU is measured by the batch sections.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import SecretStr

from judge.bench.workload import synthetic_items
from judge.domain.item import parse_item
from judge.domain.result import ScoreResult
from judge.llm.calls import price_map_prices
from judge.llm.routing import RoutingClient
from judge.panel.judge_call import JudgeTarget
from judge.panel.run import Panel, score_item
from judge.rubrics import RubricRegistry
from judge.services.panels import simulator_api_base
from judge.simulator import SimulatorOptions, SimulatorProcess

#: one judge per provider family, each with its own prompt cache
CACHE_PANEL = ("anthropic/claude-sonnet-4-5", "openai/gpt-4.1", "gemini/gemini-2.5-flash")


def simulated_panel(sim: SimulatorProcess, models: Sequence[str]) -> Panel:
    """``models`` (real names the simulator aliases to personas) as a panel reaching ``sim``
    through each provider's own API."""
    judges = tuple(
        JudgeTarget(
            model=m,
            params={"temperature": 0},
            api_base=simulator_api_base(m, sim.base_url),
            api_key=SecretStr("simulator"),
            timeout_s=60,
            simulated=True,
        )
        for m in models
    )
    return Panel(name="cost", judges=judges, quorum=len(judges), simulated=True)


def _score_all(
    sim: SimulatorProcess,
    rubric_id: str,
    panel_models: Sequence[str],
    items: list[Any],
    inflight: int,
) -> list[ScoreResult]:
    rubric = RubricRegistry.from_directory().get(rubric_id)
    panel = simulated_panel(sim, panel_models)

    async def run() -> list[ScoreResult]:
        client = RoutingClient()
        gate = asyncio.Semaphore(inflight)

        async def one(raw: Any) -> ScoreResult:
            async with gate:
                item = parse_item(raw)
                return await score_item(rubric=rubric, item=item, panel=panel, client=client)

        try:
            return await asyncio.gather(*(one(raw) for raw in items))
        finally:
            await client.aclose()

    return asyncio.run(run())


def _per_item(results: list[ScoreResult]) -> dict[str, Any]:
    n = max(1, len(results))
    by_judge: dict[str, float] = defaultdict(float)
    prompt_cost = 0.0
    for result in results:
        for call in result.calls:
            by_judge[call.requested_model] += call.cost_usd
            prices = price_map_prices(call.requested_model)
            out_price = prices.output if prices is not None else 0.0
            prompt_cost += call.cost_usd - call.completion_tokens * out_price
    total = sum(r.usage.cost_usd for r in results)

    def mean(field: str) -> float:
        return round(sum(float(getattr(r.usage, field)) for r in results) / n, 1)

    return {
        "items": len(results),
        "abstentions": sum(1 for r in results for c in r.calls if c.outcome != "ok"),
        "cost_per_item_usd": round(total / n, 8),
        "prompt_cost_per_item_usd": round(prompt_cost / n, 8),
        "calls_per_item": mean("llm_calls"),
        "prompt_tokens_per_item": mean("prompt_tokens"),
        "cached_prompt_tokens_per_item": mean("cached_prompt_tokens"),
        "cache_write_tokens_per_item": mean("cache_write_tokens"),
        "completion_tokens_per_item": mean("completion_tokens"),
        "cost_per_item_by_judge_usd": {m: round(v / n, 8) for m, v in sorted(by_judge.items())},
    }


def _ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 3) if whole > 0 else None


def measure_prompt_cost(
    *,
    items: int,
    rubric: str = "epitome",
    panel: Sequence[str] = CACHE_PANEL,
    latency_ms: float = 20.0,
    inflight: int = 8,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Cost per item at list price and with prompt caching, and their ratios (overall, the
    prompt part alone, per judge)."""
    workload = synthetic_items(items, tag="prompt-cost")
    aliases = {m.split("/", 1)[1]: "accurate" for m in panel}
    scored: dict[str, list[ScoreResult]] = {}
    for name, cache in (("list_price", False), ("prompt_cache", True)):
        progress(f"cost: {items} items, simulator prompt cache {'on' if cache else 'off'}")
        options = SimulatorOptions(
            latency_ms=latency_ms, jitter_ms=0, aliases=aliases, prompt_cache=cache
        )
        with SimulatorProcess(options) as sim:
            scored[name] = _score_all(sim, rubric, panel, workload, inflight)
    runs = {name: _per_item(results) for name, results in scored.items()}
    plain, cached = runs["list_price"], runs["prompt_cache"]
    # the first item writes the caches; a long batch converges to the items after it
    later = {name: _per_item(results[1:]) for name, results in scored.items()}
    by_judge = {
        m: _ratio(cached["cost_per_item_by_judge_usd"].get(m, 0.0), v)
        for m, v in plain["cost_per_item_by_judge_usd"].items()
    }
    return {
        "simulated": True,
        "panel": list(panel),
        "rubric": rubric,
        **runs,
        "ratio": _ratio(cached["cost_per_item_usd"], plain["cost_per_item_usd"]),
        "prompt_ratio": _ratio(
            cached["prompt_cost_per_item_usd"], plain["prompt_cost_per_item_usd"]
        ),
        "ratio_after_first_item": _ratio(
            later["prompt_cache"]["cost_per_item_usd"], later["list_price"]["cost_per_item_usd"]
        ),
        "ratio_by_judge": by_judge,
    }
