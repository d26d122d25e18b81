"""Provenance (issue 23): the panel signature names where each judge answers, the cache keeps
endpoints apart, and the simulator's mark is read from headers or the reply id."""

from __future__ import annotations

import dataclasses

from judge.domain.provenance import SIMULATOR_REPLY_ID_PREFIX, is_simulator_reply
from judge.llm.cache import cache_key
from judge.llm.client import ChatRequest
from judge.panel.judge_call import JudgeTarget
from judge.panel.run import Panel


def target(api_base: str | None = None, *, simulated: bool = False) -> JudgeTarget:
    return JudgeTarget(
        model="openai/gpt-4o",
        params={"temperature": 0},
        api_base=api_base,
        api_key=None,
        timeout_s=5,
        simulated=simulated,
    )


def signature(*judges: JudgeTarget) -> str:
    return Panel(name="p", judges=judges).signature()


def test_the_signature_names_each_judges_endpoint() -> None:
    provider = signature(target())
    assert provider == "openai/gpt-4o|[('temperature', 0)]"  # as before endpoints counted
    via_simulator = signature(target("http://127.0.0.1:8100/v1"))
    assert via_simulator != provider
    assert via_simulator.endswith("|@http://127.0.0.1:8100/v1")
    # a simulator persona is named by what it is, not by the port its simulator got
    persona = signature(target("http://127.0.0.1:8100/v1", simulated=True))
    assert persona == signature(target("http://127.0.0.1:9999/v1", simulated=True))
    assert persona.endswith("|@simulator")
    # no credentials or query of an api_base reach the stored signature
    secret = signature(target("https://user:pw@proxy.example:8443/v1?key=abc"))
    assert secret.endswith("|@https://proxy.example:8443/v1")


def test_the_cache_keeps_endpoints_apart() -> None:
    request = ChatRequest(model="openai/gpt-4o", messages=[{"role": "user", "content": "hi"}])
    elsewhere = dataclasses.replace(request, api_base="http://127.0.0.1:8100/v1")
    assert cache_key(request) != cache_key(elsewhere)


def test_the_simulator_mark() -> None:
    assert is_simulator_reply({"llm_provider-x-llm-simulator": "empathy-judge"})
    assert is_simulator_reply({"X-LLM-Simulator": "empathy-judge"})
    assert not is_simulator_reply({"x-llm-simulator": "someone-else"})
    assert not is_simulator_reply({}, "chatcmpl-123")
    assert is_simulator_reply(None, f"{SIMULATOR_REPLY_ID_PREFIX}abc")
