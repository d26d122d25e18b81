"""The database's schema, for the command line (no edge opens the database itself): migrate,
check the schema before serving, and show a URL without its password."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from judge.errors import DatabaseNotMigrated
from judge.persistence.database import Database, is_unavailable, missing_sqlite_file, safe_url
from judge.persistence.keys import KeyStore


def shown_url(url: str) -> str:
    """``url`` as it may be printed or logged: any password masked."""
    return safe_url(url)


@asynccontextmanager
async def opened(url: str) -> AsyncIterator[Database]:
    database = Database(url)
    try:
        yield database
    finally:
        await database.dispose()


async def upgrade(url: str) -> tuple[str | None, str]:
    """Create or upgrade the schema; (revision before, revision after)."""
    async with opened(url) as database:
        return await database.upgrade()


async def prepare(url: str, *, migrate: bool = False) -> int:
    """Before a server starts: migrate if asked, fail if the schema is behind (a
    :class:`~judge.errors.JudgeError` naming the fix), and return the number of active keys."""
    async with opened(url) as database:
        if migrate:
            await database.upgrade()
        await database.check_migrated()
        return await KeyStore(database).count_active()


async def schema_ready(url: str) -> bool:
    """Does the database answer at this version's schema? Never creates a SQLite file."""
    if missing_sqlite_file(url) is not None:
        return False
    async with opened(url) as database:
        try:
            await database.check_migrated()
        except DatabaseNotMigrated:
            return False
        except Exception as exc:
            if is_unavailable(exc):
                return False
            raise
    return True
