"""Configuration errors fail fast: a judge without credentials stops ``judge serve``, ``judge
worker`` and ``judge calibrate`` before any work; a key the provider refuses or a model it does
not know stops the run at the first call. Errors that no retry can cure are not retried.

The provider is the simulator (a real HTTP server): ``fail401-N`` answers 401 like a provider
refusing a key, ``fail400-N`` 400, and an unknown model name 404.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from judge.llm.calls import RetryPolicy
from judge.llm.client import ChatRequest
from judge.llm.litellm_client import LiteLLMClient
from tests.fixtures import loopback
from tests.fixtures.stacks import ServiceStack, SimulatorProcess, sqlite_url

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

MESSAGES = [{"role": "user", "content": "Rate this."}]


def _stats(simulator: SimulatorProcess, model: str) -> dict[str, Any]:
    data = loopback.get(simulator.base_url.removesuffix("/v1") + "/_simulator/stats").json()
    stats: dict[str, Any] = data["models"].get(model, {"calls": 0})
    return stats


@pytest.mark.parametrize(
    ("model", "reason"),
    [("fail401-9", "auth_error"), ("fail400-9", "bad_request"), ("no-such-model", "unknown_model")],
)
def test_errors_no_retry_can_cure_are_final_at_once(
    service_simulator: SimulatorProcess, model: str, reason: str
) -> None:
    tag = f"{model}@final-{reason}"
    before = _stats(service_simulator, tag)["calls"]
    client = LiteLLMClient(retry=RetryPolicy(max_retries=3, backoff_base_s=0.01))
    request = ChatRequest(
        model=f"openai/{tag}", messages=MESSAGES, api_base=service_simulator.base_url, api_key="k"
    )
    result = asyncio.run(client.complete(request))
    assert (result.failure, result.attempts) == (reason, 1)
    if reason != "unknown_model":  # the simulator counts calls of the personas it knows
        assert _stats(service_simulator, tag)["calls"] - before == 1
    assert result.error is not None
    assert result.error.startswith(f"{reason}: ")
    assert "simulated" not in result.error  # the provider's own words stay in the log


def test_a_missing_key_is_final_without_calling(service_simulator: SimulatorProcess) -> None:
    """LiteLLM reports a missing key as a 500; it is an authentication error, not retried."""
    client = LiteLLMClient(retry=RetryPolicy(max_retries=3, backoff_base_s=0.01))
    request = ChatRequest(
        model="openai/accurate@nokey", messages=MESSAGES, api_base=service_simulator.base_url
    )
    result = asyncio.run(client.complete(request))
    assert (result.failure, result.attempts) == ("auth_error", 1)
    assert _stats(service_simulator, "accurate@nokey")["calls"] == 0


def test_transient_errors_are_still_retried(service_simulator: SimulatorProcess) -> None:
    client = LiteLLMClient(retry=RetryPolicy(max_retries=3, backoff_base_s=0.01))
    request = ChatRequest(
        model="openai/fail500-2@retried", messages=MESSAGES, api_base=service_simulator.base_url,
        api_key="k",
    )  # fmt: skip
    result = asyncio.run(client.complete(request))
    assert (result.ok, result.attempts) == (True, 3)


# -- at start-up ------------------------------------------------------------------------------
def _stack(tmp_path: Path, simulator: SimulatorProcess, judges: list[dict[str, Any]],
           **env: str) -> ServiceStack:  # fmt: skip
    config = tmp_path / "judge.yaml"
    config.write_text(json.dumps({"default_panel": "main", "panels": {"main": {"judges": judges}}}))
    stack = ServiceStack(
        tmp_path,
        {
            "JUDGE_DATABASE_URL": sqlite_url(tmp_path),
            "JUDGE_CONFIG": str(config),
            "JUDGE_SIMULATOR__URL": simulator.base_url,
            **env,
        },
    )
    stack.env.pop("OPENAI_API_KEY", None)  # the key these judges would otherwise fall back on
    stack.upgrade()
    return stack


def _labels(path: Path, n: int) -> Path:
    rows = [
        {
            "id": f"c{i}",
            "item": {"seeker_post": f"I failed my exam, attempt {i}.", "response": "Ouch. How?"},
            "labels": {"e1": {"emotional_reactions": i % 3}},
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


NO_KEY = (
    "error: these judges cannot authenticate, so every call would fail:\n"
    "  panel 'main', judge 'openai/gpt-4o-mini': no API key: set OPENAI_API_KEY, give the judge "
    "api_key_env (the name of a variable holding its key), or set JUDGE_LLM__API_KEY"
)


def test_a_judge_without_a_key_stops_serve_worker_and_calibrate(
    tmp_path: Path, service_simulator: SimulatorProcess
) -> None:
    judges = [
        {"model": "openai/gpt-4o-mini", "api_base": service_simulator.base_url},
        {"model": "openai/accurate", "simulated": True},
    ]
    stack = _stack(tmp_path, service_simulator, judges)
    labels = _labels(tmp_path / "labels.jsonl", 5)
    try:
        for command in (
            ["serve", "--port", "0"],
            ["calibrate", "--rubric", "epitome", str(labels)],
            ["worker"],  # last: it needs a broker URL (never reached)
        ):
            if command == ["worker"]:
                stack.env["JUDGE_REDIS_URL"] = "redis://127.0.0.1:1/0"
            done = stack.judge(*command, timeout=120)
            assert done.returncode != 0, (command, done.stdout)
            assert NO_KEY in done.stderr, (command, done.stderr)
    finally:
        stack.stop()
    assert _stats(service_simulator, "gpt-4o-mini")["calls"] == 0


def test_an_unset_api_key_env_is_named(tmp_path: Path, service_simulator: SimulatorProcess) -> None:
    judges = [{"model": "openai/gpt-4o-mini", "api_key_env": "MY_JUDGE_KEY"}]
    stack = _stack(tmp_path, service_simulator, judges)
    try:
        done = stack.judge("serve", "--port", "0", timeout=120)
    finally:
        stack.stop()
    assert done.returncode != 0
    assert (
        "panel 'main', judge 'openai/gpt-4o-mini': api_key_env names MY_JUDGE_KEY, which is not "
        "set (or is empty) in this process's environment"
    ) in done.stderr


# -- at the first call ------------------------------------------------------------------------
def test_a_refused_key_stops_a_calibration_at_the_first_calls(
    tmp_path: Path, service_simulator: SimulatorProcess
) -> None:
    """The key is there (start-up passes) but the provider refuses it: the run stops with a
    message naming the judge after a handful of calls, not after 4 x 40 of them."""
    judges = [
        {"model": "openai/fail401-999999@refused", "api_base": service_simulator.base_url,
         "api_key_env": "MY_JUDGE_KEY"},
        {"model": "openai/accurate", "simulated": True},
    ]  # fmt: skip
    stack = _stack(
        tmp_path, service_simulator, judges, MY_JUDGE_KEY="sk-wrong", JUDGE_WORKER__CONCURRENCY="2"
    )
    labels = _labels(tmp_path / "labels.jsonl", 40)
    try:
        done = stack.judge("calibrate", "--rubric", "epitome", str(labels), timeout=180)
    finally:
        stack.stop()
    assert done.returncode != 0, done.stdout
    assert (
        "error: judge 'openai/fail401-999999@refused' cannot be used (auth_error: the provider "
        "refused the credentials, or none were configured (HTTP 401; AuthenticationError; "
        "1 attempt))"
    ) in done.stderr, done.stderr
    assert "sk-wrong" not in done.stderr + done.stdout
    calls = _stats(service_simulator, "fail401-999999@refused")["calls"]
    assert 1 <= calls <= 2, calls  # concurrency 2: the calls in flight when the first failed
