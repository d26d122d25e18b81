"""The Alembic migrations build exactly the tables the code declares, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

import judge.persistence.tables  # noqa: F401  (registers the tables)
from judge.persistence.database import MIGRATIONS, Database

pytestmark = pytest.mark.integration
NOW = datetime(2026, 12, 1, tzinfo=UTC)


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


# -- 0010: cached simulator replies stored as real are purged (issue 23) -----------------------
CACHE_ROWS = {
    # key: (simulated, content)
    "through-api-base": (False, '{"rationale": "[simulated accurate judge] reference label."}'),
    "real-reply": (False, '{"rationale": "The reply names the feeling [simulated or not]."}'),
    "marked-since-0006": (True, '{"rationale": "[simulated accurate judge] reference label."}'),
}


def cache_after_0010(url: str) -> set[str]:
    """Migrate to 0006, cache the rows above, migrate to head: the keys that remain."""

    def to(revision: str) -> Any:
        def run(connection: Connection) -> None:
            config = Config()
            config.set_main_option("script_location", str(MIGRATIONS))
            config.attributes["connection"] = connection
            command.upgrade(config, revision)

        return run

    async def run() -> set[str]:
        database = Database(url)
        try:
            async with database.engine.begin() as connection:
                await connection.run_sync(to("0006_reply_provenance"))
                for key, (simulated, content) in CACHE_ROWS.items():
                    await connection.execute(
                        text(
                            "INSERT INTO llm_cache (key, model, content, prompt_tokens, "
                            "completion_tokens, cost_usd, simulated, created_at) VALUES "
                            "(:key, 'openai/gpt-4o', :content, 0, 0, 0, :simulated, :at)"
                        ),
                        {"key": key, "content": content, "simulated": simulated, "at": NOW},
                    )
            async with database.engine.begin() as connection:
                await connection.run_sync(to("head"))
            async with database.engine.connect() as connection:
                rows = await connection.execute(text("SELECT key FROM llm_cache"))
                return {row[0] for row in rows}
        finally:
            await database.dispose()

    return asyncio.run(run())


def test_0010_purges_simulator_replies_cached_as_real_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'judge.db'}"
    assert cache_after_0010(url) == {"real-reply", "marked-since-0006"}


def test_0010_purges_simulator_replies_cached_as_real_on_postgresql(postgres_url: str) -> None:
    assert cache_after_0010(postgres_url) == {"real-reply", "marked-since-0006"}
