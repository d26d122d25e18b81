"""The Alembic migrations build exactly the tables the code declares, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

import judge.persistence.tables  # noqa: F401  (registers the tables)
from judge.persistence.database import MIGRATIONS, Database

pytestmark = pytest.mark.integration


def schema_differences(url: str) -> list[Any]:
    """Upgrade an empty database to head, then diff it against the declared tables."""

    def diff(connection: Connection) -> list[Any]:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, SQLModel.metadata))

    async def run() -> list[Any]:
        database = Database(url)
        try:
            await database.upgrade()
            async with database.engine.connect() as connection:
                return await connection.run_sync(diff)
        finally:
            await database.dispose()

    return asyncio.run(run())


def test_one_linear_history() -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    scripts = ScriptDirectory.from_config(config)
    assert len(scripts.get_heads()) == 1, f"several heads: {scripts.get_heads()}"
    assert len(scripts.get_bases()) == 1, f"several bases: {scripts.get_bases()}"


def test_migrations_match_the_tables_on_sqlite(tmp_path: Path) -> None:
    assert schema_differences(f"sqlite+aiosqlite:///{tmp_path / 'judge.db'}") == []


def test_migrations_match_the_tables_on_postgresql(postgres_url: str) -> None:
    assert schema_differences(postgres_url) == []
