"""Cost per item in economy mode against the interactive list price (issue 30, point 4).

``python -m judge.bench.economy_cost [--items N]`` starts a simulator whose personas answer
under real OpenAI model names (aliases), scores the same N items once interactively and once
as an economy batch (the simulator's OpenAI Batch API) on a temporary SQLite database, and
prints calls, tokens and cost per item for both, and their ratio. Prices are LiteLLM's price
map's: list prices interactively, its ``*_cost_per_token_batches`` in economy mode. The
judges are SIMULATED: the tokens are the simulator's estimates (about four characters per
token) and the ratings are personas', so only the ratio says something about real providers.
Economy mode batches OpenAI-compatible judges only (judge.llm.batch_api), so the panel is
three OpenAI models. The simulator's prompt cache is off in both runs: cached prefixes would
discount the interactive run's later items (judge.bench.prompt_cost measures that), and this
comparison is of the batch discount alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.domain.wire import Rejection
from judge.runtime.composition import build_runtime
from judge.services import schema
from judge.services.economy import EconomyService, hold
from judge.services.jobs import JobService
from judge.settings import load_settings
from judge.simulator import SimulatorOptions, SimulatorProcess
from judge.simulator.personas import SIMPLE_PERSONAS

#: three OpenAI models LiteLLM's price map prices for the batch API, as simulator personas
PANEL = {"gpt-4o-mini": "accurate", "gpt-4.1-mini": "lenient", "gpt-4o": "accurate@b"}


@dataclass(frozen=True)
class Tally:
    """What a run's finished items used, per item."""

    items: int
    calls: float
    prompt_tokens: float
    completion_tokens: float
    cost_usd: float


def _items(n: int) -> list[tuple[int, Any | Rejection]]:
    return [
        (
            line,
            {
                "id": f"bench-{line}",
                "seeker_post": f"I moved for a new job and eat dinner alone every night ({line}).",
                "response": "That sounds lonely. What do your evenings look like now?",
            },
        )
        for line in range(1, n + 1)
    ]


async def _tally(jobs: JobService, job_ids: list[str]) -> Tally:
    usage: dict[str, float] = {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    cost = 0.0
    for job_id in job_ids:
        job = await jobs.get_job(job_id)
        if job is None or job.result_json is None:
            continue
        found = json.loads(job.result_json)["usage"]
        for name in usage:
            usage[name] += found[name]
        cost += found["cost_usd"]
    n = max(1, len(job_ids))
    return Tally(
        len(job_ids),
        usage["llm_calls"] / n,
        usage["prompt_tokens"] / n,
        usage["completion_tokens"] / n,
        cost / n,
    )


async def measure(items: int, simulator_url: str, database: Path) -> tuple[Tally, Tally]:
    """(interactive, economy) per-item usage of the same ``items`` items."""
    url = f"sqlite+aiosqlite:///{database}"
    await schema.upgrade(url)
    judges = [{"model": f"openai/{name}", "simulated": True} for name in PANEL]
    settings = load_settings(
        database_url=url,
        panels={"bench": {"judges": judges}},
        default_panel="bench",
        simulator={"url": simulator_url},
        worker={"cache_enabled": False},
    )
    runtime = build_runtime(settings)
    try:
        jobs = runtime.jobs
        _, plain_ids = await jobs.submit_batch(
            rubric_id="epitome", panel_name=None, lines=_items(items)
        )
        await jobs.run_all(plain_ids)
        prepared = jobs.prepare_batch(rubric_id="epitome", panel_name=None, lines=_items(items))
        hold(prepared)
        await jobs.store_batch(prepared)
        economy = EconomyService(jobs)
        released: list[str] = []
        while len(released) < len(prepared.jobs):
            released += await economy.tick()
            await asyncio.sleep(0.1)
        await jobs.run_all(released)
        return await _tally(jobs, plain_ids), await _tally(jobs, released)
    finally:
        await runtime.close()


def report(interactive: Tally, economy: Tally) -> list[str]:
    """The comparison, at most 80 columns, labelled simulated."""
    rows = [
        f"cost per item, SIMULATED judges ({interactive.items} items, 3 OpenAI models)",
        f"{'mode':12} {'calls':>6} {'prompt tok':>11} {'compl tok':>10} {'USD/item':>12}",
    ]
    for name, tally in (("interactive", interactive), ("economy", economy)):
        rows.append(
            f"{name:12} {tally.calls:6.2f} {tally.prompt_tokens:11.1f} "
            f"{tally.completion_tokens:10.1f} {tally.cost_usd:12.8f}"
        )
    ratio = economy.cost_usd / interactive.cost_usd if interactive.cost_usd else float("nan")
    rows.append(f"economy / interactive list price: {ratio:.3f}x (target: the batch discount)")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50)
    args = parser.parse_args(argv)
    assert set(PANEL.values()) <= {*SIMPLE_PERSONAS, "accurate@b"}
    options = SimulatorOptions(
        latency_ms=20, jitter_ms=0, batch_delay_ms=500, aliases=PANEL, prompt_cache=False
    )
    with SimulatorProcess(options) as simulator, tempfile.TemporaryDirectory() as tmp:
        interactive, economy = asyncio.run(
            measure(args.items, simulator.base_url, Path(tmp) / "bench.db")
        )
    sys.stdout.write("\n".join(report(interactive, economy)) + "\n")


if __name__ == "__main__":
    main()
