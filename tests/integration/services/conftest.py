"""What the use-case tests share: each runs on SQLite and on PostgreSQL, with no ``JUDGE_*``
setting from the caller's shell."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'judge.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def clean_env() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as env:
        for name in [k for k in os.environ if k.startswith("JUDGE_")]:
            env.delenv(name)
        yield
