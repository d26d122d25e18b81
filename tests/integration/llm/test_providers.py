"""Every provider family the papers used, each on its own wire format: judges configured as
``openai/...``, ``anthropic/...`` and ``gemini/...`` go through LiteLLM's real adapters to the
simulator (OpenAI chat completions, Anthropic Messages, Gemini generateContent), never a mock.

Checked per provider: structured output (Anthropic through LiteLLM's forced ``json_tool_call``
tool or native ``output_format``; Gemini through ``response_json_schema`` or the schema
LiteLLM writes into the prompt), usage and cost from LiteLLM's price map, retries honouring
the provider's retry delay, and each failure mode's abstention reason.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.domain.item import Item, parse_item
from judge.domain.result import ScoreResult
from judge.llm.calls import RetryPolicy, price_map_prices
from judge.llm.client import ChatClient
from judge.llm.litellm_client import LiteLLMClient
from judge.llm.routing import RoutingClient
from judge.panel.judge_call import JudgeTarget
from judge.panel.run import Panel, score_item
from judge.rubrics import RubricRegistry
from judge.services.panels import simulator_api_base
from judge.simulator import SimulatorOptions, SimulatorProcess
from tests.fixtures import loopback
from tests.fixtures.cli import invoke_with_env

pytestmark = [
    pytest.mark.integration,
    # litellm 1.110.2 builds a pydantic schema for a TypedDict with ReadOnly items on its first
    # call; pydantic warns about it. Third-party noise, not ours.
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
]

EPITOME = RubricRegistry.from_directory().get("epitome")
RETRY_AFTER_MS = 1000
#: Without a provider delay the backoff waits at most 10 ms: a wait of a second is the delay.
FAST = RetryPolicy(max_retries=2, backoff_base_s=0.01)
#: Real model names (as in the price map) served as the ``accurate`` persona, with the way
#: LiteLLM 1.110.2 asks each of them for the judgment schema.
JUDGES = {
    "openai/gpt-4o": "response_format",
    "anthropic/claude-3-7-sonnet-20250219": "tool",  # no native structured output: tool use
    "anthropic/claude-sonnet-4-5-20250929": "output_format",  # native structured output
    "gemini/gemini-2.5-pro": "response_json_schema",
    # not in the price map: LiteLLM folds the system prompt into the first user turn
    "gemini/gemini-2.0-flash": "response_json_schema",
}
#: Retired from litellm 1.110.2's price map: no price, so no invented cost (configure one).
UNPRICED = frozenset({"anthropic/claude-3-7-sonnet-20250219", "gemini/gemini-2.0-flash"})
#: One judge per provider family (the README's example panel).
FAMILIES = (
    "openai/gpt-4o",
    "anthropic/claude-sonnet-4-5-20250929",
    "gemini/gemini-2.5-pro",
)
PROVIDERS = ("openai", "anthropic", "gemini")
#: The client paths every test runs through, side by side: LiteLLM for every judge, and the
#: service's default routing (the direct OpenAI-compatible client serves ``openai/...`` judges;
#: LiteLLM keeps Anthropic and Gemini).
CLIENT_PATHS = ("litellm", "routed")
# ``accurate`` reads this pair as empathic on every EPITOME dimension (2, 2, 2).
POST = {
    "seeker_post": "I moved for a new job three months ago and I still eat dinner alone every "
    "night.",
    "response": "I'm so sorry, that sounds really lonely. Is eating dinner alone the hardest "
    "part of your day?",
}


def post_item(case: str) -> Item:
    """The POST pair, distinct per case so per-prompt fault counters start at zero."""
    return parse_item({**POST, "seeker_post": f"{POST['seeker_post']} ({case})"})


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatorProcess]:
    aliases = {model.split("/", 1)[1]: "accurate" for model in JUDGES}
    options = SimulatorOptions(
        latency_ms=5, jitter_ms=0, retry_after_ms=RETRY_AFTER_MS, aliases=aliases
    )
    with SimulatorProcess(options) as process:
        yield process


@pytest.fixture(params=CLIENT_PATHS)
def client_path(request: pytest.FixtureRequest) -> str:
    path: str = request.param
    return path


def make_client(path: str, retry: RetryPolicy = FAST) -> ChatClient:
    if path == "litellm":
        return LiteLLMClient(retry=retry)
    if path == "routed":
        return RoutingClient(retry=retry)
    raise AssertionError(f"unknown client path {path!r}")


def target(sim: SimulatorProcess, model: str, **params: Any) -> JudgeTarget:
    return JudgeTarget(
        model=model,
        params={"temperature": 0, **params},
        api_base=simulator_api_base(model, sim.base_url),
        api_key="sim-key",
        timeout_s=30,
    )


def score(
    item: Item, *targets: JudgeTarget, client: ChatClient, quorum: int | None = None
) -> ScoreResult:
    panel = Panel(name="providers", judges=targets, quorum=quorum or len(targets), simulated=True)

    async def run() -> ScoreResult:
        try:
            return await score_item(rubric=EPITOME, item=item, panel=panel, client=client)
        finally:
            if isinstance(client, RoutingClient):
                await client.aclose()

    return asyncio.run(run())


def judged(result: ScoreResult, model: str) -> list[Any]:
    return [j for d in result.dimensions.values() for j in d.judges if j.model == model]


def test_the_provider_base_urls_are_the_providers_own_shapes() -> None:
    """LiteLLM appends ``/v1/messages`` to an Anthropic base and ``/models/M:generateContent``
    to a Gemini one, as to https://api.anthropic.com and .../v1beta."""
    url = "http://127.0.0.1:8901/v1"
    assert simulator_api_base("openai/gpt-4o", url) == url
    assert simulator_api_base("hosted_vllm/qwen", url) == url
    assert simulator_api_base("anthropic/claude-sonnet-4-5", url) == "http://127.0.0.1:8901"
    assert simulator_api_base("gemini/gemini-2.5-pro", url) == "http://127.0.0.1:8901/v1beta"


def test_each_provider_returns_the_structured_judgment_with_usage_and_cost(
    sim: SimulatorProcess, client_path: str
) -> None:
    sim.reset_stats()
    judges = (target(sim, m) for m in JUDGES)
    result = score(post_item(f"structured-{client_path}"), *judges, client=make_client(client_path))
    stats = sim.stats()["models"]
    print("\none result per provider family (simulated judges):")
    for model, via in JUDGES.items():
        ratings = {j.rating for j in judged(result, model)}
        assert [j.status for j in judged(result, model)] == ["ok"] * 3, model
        assert ratings == {2}, model  # the accurate reading of the pair, on every dimension
        (call,) = [c for c in result.calls if c.requested_model == model]
        assert (call.outcome, call.attempts) == ("ok", 1)
        served = stats[model.split("/", 1)[1]]
        # the simulator saw the schema arrive the way this provider's adapter sends it
        assert served["structured"] == {via: 1}, (model, served)
        assert (call.prompt_tokens, call.completion_tokens) == (
            served["prompt_tokens"],
            served["completion_tokens"],
        )
        assert call.prompt_tokens > 500
        assert call.completion_tokens > 50
        if model in UNPRICED:
            assert call.cost_usd == 0.0
        else:
            # the simulator models each provider's prompt cache: cached tokens at their price
            prices = price_map_prices(model)
            assert prices is not None
            read = prices.input if prices.cache_read is None else prices.cache_read
            write = prices.input if prices.cache_write is None else prices.cache_write
            fresh = call.prompt_tokens - call.cached_prompt_tokens - call.cache_write_tokens
            expected = (
                fresh * prices.input
                + call.cached_prompt_tokens * read
                + call.cache_write_tokens * write
                + call.completion_tokens * prices.output
            )
            assert call.cost_usd == pytest.approx(expected, rel=1e-9), model
        print(
            f"  {model:40s} via {via:21s} ratings {[j.rating for j in judged(result, model)]} "
            f"tokens {call.prompt_tokens}+{call.completion_tokens} cost ${call.cost_usd:.6f}"
        )
    assert len(result.calls) == len(JUDGES)  # one call each, its retries counted in usage
    assert result.usage.llm_calls == sum(c.attempts for c in result.calls)
    assert result.usage.cost_usd == pytest.approx(sum(c.cost_usd for c in result.calls))
    for dim in result.dimensions.values():
        assert (dim.score, dim.agreement.valid) == (2, len(JUDGES))


def failing(sim: SimulatorProcess, persona: str, provider: str, **params: Any) -> JudgeTarget:
    """A judge of ``provider`` played by ``persona`` (tagged per provider: own counters)."""
    return target(sim, f"{provider}/{persona}@{provider}", **params)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("persona", "params", "reason", "calls"),
    [
        # a refusal (OpenAI `refusal`, Anthropic stop_reason refusal, Gemini SAFETY)
        ("refusing", {}, "refused", ["judge"]),
        # a safety block (OpenAI 400 invalid_prompt, Anthropic refusal, Gemini blockReason)
        ("blocked", {}, "refused", ["judge"]),
        # the reply stops at max_tokens, the repair too (Anthropic's forced tool call is cut
        # with an empty input and reported by LiteLLM as `stop`: the token count tells)
        ("accurate", {"max_tokens": 40}, "truncated", ["judge", "repair"]),
        # a tool call instead of the judgment, twice
        ("wrong-tool", {}, "unparseable", ["judge", "repair"]),
        # overloaded on every attempt (Anthropic 529, OpenAI and Gemini 503): retried, given up
        ("overloaded-99", {}, "provider_error", ["judge"]),
        # rate limited on every attempt: retried, given up
        ("fail429-99", {}, "rate_limit", ["judge"]),
    ],
)
def test_each_failure_mode_is_the_right_abstention(
    sim: SimulatorProcess,
    client_path: str,
    provider: str,
    persona: str,
    params: dict[str, Any],
    reason: str,
    calls: list[str],
) -> None:
    case = f"{persona}-{provider}-{client_path}"
    bad = failing(sim, persona, provider, **params)
    good = target(sim, "openai/gpt-4o")
    # a rate limit waits the provider's delay (a second) per retry: one retry is enough here
    retry = RetryPolicy(max_retries=1, backoff_base_s=0.01) if reason == "rate_limit" else FAST
    result = score(post_item(case), good, bad, client=make_client(client_path, retry))
    verdicts = judged(result, bad.model)
    assert [(j.status, j.reason, j.rating) for j in verdicts] == [("abstained", reason, None)] * 3
    made = [c for c in result.calls if c.requested_model == bad.model]
    assert [c.purpose for c in made] == calls
    if persona.startswith(("overloaded", "fail429")):
        assert made[0].attempts > 1  # retried before giving up
        served = sim.stats()["models"][bad.model.split("/", 1)[1]]
        status = {"overloaded-99": "529" if provider == "anthropic" else "503"}.get(persona, "429")
        assert served["errors"] == {status: served["calls"]}
    for dim in result.dimensions.values():
        # never a score from an abstention: one valid judge is below the quorum of two
        assert dim.score is None
        assert "insufficient_judges" in dim.reliability.reasons
    print(f"\n{provider:9s} {persona:14s} -> {reason}: {verdicts[0].detail}")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_overload_is_retried_then_answered(
    sim: SimulatorProcess, client_path: str, provider: str
) -> None:
    bad = failing(sim, "overloaded-1", provider)
    result = score(
        post_item(f"overload-{provider}-{client_path}"), bad, client=make_client(client_path)
    )
    (call,) = result.calls
    assert (call.outcome, call.attempts) == ("ok", 2)
    assert {j.rating for j in judged(result, bad.model)} == {2}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rate_limits_are_retried_after_the_providers_delay(
    sim: SimulatorProcess, client_path: str, provider: str
) -> None:
    """OpenAI sends ``retry-after-ms``, Anthropic ``retry-after`` (seconds), Gemini a
    ``RetryInfo.retryDelay`` in the error body: each is honoured (the backoff alone would wait
    at most 10 ms)."""
    bad = failing(sim, "fail429-1", provider)
    started = time.perf_counter()
    result = score(
        post_item(f"retry-{provider}-{client_path}"), bad, client=make_client(client_path)
    )
    waited = time.perf_counter() - started
    (call,) = result.calls
    assert (call.outcome, call.attempts) == ("ok", 2)
    assert RETRY_AFTER_MS / 1000 <= waited < RETRY_AFTER_MS / 1000 + 5
    print(f"\n{provider}: 429, retried after {waited:.2f} s (delay sent: {RETRY_AFTER_MS} ms)")


def test_the_wire_formats_error_shapes(sim: SimulatorProcess) -> None:
    root = sim.root_url
    body = {"model": "fail429-1", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    limited = loopback.post(f"{root}/v1/messages", json=body, headers=headers)
    assert limited.status_code == 429
    assert limited.headers["retry-after"] == "1"
    assert limited.json()["type"] == "error"
    assert limited.json()["error"]["type"] == "rate_limit_error"
    assert loopback.post(f"{root}/v1/messages", json=body).status_code == 401  # no key
    no_version = loopback.post(f"{root}/v1/messages", json=body, headers={"x-api-key": "k"})
    assert no_version.status_code == 400
    no_max = {k: v for k, v in body.items() if k != "max_tokens"}
    missing = loopback.post(f"{root}/v1/messages", json=no_max, headers=headers)
    assert (missing.status_code, missing.json()["error"]["type"]) == (400, "invalid_request_error")
    overloaded = loopback.post(
        f"{root}/v1/messages", json={**body, "model": "overloaded-1"}, headers=headers
    )
    assert (overloaded.status_code, overloaded.json()["error"]["type"]) == (
        529,
        "overloaded_error",
    )

    gemini = {"contents": [{"role": "user", "parts": [{"text": "x"}]}]}
    url = f"{root}/v1beta/models/fail429-1@gemini:generateContent"
    gem_limited = loopback.post(url, json=gemini, headers={"x-goog-api-key": "k"})
    error = gem_limited.json()["error"]
    assert (gem_limited.status_code, error["status"]) == (429, "RESOURCE_EXHAUSTED")
    assert error["details"] == [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}
    ]
    assert loopback.post(url, json=gemini).status_code == 403  # no key
    keyed = loopback.post(
        f"{root}/v1beta/models/overloaded-1@gemini:generateContent",
        params={"key": "k"},
        json=gemini,
    )
    assert (keyed.status_code, keyed.json()["error"]["status"]) == (503, "UNAVAILABLE")
    unknown = loopback.post(
        f"{root}/v1beta/models/gpt-17:generateContent", json=gemini, headers={"x-goog-api-key": "k"}
    )
    assert (unknown.status_code, unknown.json()["error"]["status"]) == (404, "NOT_FOUND")
    assert unknown.headers["x-llm-simulator"] == "empathy-judge"


# -- the README's example panel, end to end through `judge score` ---------------------------


def run_score(
    tmp_path: Path, sim: SimulatorProcess, panels: dict[str, Any], panel: str
) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "judge.yaml"
    config.write_text(json.dumps({"panels": panels}), encoding="utf-8")  # JSON is YAML
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_")}
    env |= {
        "JUDGE_CONFIG": str(config),
        "JUDGE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'judge.db'}",
        "JUDGE_LLM__BACKOFF_BASE_S": "0.01",
        "JUDGE_LLM__MAX_RETRIES": "1",
        "SIM_KEY": "sim-key",
    }
    args = ["score", "--rubric", "epitome", "--panel", panel, "--format", "json", "-"]
    # in this process: `judge score` starts as a process in tests/e2e/test_cli_score.py
    return invoke_with_env(args, env=env, cwd=tmp_path, stdin=json.dumps(POST))


def panel_of(sim: SimulatorProcess, *models: str) -> dict[str, Any]:
    judges = [
        {
            "model": m,
            "api_base": simulator_api_base(m, sim.base_url),
            "api_key_env": "SIM_KEY",
        }
        for m in models
    ]
    return {"judges": judges, "quorum": 2}


def test_judge_score_with_one_judge_per_provider_family(
    sim: SimulatorProcess, tmp_path: Path
) -> None:
    done = run_score(tmp_path, sim, {"families": panel_of(sim, *FAMILIES)}, "families")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [j["model"] for j in result["panel"]] == list(FAMILIES)
    for dim in result["dimensions"].values():
        assert dim["score"] == 2
        assert [j["status"] for j in dim["judges"]] == ["ok"] * 3
    usage = result["usage"]
    assert usage["llm_calls"] >= 3  # one per judge, more if a busy machine timed one out
    assert usage["prompt_tokens"] > 1500
    assert usage["cost_usd"] > 0
    print(f"\njudge score, one judge per family: usage {usage}")


def test_judge_score_says_when_every_judge_abstained_and_exits_non_zero(
    sim: SimulatorProcess, tmp_path: Path
) -> None:
    models = ("openai/refusing", "anthropic/overloaded-99", "gemini/blocked")
    done = run_score(tmp_path, sim, {"broken": panel_of(sim, *models)}, "broken")
    assert done.returncode == 3, done.stderr
    result = json.loads(done.stdout)  # the result is still printed, unchanged
    for dim in result["dimensions"].values():
        assert dim["score"] is None
        assert "insufficient_judges" in dim["reliability"]["reasons"]
    assert "every judge abstained on every dimension" in done.stderr
    assert "openai/refusing: refused" in done.stderr
    assert "anthropic/overloaded-99: provider_error" in done.stderr
    assert "gemini/blocked: refused" in done.stderr
    print(f"\n{done.stderr.strip()}")
