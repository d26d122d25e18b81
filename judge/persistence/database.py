"""Engine, sessions and migrations for one database URL."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncpg  # type: ignore[import-untyped]
from sqlalchemy import Engine, Row, Select, create_engine, event, literal, select, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    DisconnectionError,
    InterfaceError,
    OperationalError,
)
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from judge.errors import DatabaseNotMigrated, DatabaseUnavailable
from judge.persistence.reads import InlineReads, ReadLoop

if TYPE_CHECKING:  # alembic is imported when a migration is read or run (~0.4 s of CPU)
    from alembic.config import Config

__all__ = ["Database", "DatabaseNotMigrated", "DatabaseUnavailable", "is_unavailable"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# Alembic logs "Context impl ..." at INFO on every revision check (each readiness probe).
logging.getLogger("alembic.runtime.migration").setLevel(logging.WARNING)


#: asyncpg's errors for a server that is gone, going or not yet back (a restart), and for a
#: connection left unusable by one (it reaches SQLAlchemy as a plain DBAPIError)
_PG_GONE = (
    asyncpg.exceptions.PostgresConnectionError,  # CannotConnectNowError: starting up
    asyncpg.exceptions.OperatorInterventionError,  # AdminShutdown: shutting down
    asyncpg.exceptions.InterfaceError,  # ConnectionDoesNotExistError, closed mid-operation
    asyncpg.exceptions.InternalClientError,  # "another operation is in progress"
)


def is_unavailable(exc: BaseException) -> bool:
    """A failure of the database itself (unreachable, connection lost, restarting, locked,
    timed out), as opposed to a statement or a value it refuses."""
    if isinstance(exc, DatabaseUnavailable | DatabaseNotMigrated):
        return True
    if isinstance(exc, OperationalError | InterfaceError | DisconnectionError | OSError):
        return True
    if isinstance(exc, TimeoutError):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    seen: BaseException | None = exc
    for _ in range(8):  # the driver's own error, under SQLAlchemy's and the adapter's
        if seen is None:
            return False
        if isinstance(seen, _PG_GONE):
            return True
        seen = getattr(seen, "orig", None) or seen.__cause__
    return False


def missing_sqlite_file(url: str) -> str | None:
    """The path of the SQLite file ``url`` names when that file is not there (opening it
    would create an empty database), else None (other backends, in-memory SQLite)."""
    try:
        parsed = make_url(normalise_url(url))
    except ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return None if Path(parsed.database).is_file() else parsed.database


def safe_url(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:  # not a URL SQLAlchemy can parse: nothing in it to hide
        return url


#: the async driver for each backend a plain URL may name
_ASYNC_DRIVERS = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+asyncpg"}


def normalise_url(url: str) -> str:
    """Accept plain ``sqlite:///`` and ``postgresql://`` (or ``postgres://``) URLs and pick the
    async drivers; a URL that names its driver is kept as it is."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return url
    backend = "postgresql" if parsed.drivername == "postgres" else parsed.drivername
    if backend not in _ASYNC_DRIVERS:
        return url
    return parsed.set(drivername=_ASYNC_DRIVERS[backend]).render_as_string(hide_password=False)


def _alembic_config(url: str) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """WAL (readers never block the writer) with ``synchronous=NORMAL`` (a commit does not
    wait for an fsync; the WAL is synced at checkpoints). Safe for this data: WAL + NORMAL
    never corrupts the file, and what a power loss may drop is the last commits only; a
    result dropped that way is redone, since its job is still running under a lease in the
    file and is claimed again when the lease lapses (as after a crashed run)."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class Database:
    def __init__(self, url: str, *, pool_size: int | None = None) -> None:
        """``pool_size`` connections (and as many again in overflow) on the main pool; by
        default 10 on PostgreSQL and the driver's own pool on SQLite. Jobs hold a connection
        only for a statement, never across a judge call, so a pool far smaller than the
        number of jobs in flight serves them (tests/integration/services/
        test_many_jobs_small_pool.py runs 64 in flight on one connection plus one)."""
        self.url = normalise_url(url)
        if pool_size is None and self.url.startswith("postgresql"):
            pool_size = 10
        self.engine: AsyncEngine = self._engine(pool_size)
        self._sessions = async_sessionmaker(
            self.engine, class_=AsyncSession, expire_on_commit=False
        )
        # an in-memory SQLite database exists on one connection only: reads use that one
        self._reads: ReadLoop | None = None
        self._inline: InlineReads | None = None
        if self.url.startswith("sqlite"):
            if ":memory:" not in self.url:
                self._inline = InlineReads(self._inline_engine())
        else:
            self._reads = ReadLoop(self._read_engine)

    def _read_engine(self) -> AsyncEngine:
        # autocommit: no BEGIN and ROLLBACK round trips around a single SELECT
        return self._engine(2, isolation_level="AUTOCOMMIT", pool_reset_on_return=None)

    def _inline_engine(self) -> Engine:
        """The same SQLite file through the standard library's driver (see reads.py)."""
        url = make_url(self.url).set(drivername="sqlite+pysqlite")
        engine = create_engine(
            url,
            pool_size=2,
            max_overflow=2,
            isolation_level="AUTOCOMMIT",
            pool_reset_on_return=None,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine

    def _engine(self, pool_size: int | None, **kwargs: Any) -> AsyncEngine:
        """An engine; ``pool_size`` None keeps the driver's default pool."""
        if pool_size is not None:
            kwargs |= {"pool_size": pool_size, "max_overflow": pool_size}
        if self.url.startswith("postgresql"):
            kwargs["pool_pre_ping"] = True
        engine = create_async_engine(self.url, **kwargs)
        if self.url.startswith("sqlite"):
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        async with self._sessions() as session:
            yield session

    async def read_row(self, statement: Select[Any]) -> Row[Any] | None:
        """The row of a short SELECT (autocommit) that must not wait behind running jobs: on
        SQLite in line, on PostgreSQL on a loop and a small pool of their own
        (:mod:`judge.persistence.reads`)."""
        if self._inline is not None:
            return self._inline.row(statement)

        async def read(session: AsyncSession) -> Row[Any] | None:
            row: Row[Any] | None = (await session.execute(statement)).one_or_none()
            return row

        if self._reads is None:
            async with self.session() as session:
                return await read(session)
        return await self._reads.run(read)

    async def open_reads(self) -> None:
        """Connect the read pool now, so the first status poll does not wait for it
        (measured: about 190 ms on PostgreSQL during a batch)."""
        await self.read_row(select(literal(1)))

    async def dispose(self) -> None:
        await self.engine.dispose()
        if self._reads is not None:
            await self._reads.close()
        if self._inline is not None:
            self._inline.close()

    # -- migrations -----------------------------------------------------------------------
    def head_revision(self) -> str:
        from alembic.script import ScriptDirectory

        head = ScriptDirectory.from_config(_alembic_config(self.url)).get_current_head()
        assert head is not None
        return head

    async def current_revision(self) -> str | None:
        from alembic.runtime.migration import MigrationContext

        def read(connection: Connection) -> str | None:
            return MigrationContext.configure(connection).get_current_revision()

        try:
            async with self.engine.connect() as connection:
                return await connection.run_sync(read)
        except (OSError, ConnectionError) as exc:
            raise DatabaseUnavailable(
                f"cannot reach the database at {safe_url(self.url)}: {exc}"
            ) from None

    async def upgrade(self) -> tuple[str | None, str]:
        """Apply every pending migration; returns (revision before, revision after)."""
        before = await self.current_revision()

        from alembic import command

        def run(connection: Connection) -> None:
            config = _alembic_config(self.url)
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

        async with self.engine.begin() as connection:
            await connection.run_sync(run)
        return before, self.head_revision()

    async def check_migrated(self) -> None:
        current, head = await self.current_revision(), self.head_revision()
        if current != head:
            raise DatabaseNotMigrated(safe_url(self.url), current, head)

    async def ping(self) -> None:
        async with self.engine.connect() as connection:
            await asyncio.wait_for(connection.execute(text("SELECT 1")), timeout=5)
