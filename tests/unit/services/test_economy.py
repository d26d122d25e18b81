"""Economy mode's pure parts (judge.services.economy, economy_client): request keys, the
panels it accepts, and how provider output and error lines become stored replies."""

from __future__ import annotations

import json

import pytest
from pydantic import SecretStr

from judge.errors import ItemInvalid
from judge.llm.batch_api import FileLines
from judge.llm.client import ChatRequest
from judge.panel.judge_call import JudgeTarget
from judge.panel.run import Panel
from judge.services.economy import _replies, check_economy_panel
from judge.services.economy_client import request_key


def _target(model: str) -> JudgeTarget:
    return JudgeTarget(model=model, params={}, api_base=None, api_key=None, timeout_s=10)


def test_a_request_key_covers_what_the_provider_is_sent() -> None:
    base = ChatRequest(model="openai/a", messages=[{"role": "user", "content": "x"}])
    same = ChatRequest(
        model="openai/a", messages=[{"role": "user", "content": "x"}], api_key=SecretStr("sk-other")
    )
    assert request_key(base) == request_key(same)  # the key and endpoint are not the request
    for other in (
        ChatRequest(model="openai/b", messages=base.messages),
        ChatRequest(model="openai/a", messages=[{"role": "user", "content": "y"}]),
        ChatRequest(model="openai/a", messages=base.messages, params={"seed": 1}),
        ChatRequest(model="openai/a", messages=base.messages, sample=1),
    ):
        assert request_key(other) != request_key(base)


def test_only_openai_compatible_panels_go_economy() -> None:
    check_economy_panel(Panel("ok", (_target("openai/a"), _target("openai/b"))))
    mixed = Panel("mixed", (_target("openai/a"), _target("anthropic/claude")))
    with pytest.raises(ItemInvalid) as refused:
        check_economy_panel(mixed)
    assert refused.value.field == "mode"
    assert "anthropic/claude" in refused.value.detail


def test_output_and_error_lines_become_replies_with_reasons() -> None:
    body = {"id": "c", "choices": []}
    output = FileLines(
        [{"custom_id": "k1", "response": {"status_code": 200, "body": body}}], simulated=True
    )
    error_body = {"error": {"code": "rate_limit_exceeded", "type": "rate_limit_error"}}
    errors = FileLines(
        [{"custom_id": "k2", "response": {"status_code": 429, "body": error_body}}],
        simulated=True,
    )
    ok = _replies(output, ok=True)
    assert ok == [{"key": "k1", "body_json": json.dumps(body), "error": None, "simulated": True}]
    failed = _replies(errors, ok=False)
    assert failed == [
        {
            "key": "k2",
            "body_json": None,
            "error": "provider batch line failed: HTTP 429 rate_limit_exceeded",
            "simulated": True,
        }
    ]
    assert _replies(None, ok=True) == []
