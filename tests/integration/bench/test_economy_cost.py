"""The economy cost comparison of the bench (judge.bench.economy_cost) on a real simulator:
the same items cost the batch discount of their list price, with the same calls and tokens."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from judge.bench import economy_cost
from judge.simulator import SimulatorOptions, SimulatorProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def test_economy_costs_the_batch_price_of_the_same_tokens(tmp_path: Path) -> None:
    options = SimulatorOptions(
        latency_ms=5,
        jitter_ms=0,
        batch_delay_ms=200,
        aliases=economy_cost.PANEL,
        # cached prefixes would discount the interactive run's later items
        prompt_cache=False,
    )
    with SimulatorProcess(options) as simulator:
        interactive, economy = asyncio.run(
            economy_cost.measure(3, simulator.base_url, tmp_path / "bench.db")
        )
    assert interactive.items == economy.items == 3
    assert economy.calls == interactive.calls == 3
    assert economy.prompt_tokens == interactive.prompt_tokens > 0
    assert economy.completion_tokens == interactive.completion_tokens
    # every model of the panel is priced at half its list price for batches (LiteLLM's map)
    assert economy.cost_usd == pytest.approx(interactive.cost_usd / 2)
    lines = economy_cost.report(interactive, economy)
    assert "SIMULATED" in lines[0]
    assert "0.500x" in lines[-1]
    assert all(len(line) <= 80 for line in lines)
