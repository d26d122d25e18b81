"""Start-up credential checks name the panel, the judge and the setting (LiteLLM's provider
rules: importing LiteLLM takes tens of seconds, so this is not a unit test)."""

from __future__ import annotations

import pytest

from judge.services.panels import credential_problems
from judge.settings import Settings


def test_credential_problems_name_panel_judge_and_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_KEY"):
        monkeypatch.delenv(var, raising=False)
    judges = [
        {"model": "openai/gpt-4o-mini"},
        {"model": "anthropic/claude-3-5-haiku-latest", "api_key_env": "MY_KEY"},
        {"model": "hosted_vllm/llama", "api_base": "http://127.0.0.1:9/v1"},  # needs no key
        {"model": "openai/accurate", "simulated": True},
    ]
    settings = Settings(panels={"p": {"judges": judges}})
    problems = credential_problems(settings)
    assert problems == [
        "panel 'p', judge 'openai/gpt-4o-mini': no API key: set OPENAI_API_KEY, give the judge "
        "api_key_env (the name of a variable holding its key), or set JUDGE_LLM__API_KEY",
        "panel 'p', judge 'anthropic/claude-3-5-haiku-latest': api_key_env names MY_KEY, which "
        "is not set (or is empty) in this process's environment",
    ]
    assert credential_problems(settings, provider_rules=False) == problems[1:]
    monkeypatch.setenv("MY_KEY", "k")
    keyed = Settings(panels={"p": {"judges": judges}}, llm={"api_key": "k"})
    assert credential_problems(keyed) == []
