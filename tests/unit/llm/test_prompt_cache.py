"""Provider prompt caching on the client side: the cached-token counts read from each
provider's usage (as the direct path parses it and as LiteLLM normalises it), their price, and
the breakpoint only Anthropic needs."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from judge.llm.calls import ModelPrice, configured_cost, price_map_cost, price_map_prices
from judge.llm.prompt_cache import (
    CacheUsage,
    TokenPrices,
    cache_usage,
    split_cost,
    with_cache_breakpoint,
)

MESSAGES = [{"role": "system", "content": "the rubric"}, {"role": "user", "content": "an item"}]


def ns(**fields: Any) -> SimpleNamespace:
    return SimpleNamespace(**fields)


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        # OpenAI chat completions (the direct path's parsed JSON)
        (ns(prompt_tokens=2000, prompt_tokens_details=ns(cached_tokens=1920)), (1920, 0)),
        # LiteLLM's Usage for Anthropic: reads and writes in the details and at the top level
        (
            ns(
                prompt_tokens=1800,
                prompt_tokens_details=ns(cached_tokens=0, cache_creation_tokens=1734),
                cache_read_input_tokens=0,
                cache_creation_input_tokens=1734,
            ),
            (0, 1734),
        ),
        (ns(prompt_tokens=1800, cache_read_input_tokens=1734), (1734, 0)),
        # LiteLLM's Usage for Gemini (cachedContentTokenCount mapped to cached_tokens)
        ({"prompt_tokens": 1800, "prompt_tokens_details": {"cached_tokens": 1700}}, (1700, 0)),
        # no cache fields at all, or nonsense in them
        (ns(prompt_tokens=10, completion_tokens=3), (0, 0)),
        (ns(prompt_tokens=10, prompt_tokens_details=None), (0, 0)),
        (ns(prompt_tokens=10, prompt_tokens_details=ns(cached_tokens="x")), (0, 0)),
        (None, (0, 0)),
        # a provider cannot have cached more than it was sent
        (ns(prompt_tokens=100, prompt_tokens_details=ns(cached_tokens=500)), (100, 0)),
    ],
)
def test_cached_tokens_are_read_from_every_providers_usage(
    usage: Any, expected: tuple[int, int]
) -> None:
    assert cache_usage(usage) == CacheUsage(*expected)


def test_cached_tokens_are_priced_at_their_own_rate() -> None:
    prices = TokenPrices(input=3e-6, output=15e-6, cache_read=0.3e-6, cache_write=3.75e-6)
    read = ns(prompt_tokens=1800, completion_tokens=200, cache_read_input_tokens=1700)
    assert split_cost(prices, read) == pytest.approx(100 * 3e-6 + 1700 * 0.3e-6 + 200 * 15e-6)
    write = ns(prompt_tokens=1800, completion_tokens=200, cache_creation_input_tokens=1700)
    assert split_cost(prices, write) == pytest.approx(100 * 3e-6 + 1700 * 3.75e-6 + 200 * 15e-6)
    # no cache price known: the input price, never an invented discount
    plain = TokenPrices(input=3e-6, output=15e-6)
    assert split_cost(plain, read) == pytest.approx(1800 * 3e-6 + 200 * 15e-6)


def test_configured_prices_gain_a_cached_input_price() -> None:
    usage = ns(
        prompt_tokens=2000, completion_tokens=100, prompt_tokens_details=ns(cached_tokens=1024)
    )
    cheap = ModelPrice(input_per_mtok=2.0, output_per_mtok=8.0, cached_input_per_mtok=0.5)
    cost = configured_cost({"openai/m": cheap}, "openai/m", usage)
    assert cost == pytest.approx((976 * 2.0 + 1024 * 0.5 + 100 * 8.0) / 1e6)
    full = ModelPrice(input_per_mtok=2.0, output_per_mtok=8.0)
    assert configured_cost({"openai/m": full}, "openai/m", usage) == pytest.approx(
        (2000 * 2.0 + 100 * 8.0) / 1e6
    )
    assert configured_cost({}, "openai/m", usage) is None


def test_the_price_map_has_each_providers_cache_prices() -> None:
    for model in ("openai/gpt-4.1", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"):
        prices = price_map_prices(model)
        assert prices is not None, model
        assert prices.cache_read is not None, model
        assert prices.cache_read <= prices.input / 4, model
    sonnet = price_map_prices("anthropic/claude-sonnet-4-5")
    assert sonnet is not None
    assert sonnet.cache_write == pytest.approx(1.25 * sonnet.input)
    usage = ns(
        prompt_tokens=2000, completion_tokens=0, prompt_tokens_details=ns(cached_tokens=1920)
    )
    assert price_map_cost("openai/gpt-4.1", usage) == pytest.approx(80 * 2e-6 + 1920 * 0.5e-6)
    assert price_map_prices("openai/no-such-model") is None
    assert price_map_cost("openai/no-such-model", usage) == 0.0


def test_only_anthropic_gets_a_breakpoint_on_the_system_block() -> None:
    marked = with_cache_breakpoint("anthropic/claude-sonnet-4-5", MESSAGES)
    assert marked[0] == {
        "role": "system",
        "content": [{"type": "text", "text": "the rubric", "cache_control": {"type": "ephemeral"}}],
    }
    assert marked[1] == MESSAGES[1]
    assert MESSAGES[0]["content"] == "the rubric"  # the request's own messages are untouched
    # OpenAI and Gemini cache on their own (Gemini's cache_control would create a context
    # cache through another API)
    for model in ("openai/gpt-4.1", "gemini/gemini-2.5-flash", "hosted_vllm/qwen"):
        assert with_cache_breakpoint(model, MESSAGES) is MESSAGES


def test_configured_cache_prices_reach_the_clients_and_are_checked() -> None:
    from pydantic import ValidationError

    from judge.runtime.composition import configured_prices
    from judge.settings import PriceSpec, Settings

    spec = {"input_per_mtok": 1.0, "output_per_mtok": 2.0, "cached_input_per_mtok": 0.1}
    settings = Settings(prices={"hosted_vllm/q": spec})
    assert configured_prices(settings) == {"hosted_vllm/q": ModelPrice(1.0, 2.0, 0.1, None)}
    with pytest.raises(ValidationError, match="cached_input_per_mtok"):
        PriceSpec(input_per_mtok=1, output_per_mtok=1, cached_input_per_mtok=-1)
