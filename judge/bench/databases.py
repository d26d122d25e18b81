"""The benchmark's databases: fresh SQLite files by default, or fresh databases on a
PostgreSQL server (``judge bench --database postgresql://...``), dropped afterwards."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg  # type: ignore[import-untyped]

from judge.bench.procs import BenchError


def _admin_dsn(server_url: str) -> str:
    """The server's maintenance database, as asyncpg takes it (no SQLAlchemy driver suffix)."""
    parts = urlsplit(server_url)
    return parts._replace(scheme="postgresql", path="/postgres").geturl()


async def _execute(dsn: str, statements: Sequence[str]) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


@contextmanager
def fresh_databases(
    server_url: str | None, modes: Sequence[str], tmp: Path
) -> Iterator[dict[str, str]]:
    """A database URL per mode: SQLite files under ``tmp``, or new databases on the PostgreSQL
    server ``server_url`` (its own database name is ignored), dropped on exit."""
    if server_url is None:
        yield {mode: f"sqlite+aiosqlite:///{tmp / mode}.db" for mode in modes}
        return
    parts = urlsplit(server_url)
    if not parts.scheme.startswith(("postgresql", "postgres")):
        raise BenchError(f"--database takes a postgresql:// URL, not {parts.scheme}://")
    names = {mode: f"judge_bench_{mode}_{secrets.token_hex(4)}" for mode in modes}
    admin = _admin_dsn(server_url)
    try:
        asyncio.run(_execute(admin, [f'CREATE DATABASE "{name}"' for name in names.values()]))
    except (OSError, asyncpg.PostgresError) as exc:
        raise BenchError(
            f"cannot create the benchmark databases on {parts.hostname}: {exc}"
        ) from None
    try:
        yield {
            mode: parts._replace(scheme="postgresql", path=f"/{name}").geturl()
            for mode, name in names.items()
        }
    finally:
        asyncio.run(
            _execute(admin, [f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)' for n in names.values()])
        )
