"""Provider prompt caching over real HTTP: a 3-judge Anthropic/OpenAI/Gemini panel through
LiteLLM's own adapters and the service's routing, against the simulator's model of each
provider's prefix cache. The second item's calls read the rubric from the cache and cost less;
each provider reports it in its own usage fields; without caching nothing is read."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from judge.bench.prompt_cost import CACHE_PANEL, simulated_panel
from judge.domain.item import parse_item
from judge.domain.result import ScoreResult
from judge.llm.calls import RetryPolicy, price_map_prices
from judge.llm.client import ChatClient
from judge.llm.litellm_client import LiteLLMClient
from judge.llm.routing import RoutingClient
from judge.panel.run import score_item
from judge.rubrics import RubricRegistry
from judge.simulator import SimulatorOptions, SimulatorProcess

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
]

EPITOME = RubricRegistry.from_directory().get("epitome")
PANEL = CACHE_PANEL  # anthropic/claude-sonnet-4-5, openai/gpt-4.1, gemini/gemini-2.5-flash
FAST = RetryPolicy(max_retries=1, backoff_base_s=0.01)


def simulator(prompt_cache: bool) -> SimulatorProcess:
    aliases = {m.split("/", 1)[1]: "accurate" for m in PANEL}
    return SimulatorProcess(
        SimulatorOptions(latency_ms=5, jitter_ms=0, aliases=aliases, prompt_cache=prompt_cache)
    )


@pytest.fixture
def sim() -> Iterator[SimulatorProcess]:
    with simulator(prompt_cache=True) as process:
        yield process


def score_two(sim: SimulatorProcess, client: ChatClient, tag: str) -> list[ScoreResult]:
    panel = simulated_panel(sim, PANEL)

    async def run() -> list[ScoreResult]:
        out = []
        try:
            for n in range(2):
                post = {"seeker_post": f"I lost my job ({tag} {n}).", "response": "That's hard."}
                item = parse_item(post)
                out.append(await score_item(rubric=EPITOME, item=item, panel=panel, client=client))
        finally:
            if isinstance(client, RoutingClient):
                await client.aclose()
        return out

    return asyncio.run(run())


def expected_cost(model: str, call: Any) -> float:
    prices = price_map_prices(model)
    assert prices is not None
    assert prices.cache_read is not None
    write = prices.input if prices.cache_write is None else prices.cache_write
    fresh = call.prompt_tokens - call.cached_prompt_tokens - call.cache_write_tokens
    return (
        fresh * prices.input
        + call.cached_prompt_tokens * prices.cache_read
        + call.cache_write_tokens * write
        + call.completion_tokens * prices.output
    )


@pytest.mark.parametrize("path", ["litellm", "routed"])
def test_the_second_items_calls_read_the_rubric_from_the_cache_at_a_lower_price(
    sim: SimulatorProcess, path: str
) -> None:
    client: ChatClient = (
        LiteLLMClient(retry=FAST) if path == "litellm" else RoutingClient(retry=FAST)
    )
    first, second = score_two(sim, client, path)
    for result in (first, second):
        assert {c.outcome for c in result.calls} == {"ok"}
        for call in result.calls:
            assert call.cost_usd == pytest.approx(expected_cost(call.requested_model, call))
    for call in second.calls:
        assert call.cached_prompt_tokens >= 1024, call.requested_model
        assert call.cached_prompt_tokens < call.prompt_tokens  # the item itself is never cached
        assert call.cache_write_tokens == 0
    first_by_model = {c.requested_model: c for c in first.calls}
    for call in second.calls:
        assert call.cost_usd < first_by_model[call.requested_model].cost_usd
    usage = second.usage
    assert usage.cached_prompt_tokens == sum(c.cached_prompt_tokens for c in second.calls)
    assert usage.cost_usd < first.usage.cost_usd
    # scores do not depend on the cache
    assert {d: r.score for d, r in first.dimensions.items()} == {
        d: r.score for d, r in second.dimensions.items()
    }


def test_anthropic_writes_the_cache_once_at_the_breakpoint(sim: SimulatorProcess) -> None:
    first, second = score_two(sim, LiteLLMClient(retry=FAST), "write")
    (wrote,) = [c for c in first.calls if c.requested_model.startswith("anthropic/")]
    (read,) = [c for c in second.calls if c.requested_model.startswith("anthropic/")]
    assert wrote.cache_write_tokens >= 1024
    assert wrote.cached_prompt_tokens == 0
    assert (read.cached_prompt_tokens, read.cache_write_tokens) == (wrote.cache_write_tokens, 0)
    # OpenAI and Gemini write for free: nothing reported, nothing charged
    assert all(c.cache_write_tokens == 0 for c in first.calls if c is not wrote)


def test_without_caching_nothing_is_read_and_every_token_is_at_list_price() -> None:
    with simulator(prompt_cache=False) as plain:
        results = score_two(plain, RoutingClient(retry=FAST), "plain")
    for result in results:
        for call in result.calls:
            assert (call.cached_prompt_tokens, call.cache_write_tokens) == (0, 0)
            prices = price_map_prices(call.requested_model)
            assert prices is not None
            assert call.cost_usd == pytest.approx(
                call.prompt_tokens * prices.input + call.completion_tokens * prices.output
            )


def test_each_provider_reports_the_cache_in_its_own_usage_fields(sim: SimulatorProcess) -> None:
    system = "You rate empathy. " * 600  # about 2,700 tokens
    with httpx.Client(base_url=sim.base_url.removesuffix("/v1"), timeout=30) as http:

        def openai(user: str) -> dict[str, Any]:
            body = {
                "model": "gpt-4.1",
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
            }
            headers = {"Authorization": "Bearer k"}
            return http.post("/v1/chat/completions", json=body, headers=headers).json()["usage"]

        def anthropic(user: str) -> dict[str, Any]:
            block = {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
            body = {
                "model": "claude-sonnet-4-5",
                "max_tokens": 500,
                "system": [block],
                "messages": [{"role": "user", "content": user}],
            }
            headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
            return http.post("/v1/messages", json=body, headers=headers).json()["usage"]

        def gemini(user: str) -> dict[str, Any]:
            body = {
                "systemInstruction": {"parts": [{"text": system}]},
                "contents": [{"role": "user", "parts": [{"text": user}]}],
            }
            url = "/v1beta/models/gemini-2.5-flash:generateContent"
            reply = http.post(url, json=body, headers={"x-goog-api-key": "k"})
            return reply.json()["usageMetadata"]

        openai("wire a")
        hit = openai("wire b")
        assert hit["prompt_tokens_details"]["cached_tokens"] >= 1024
        assert (hit["prompt_tokens_details"]["cached_tokens"] - 1024) % 128 == 0

        wrote = anthropic("wire a")
        read = anthropic("wire b")
        assert wrote["cache_read_input_tokens"] == 0 < wrote["cache_creation_input_tokens"]
        assert read["cache_read_input_tokens"] == wrote["cache_creation_input_tokens"]
        assert read["cache_creation_input_tokens"] == 0
        assert read["input_tokens"] < 50  # the Messages API counts cached tokens apart

        assert "cachedContentTokenCount" not in gemini("wire a")
        used = gemini("wire b")
        assert 1024 <= used["cachedContentTokenCount"] < used["promptTokenCount"]
    models = sim.stats()["models"]
    assert models["claude-sonnet-4-5"]["cache_write_tokens"] > 0
    assert models["gemini-2.5-flash"]["cached_tokens"] > 0
