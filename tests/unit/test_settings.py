"""Where settings come from: the environment over the JUDGE_CONFIG file over defaults, and
database URLs as the user wrote them versus what the engine needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.errors import ConfigError
from judge.persistence.database import normalise_url, safe_url
from judge.settings import Settings


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
