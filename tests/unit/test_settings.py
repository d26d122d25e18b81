"""Where settings come from: the environment over the JUDGE_CONFIG file over defaults;
database URLs as the user wrote them versus what the engine needs; credentials refused in
judge parameters and kept out of every repr."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from judge.errors import ConfigError
from judge.llm.client import ChatRequest
from judge.panel.judge_call import JudgeTarget
from judge.persistence.database import normalise_url, safe_url
from judge.settings import Settings, load_settings, secret_like


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "judge.yaml"
    monkeypatch.setenv("JUDGE_CONFIG", str(path))
    monkeypatch.delenv("JUDGE_REDIS_URL", raising=False)
    return path


def test_the_environment_wins_over_the_config_file(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.write_text("redis_url: redis://from-file:6379/0\nworker: {concurrency: 7}\n")
    assert Settings().redis_url == "redis://from-file:6379/0"
    monkeypatch.setenv("JUDGE_REDIS_URL", "redis://from-env:6379/0")
    settings = Settings()
    assert settings.redis_url == "redis://from-env:6379/0"
    assert settings.worker.concurrency == 7


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("- a list\n- not a mapping\n", "must be a YAML mapping"),
        ("a: [unclosed\n", "cannot read the config file"),
    ],
)
def test_a_named_config_file_that_cannot_be_used_is_an_error(
    config: Path, content: str | None, message: str
) -> None:
    if content is not None:
        config.write_text(content)
    with pytest.raises(ConfigError, match=message) as raised:
        Settings()
    assert str(config) in str(raised.value)


def test_an_empty_config_file_means_defaults(config: Path) -> None:
    config.write_text("")
    assert Settings().redis_url is None


@pytest.mark.parametrize(
    ("given", "engine"),
    [
        ("sqlite:///./judge.db", "sqlite+aiosqlite:///./judge.db"),
        ("sqlite+aiosqlite:///./judge.db", "sqlite+aiosqlite:///./judge.db"),
        ("postgres://u:p%40ss@db:5432/judge", "postgresql+asyncpg://u:p%40ss@db:5432/judge"),
        (
            "postgresql://postgres@127.0.0.1/j?ssl=require",
            "postgresql+asyncpg://postgres@127.0.0.1/j?ssl=require",
        ),
        ("postgresql+psycopg://u@h/d", "postgresql+psycopg://u@h/d"),
    ],
)
def test_plain_database_urls_get_the_async_drivers(given: str, engine: str) -> None:
    assert normalise_url(given) == engine


def test_messages_never_show_the_database_password() -> None:
    shown = safe_url("postgresql+asyncpg://judge:s3cr%40t@db:5432/judge")
    assert shown == "postgresql+asyncpg://judge:***@db:5432/judge"
    assert safe_url("not a url") == "not a url"


# -- secrets -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    ["api_key", "apiKey", "x-api-key", "access_token", "Authorization", "aws_secret_access_key",
     "aws_access_key_id", "azure_ad_token", "password", "vertex_credentials", "private_key"],
)  # fmt: skip
def test_credential_names_are_recognised(name: str) -> None:
    assert secret_like(name)


@pytest.mark.parametrize(
    "name", ["temperature", "max_tokens", "max_completion_tokens", "top_k", "seed", "keywords"]
)
def test_ordinary_parameters_are_not_secrets(name: str) -> None:
    assert not secret_like(name)


@pytest.mark.parametrize(
    ("params", "where"),
    [
        ({"api_key": "x"}, "params.api_key"),
        ({"extra_headers": {"Authorization": "Bearer x"}}, "params.extra_headers.Authorization"),
        ({"extra_body": {"note": "sk-abc123"}}, "params.extra_body.note"),
        ({"metadata": [{"token": 1}]}, "params.metadata[0].token"),
    ],
)
def test_secret_params_are_refused_at_config_load(params: dict[str, Any], where: str) -> None:
    panels = {"p": {"judges": [{"model": "openai/gpt-4o", "params": params}]}}
    with pytest.raises(ConfigError) as caught:
        load_settings(panels=panels)
    assert f"{where} looks like a credential" in caught.value.message
    assert "api_key_env" in caught.value.message


@pytest.mark.parametrize(
    "url",
    ["https://user:pw@llm.example/v1", "https://llm.example/v1?api_key=x", "https://x/?key=y"],
)
def test_api_base_with_credentials_is_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="api_base must not"):
        load_settings(panels={"p": {"judges": [{"model": "openai/gpt-4o", "api_base": url}]}})


def test_keys_appear_in_no_repr() -> None:
    settings = Settings(llm={"api_key": "sk-very-secret"})
    assert isinstance(settings.llm.api_key, SecretStr)
    target = JudgeTarget("openai/x", {}, None, "sk-very-secret", 5.0)
    request = ChatRequest(model="openai/x", messages=[], api_key="sk-very-secret")
    for thing in (settings, settings.llm, target, request):
        assert "sk-very-secret" not in repr(thing)
        assert "sk-very-secret" not in str(thing)
    assert target.api_key is not None
    assert target.api_key.get_secret_value() == "sk-very-secret"
    assert request.api_key is not None
    assert request.api_key.get_secret_value() == "sk-very-secret"


def test_calibration_resamples_default_to_the_reports_own_and_are_bounded(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judge.reliability import DEFAULT_RESAMPLES

    config.write_text("{}\n")
    assert Settings().calibration_resamples is None  # the report's own
    assert DEFAULT_RESAMPLES == 2000  # the report's own, as the setting's description says
    monkeypatch.setenv("JUDGE_CALIBRATION_RESAMPLES", "300")
    assert Settings().calibration_resamples == 300
    monkeypatch.setenv("JUDGE_CALIBRATION_RESAMPLES", "10")
    with pytest.raises(ConfigError, match="calibration_resamples"):
        load_settings()
