"""Fixtures that run the service as real processes: Redis, PostgreSQL, the LLM simulator,
``judge serve`` and ``judge worker`` (Celery) started by the tests themselves.

- Redis: the server on 127.0.0.1:6379 when it answers (each stack claims a database index of
  its own, 15 down to 8, and flushes it), else a ``redis-server`` started here. The
  ``private_redis`` fixture always starts its own server, which a test may restart.
- PostgreSQL: a fresh ``judge_test_<random>`` database on 127.0.0.1:5432, dropped afterwards.
  When PostgreSQL does not answer, its tests are skipped (they fail when ``CI=true``).
- Service processes are started as ``python -m judge ...`` so the PID held is the process
  itself; every process and its children are killed at teardown, and the test checks that
  none of them is left. Logs live under the test's temporary directory and are attached to
  the report of a failing test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import psutil
import pytest

from judge.bench.procs import free_port
from judge.bench.redis_local import RedisClaims, redis_answers
from judge.bench.redis_local import RedisServer as BenchRedisServer
from judge.simulator import SimulatorOptions, SimulatorProcess

REDIS_HOST, SHARED_REDIS_PORT = "127.0.0.1", 6379
#: Database indexes the tests may claim on a shared Redis; others' data is never touched.
TEST_REDIS_DBS = tuple(range(15, 7, -1))
CLAIM_KEY = "empathy-judge-tests:claim"
PG_ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
PG_TEST_PREFIX = "judge_test_"
#: Marks every process a stack starts, so teardown can prove none is left behind.
STACK_ENV = "EMPATHY_JUDGE_TEST_STACK"

# Short leases and sweeps: a killed worker's jobs are redone within seconds.
SERVICE_ENV = {
    "JUDGE_WORKER__LEASE_S": "4",
    "JUDGE_WORKER__REQUEUE_AFTER_S": "3",
    "JUDGE_WORKER__SWEEP_INTERVAL_S": "1",
    "JUDGE_WORKER__METRICS_PORT": "0",
    "JUDGE_API__MAX_BODY_BYTES": "1000000",
    "JUDGE_LLM__BACKOFF_BASE_S": "0.05",
    "PYTHONUNBUFFERED": "1",
}
DEFAULT_PANEL = ("openai/accurate", "openai/noisy", "openai/lenient")
#: Two accurate judges and one that answers HTTP 429 twice per prompt before it succeeds.
FLAKY_PANEL = ("openai/fail429-2", "openai/accurate@a", "openai/accurate@b")
#: Two accurate judges and one whose provider always fails (HTTP 500): it abstains.
FAILING_PANEL = ("openai/fail500-999999", "openai/accurate@a", "openai/accurate@b")
#: Two accurate judges and one the provider does not know (HTTP 404): a configuration error.
UNKNOWN_MODEL_PANEL = ("openai/no-such-model", "openai/accurate@a", "openai/accurate@b")
#: The databases every bad-input and attack test runs on (``service_stack``).
BACKENDS = ("sqlite", "postgresql")

#: Child processes cache their bytecode here (outside the repository and the virtualenv):
#: with ``PYTHONDONTWRITEBYTECODE`` set, every process would compile LiteLLM from source.
PYCACHE = Path(tempfile.gettempdir()) / f"empathy-judge-tests-pycache-{os.getuid()}"

_LIVE: list[ServiceStack] = []


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a child process: no ``JUDGE_*`` settings from the caller's shell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_")}
    # an empty value switches it off (and survives SimulatorProcess merging os.environ in)
    env |= {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    return env | (extra or {})


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def skip_or_fail(reason: str) -> None:
    """A missing service skips the test on a workstation and fails it in CI."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: required)")
    pytest.skip(reason)


def _tail(path: Path, lines: int = 150) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Attach the logs of every running service process to a failing test's report."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.failed:
        for stack in _LIVE:
            for proc in stack.processes:
                report.sections.append((f"log of {proc.name} ({proc.log})", _tail(proc.log)))


# -- Redis ----------------------------------------------------------------------------------
class RedisServer(BenchRedisServer):
    """The toolkit's private ``redis-server``, on a free port; skipped (or failed in CI) when
    the binary is not installed."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        try:
            super().__init__(workdir, port or free_port())
        except FileNotFoundError as exc:
            skip_or_fail(str(exc))


class RedisDatabases(RedisClaims):
    """Test databases (8-15) of one server."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(host, port, TEST_REDIS_DBS, CLAIM_KEY)

    def acquire(self) -> str:  # type: ignore[override]
        url = super().acquire()
        if url is None:
            raise RuntimeError(f"no free Redis database among {TEST_REDIS_DBS} on port {self.port}")
        return url


@pytest.fixture(scope="session")
def redis_databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisDatabases]:
    """Databases on the shared Redis at 127.0.0.1:6379, or on a server started here."""
    if redis_answers(REDIS_HOST, SHARED_REDIS_PORT):
        yield RedisDatabases(REDIS_HOST, SHARED_REDIS_PORT)
        return
    server = RedisServer(tmp_path_factory.mktemp("redis-shared")).start()
    try:
        yield RedisDatabases(REDIS_HOST, server.port)
    finally:
        server.kill()


@pytest.fixture
def redis_url(redis_databases: RedisDatabases) -> Iterator[str]:
    """A flushed Redis database of this test's own."""
    url = redis_databases.acquire()
    try:
        yield url
    finally:
        redis_databases.release(url)


@pytest.fixture(scope="module")
def private_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A ``redis-server`` of this module's own, on a free port; a test may restart it."""
    server = RedisServer(tmp_path_factory.mktemp("redis-private")).start()
    try:
        yield server
    finally:
        server.kill()


# -- PostgreSQL -----------------------------------------------------------------------------
async def _pg_execute(sql: str) -> None:
    conn = await asyncpg.connect(PG_ADMIN_DSN, timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def postgres_available() -> None:
    try:
        asyncio.run(_pg_execute("SELECT 1"))
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        skip_or_fail(f"PostgreSQL at 127.0.0.1:5432 does not answer: {exc}")


def create_pg_database() -> tuple[str, str]:
    """A fresh, empty database: (name, SQLAlchemy URL)."""
    name = PG_TEST_PREFIX + secrets.token_hex(6)
    asyncio.run(_pg_execute(f'CREATE DATABASE "{name}"'))
    return name, f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"


def drop_pg_database(name: str) -> None:
    if not name.startswith(PG_TEST_PREFIX):  # never anything but our own test databases
        raise ValueError(f"refusing to drop {name!r}")
    asyncio.run(_pg_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def postgres_url(postgres_available: None) -> Iterator[str]:
    """A fresh PostgreSQL database for one test, dropped afterwards."""
    name, url = create_pg_database()
    try:
        yield url
    finally:
        drop_pg_database(name)


def query(database_url: str, sql: str) -> list[tuple[Any, ...]]:
    """Run one read query against a stack's database (SQLite file or PostgreSQL)."""
    if database_url.startswith("sqlite"):
        path = database_url.split(":///", 1)[1]
        with contextlib.closing(sqlite3.connect(path, timeout=30)) as conn:
            return [tuple(row) for row in conn.execute(sql).fetchall()]

    async def run() -> list[tuple[Any, ...]]:
        dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
        conn = await asyncpg.connect(dsn, timeout=5)
        try:
            return [tuple(row) for row in await conn.fetch(sql)]
        finally:
            await conn.close()

    return asyncio.run(run())


# -- the simulator and the configuration ----------------------------------------------------
@pytest.fixture(scope="session")
def service_simulator() -> Iterator[SimulatorProcess]:
    """One simulator shared by every API and worker process (``JUDGE_SIMULATOR__URL``)."""
    options = SimulatorOptions(latency_ms=20, jitter_ms=5, retry_after_ms=100)
    with SimulatorProcess(options, env=child_env()) as simulator:
        yield simulator


@pytest.fixture(scope="session")
def service_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``JUDGE_CONFIG``: the simulated ``default`` panel, a ``flaky`` one, a ``failing`` one
    and one with an ``unknown-model`` judge."""

    def judges(models: tuple[str, ...]) -> list[dict[str, Any]]:
        return [{"model": m, "simulated": True} for m in models]

    config = {
        "default_panel": "default",
        "panels": {
            "default": {"judges": judges(DEFAULT_PANEL)},
            "flaky": {"judges": judges(FLAKY_PANEL)},
            "failing": {"judges": judges(FAILING_PANEL)},
            "unknown-model": {"judges": judges(UNKNOWN_MODEL_PANEL)},
        },
        # generous, so they never slow a test down, but the shared limiter runs on every call
        "limits": {DEFAULT_PANEL[0]: {"max_concurrency": 200, "requests_per_minute": 100000}},
    }
    path = tmp_path_factory.mktemp("config") / "judge.yaml"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")  # JSON is YAML
    return path


# -- service processes ----------------------------------------------------------------------
class ServiceProcess:
    """``python -m judge <args>`` in a session of its own; its log goes to ``log``."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], workdir: Path) -> None:
        self.name = name
        self.args = args
        self.log = workdir / f"{name}.log"
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "judge", *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=workdir,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def signal(self, sig: int) -> None:
        if self.alive:
            os.kill(self.pid, sig)

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after ``grace_s``; children are killed too."""
        try:
            children = psutil.Process(self.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            children = []
        self.signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        for child in children:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()
        psutil.wait_procs(children, timeout=5)

    def kill(self) -> None:
        """SIGKILL, as a crash: no shutdown handlers run."""
        self.signal(signal.SIGKILL)
        self.proc.wait(timeout=10)


class ServiceStack:
    """An API process and any number of Celery workers sharing one database (and Redis)."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.token = secrets.token_hex(8)
        self.env = child_env(SERVICE_ENV | env | {STACK_ENV: self.token})
        self.processes: list[ServiceProcess] = []
        self.api: ServiceProcess | None = None
        self.port = 0
        self.keys: dict[str, str] = {}
        self._client: httpx.Client | None = None
        self._counter = 0
        _LIVE.append(self)

    @property
    def database_url(self) -> str:
        return self.env["JUDGE_DATABASE_URL"]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(base_url=self.base_url, timeout=60)
        return self._client

    def headers(self, key: str | None = None) -> dict[str, str]:
        """``Authorization`` with the named key (or the first one created; none if none)."""
        secret = self.keys.get(key) if key else next(iter(self.keys.values()), None)
        return {"Authorization": f"Bearer {secret}"} if secret else {}

    def judge(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run a ``judge`` CLI command with the stack's environment."""
        return subprocess.run(
            [sys.executable, "-m", "judge", *args],
            env=self.env,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def upgrade(self) -> None:
        done = self.judge("db", "upgrade")
        assert done.returncode == 0, f"judge db upgrade failed:\n{done.stdout}\n{done.stderr}"

    def create_key(self, name: str, *scopes: str) -> str:
        args = [arg for scope in scopes for arg in ("--scope", scope)]
        done = self.judge("keys", "create", name, *args)
        assert done.returncode == 0, f"judge keys create failed:\n{done.stderr}"
        secret = done.stdout.strip().splitlines()[-1]
        self.keys[name] = secret
        return secret

    def _spawn(self, kind: str, args: list[str]) -> ServiceProcess:
        self._counter += 1
        proc = ServiceProcess(f"{kind}-{self._counter}", args, self.env, self.workdir)
        self.processes.append(proc)
        return proc

    def start_api(self, *extra: str, timeout: float = 90) -> ServiceProcess:
        self.port = free_port()
        self.api = self._spawn("api", ["serve", "--port", str(self.port), *extra])
        deadline = time.monotonic() + timeout
        while True:
            if not self.api.alive:
                raise RuntimeError(f"judge serve exited:\n{_tail(self.api.log)}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/ready", timeout=2).status_code == 200:
                    return self.api
            if time.monotonic() > deadline:
                raise RuntimeError(f"judge serve not ready in {timeout} s:\n{_tail(self.api.log)}")
            time.sleep(0.1)

    def start_worker(self, *extra: str, timeout: float = 90) -> ServiceProcess:
        """A Celery worker; returns once it consumes (its runtime may still be importing)."""
        worker = self._spawn("worker", ["worker", *extra])
        deadline = time.monotonic() + timeout
        while " ready." not in worker.log_text():
            if not worker.alive:
                raise RuntimeError(f"judge worker exited:\n{_tail(worker.log)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"judge worker not ready in {timeout} s:\n{_tail(worker.log)}")
            time.sleep(0.1)
        return worker

    def stray_processes(self) -> list[psutil.Process]:
        """Processes started by this stack (by its environment marker) still running."""
        found = []
        for proc in psutil.process_iter(["pid"]):
            with contextlib.suppress(psutil.Error):
                if proc.pid != os.getpid() and proc.environ().get(STACK_ENV) == self.token:
                    found.append(proc)
        return found

    def stop(self) -> None:
        """Stop everything, then check that nothing of this stack is left running."""
        try:
            if self._client is not None:
                self._client.close()
            for proc in reversed(self.processes):
                with contextlib.suppress(OSError, subprocess.SubprocessError, psutil.Error):
                    proc.stop()
        finally:
            strays = self.stray_processes()
            for stray in strays:
                with contextlib.suppress(psutil.Error):
                    stray.kill()
            _LIVE.remove(self)
        assert not strays, f"processes left running after teardown: {strays}"


def make_stack(
    workdir: Path,
    *,
    database_url: str,
    simulator: SimulatorProcess,
    config: Path,
    redis_url: str | None,
) -> ServiceStack:
    env = {
        "JUDGE_DATABASE_URL": database_url,
        "JUDGE_SIMULATOR__URL": simulator.base_url,
        "JUDGE_CONFIG": str(config),
    }
    if redis_url:
        env["JUDGE_REDIS_URL"] = redis_url
    stack = ServiceStack(workdir, env)
    stack.upgrade()
    return stack


def sqlite_url(directory: Path) -> str:
    return f"sqlite+aiosqlite:///{directory / 'judge.db'}"


def _module_stack(
    tmp_path_factory: pytest.TempPathFactory,
    simulator: SimulatorProcess,
    config: Path,
    name: str,
    database_url: Callable[[Path], str],
    redis_url: str | None,
) -> Iterator[ServiceStack]:
    workdir = tmp_path_factory.mktemp(name)
    stack = make_stack(
        workdir,
        database_url=database_url(workdir),
        simulator=simulator,
        config=config,
        redis_url=redis_url,
    )
    try:
        if redis_url:
            stack.start_worker()
        stack.start_api()
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def sqlite_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
    private_redis: RedisServer,
) -> Iterator[ServiceStack]:
    """API and one Celery worker on SQLite and the module's private Redis (which a test may
    restart), shared by a module's tests."""
    yield from _module_stack(
        tmp_path_factory,
        service_simulator,
        service_config,
        "sqlite-stack",
        sqlite_url,
        private_redis.url(0),
    )


@pytest.fixture(scope="module")
def postgresql_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
    redis_databases: RedisDatabases,
    postgres_available: None,
) -> Iterator[ServiceStack]:
    """API and one Celery worker on PostgreSQL and Redis (shared by a module's tests)."""
    name, database_url = create_pg_database()
    url = redis_databases.acquire()
    try:
        yield from _module_stack(
            tmp_path_factory,
            service_simulator,
            service_config,
            "postgresql-stack",
            lambda _: database_url,
            url,
        )
    finally:
        redis_databases.release(url)
        drop_pg_database(name)


@pytest.fixture(scope="module")
def embedded_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
) -> Iterator[ServiceStack]:
    """``judge serve`` alone on SQLite: jobs run in the API process, no Redis."""
    yield from _module_stack(
        tmp_path_factory, service_simulator, service_config, "embedded-stack", sqlite_url, None
    )


@pytest.fixture(scope="module", params=BACKENDS)
def service_stack(request: pytest.FixtureRequest) -> ServiceStack:
    """API and one Celery worker, once on SQLite and once on PostgreSQL: a test that takes
    this fixture runs on both databases (``sqlite_stack`` and ``postgresql_stack``)."""
    stack: ServiceStack = request.getfixturevalue(f"{request.param}_stack")
    return stack
