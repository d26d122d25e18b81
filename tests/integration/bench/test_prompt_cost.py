"""The bench's cost per item with and without provider prompt caching: a SIMULATED 3-judge
Anthropic/OpenAI/Gemini panel scored twice over real HTTP, priced at the real models' list
prices, and its lines in the bench's output (80 columns). Ratios are printed, and only their
direction is asserted (the threshold is the bench's target, docs/DESIGN.md section 7)."""

from __future__ import annotations

import pytest
from rich.console import Console

from judge.bench.prompt_cost import CACHE_PANEL, measure_prompt_cost
from judge.bench.report import print_prompt_cost

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
]


def test_caching_lowers_the_cost_per_item_and_the_bench_prints_it() -> None:
    cost = measure_prompt_cost(items=6, latency_ms=5)
    plain, cached = cost["list_price"], cost["prompt_cache"]
    assert cost["simulated"] is True
    assert cost["panel"] == list(CACHE_PANEL)
    for run in (plain, cached):
        assert (run["items"], run["abstentions"], run["calls_per_item"]) == (6, 0, 3)
    # the same prompts and replies, so the same tokens; only their price differs
    assert plain["prompt_tokens_per_item"] == cached["prompt_tokens_per_item"] > 3000
    assert plain["completion_tokens_per_item"] == cached["completion_tokens_per_item"]
    assert plain["cached_prompt_tokens_per_item"] == 0
    # every call after the first of each judge reads the rubric (5 items of 6)
    assert cached["cached_prompt_tokens_per_item"] > 0.6 * cached["prompt_tokens_per_item"]
    assert cached["cache_write_tokens_per_item"] > 0  # Anthropic's first call writes
    assert cost["ratio"] < 1
    assert cost["prompt_ratio"] < cost["ratio"]  # completion tokens are never cached
    assert cost["ratio_after_first_item"] < cost["ratio"]  # the first item writes the caches
    assert all(r is not None and r < 1 for r in cost["ratio_by_judge"].values())

    console = Console(width=80, record=True)
    print_prompt_cost(console, cost)
    text = console.export_text()
    print(text)
    assert "SIMULATED judges" in text
    assert "no cache" in text
    assert "cached/list:" in text
    assert max(len(line) for line in text.splitlines()) <= 80
