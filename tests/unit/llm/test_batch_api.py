"""Economy mode's batch lines and prices (judge.llm.batch_api), without a provider."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from judge.llm import batch_api
from judge.llm.calls import ModelPrice, price_map_cost
from judge.llm.client import ChatRequest

USAGE = SimpleNamespace(prompt_tokens=1_000, completion_tokens=200)


def test_a_batch_line_is_the_interactive_request() -> None:
    request = ChatRequest(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": "hi"}],
        response_format={"type": "json_object"},
        params={"temperature": 0, "seed": 3},
    )
    line = batch_api.request_line("k1", request)
    assert line == {
        "custom_id": "k1",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "hi"}],
            "temperature": 0,
            "seed": 3,
            "response_format": {"type": "json_object"},
        },
    }


def test_batch_prices_come_from_the_price_map_or_half_a_configured_price() -> None:
    # LiteLLM's map lists gpt-4o-mini's batch prices: half its list prices
    mapped = batch_api.batch_cost("openai/gpt-4o-mini", USAGE, {})
    assert mapped == pytest.approx(price_map_cost("openai/gpt-4o-mini", USAGE) / 2)
    configured = {"openai/mine": ModelPrice(2.0, 8.0)}
    assert batch_api.batch_cost("openai/mine", USAGE, configured) == pytest.approx(
        batch_api.BATCH_DISCOUNT * (1_000 * 2.0 + 200 * 8.0) / 1e6
    )
    assert batch_api.batch_cost("openai/unknown-model", USAGE, {}) == 0.0


def test_a_batch_reply_becomes_the_calls_result() -> None:
    request = ChatRequest(model="openai/mine", messages=[{"role": "user", "content": "hi"}])
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "mine",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "{}"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }
    result = batch_api.line_result(
        request, body, {"openai/mine": ModelPrice(1.0, 1.0)}, simulated=True
    )
    assert (result.ok, result.content, result.simulated) == (True, "{}", True)
    assert (result.prompt_tokens, result.completion_tokens) == (10, 2)
    assert result.cost_usd == pytest.approx(0.5 * 12 / 1e6)
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": "{"},
        "finish_reason": "length",
    }
    cut = {**body, "choices": [choice]}
    assert batch_api.line_result(request, cut, {}).truncated
