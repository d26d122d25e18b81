"""Which client path serves a judge (``client: auto | litellm | openai``), and the
configuration errors of a forced path that cannot work."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from judge.domain.providers import wire_model
from judge.errors import ConfigError
from judge.llm.routing import client_path
from judge.settings import JudgeSpec


@pytest.mark.parametrize(
    ("choice", "model", "api_base", "path"),
    [
        ("auto", "openai/gpt-4o", None, "openai"),
        ("auto", "hosted_vllm/qwen2.5-7b", "http://vllm:8000/v1", "openai"),
        ("auto", "hosted_vllm/qwen2.5-7b", None, "litellm"),  # LiteLLM says what is missing
        ("auto", "anthropic/claude-sonnet-4-5", None, "litellm"),
        ("auto", "gemini/gemini-2.5-pro", None, "litellm"),
        ("auto", "my-local-model", "http://llama:8080/v1", "litellm"),
        ("openai", "my-local-model", "http://llama:8080/v1", "openai"),
        ("litellm", "openai/gpt-4o", None, "litellm"),
    ],
)
def test_the_path_of_each_judge(choice: str, model: str, api_base: str | None, path: str) -> None:
    assert client_path(choice, model, api_base) == path  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("model", "api_base", "message"),
    [
        ("anthropic/claude-sonnet-4-5", None, "needs an OpenAI-compatible endpoint"),
        ("my-local-model", None, "needs an OpenAI-compatible endpoint"),
        ("hosted_vllm/qwen", None, "needs the server's api_base"),
    ],
)
def test_a_forced_direct_path_that_cannot_work_is_a_configuration_error(
    model: str, api_base: str | None, message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as raised:
        client_path("openai", model, api_base)
    assert model in str(raised.value)


def test_the_panel_config_refuses_client_openai_for_another_provider_at_load() -> None:
    with pytest.raises(ValidationError, match="client 'openai' needs an OpenAI-compatible"):
        JudgeSpec(model="gemini/gemini-2.5-pro", client="openai")
    assert JudgeSpec(model="openai/gpt-4o", client="openai").client == "openai"
    assert JudgeSpec(model="openai/gpt-4o").client == "auto"


def test_the_wire_model_drops_only_an_openai_compatible_prefix() -> None:
    assert wire_model("openai/gpt-4o") == "gpt-4o"
    assert wire_model("hosted_vllm/meta-llama/Llama-3.1-8B") == "meta-llama/Llama-3.1-8B"
    assert wire_model("my-local-model") == "my-local-model"
