"""The processes a benchmark run starts and watches: Redis, ``judge serve``, ``judge worker``,
``judge db upgrade``, and a sampler of their peak resident memory.

Service processes are started as ``python -m judge ...`` with this interpreter (never through
``uv run``), so the pid we hold is the Python process whose memory we report.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType

import psutil

from judge.bench.redis_local import RedisClaims, RedisServer, redis_answers

MB = 1024 * 1024


class BenchError(RuntimeError):
    """A benchmark step could not run (a process did not start, a batch did not finish)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def bytecode_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "empathy-judge" / "bench-pycache"


def service_env(extra: dict[str, str]) -> dict[str, str]:
    """This environment without any ``JUDGE_*`` setting of the caller's (a config file or panels
    would change what is measured), plus ``extra``.

    With ``PYTHONDONTWRITEBYTECODE`` set, every process would compile LiteLLM's ~3,000 modules
    from source on start (7-10 s instead of about 3 s here): the benchmark's processes keep
    their bytecode under a cache directory instead (``PYTHONPYCACHEPREFIX``), never in the
    source tree. Only start-up time changes; nothing measured depends on it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_")}
    if env.get("PYTHONDONTWRITEBYTECODE") and not env.get("PYTHONPYCACHEPREFIX"):
        del env["PYTHONDONTWRITEBYTECODE"]
        env["PYTHONPYCACHEPREFIX"] = str(bytecode_cache())
    env |= {"PYTHONUNBUFFERED": "1", "JUDGE_WORKER__METRICS_PORT": "0"}
    return env | extra


def judge_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "judge", *args]


def _tail(path: Path, chars: int = 3000) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-chars:]
    except OSError:
        return ""


def run_judge(args: Sequence[str], env: dict[str, str], log: Path, timeout: float = 120) -> None:
    """Run a short ``judge`` command to completion (e.g. ``db upgrade``)."""
    with log.open("wb") as out:
        done = subprocess.run(
            judge_command(*args),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
    if done.returncode != 0:
        raise BenchError(f"`judge {' '.join(args)}` failed:\n{_tail(log)}")


def run_parallel(jobs: Sequence[tuple[Sequence[str], dict[str, str], Path]]) -> None:
    """Run several short ``judge`` commands at once (e.g. one migration per database)."""
    threads: list[threading.Thread] = []
    errors: list[BaseException] = []

    def one(args: Sequence[str], env: dict[str, str], log: Path) -> None:
        try:
            run_judge(args, env, log)
        except BaseException as exc:
            errors.append(exc)

    for args, env, log in jobs:
        thread = threading.Thread(target=one, args=(args, env, log))
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


class Service:
    """A long-running ``judge`` process (``serve`` or ``worker``) with its log file."""

    def __init__(self, name: str, args: Sequence[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.args = list(args)
        self.env = env
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        if self.proc is None:
            raise BenchError(f"{self.name} is not running")
        return self.proc.pid

    def start(self) -> Service:
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                judge_command(*self.args),
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        return self

    def check_alive(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            code = None if self.proc is None else self.proc.returncode
            raise BenchError(f"{self.name} exited (code {code}):\n{_tail(self.log)}")

    def wait_http(self, url: str, timeout: float = 90, interval_s: float = 0.1) -> None:
        """Wait until ``url`` answers 200 (the process's HTTP server is up)."""
        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise BenchError(f"{self.name} did not answer {url} in {timeout:g} s")
            time.sleep(interval_s)

    def stop(self, timeout: float = 15) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __enter__(self) -> Service:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class RssSampler:
    """Samples the resident memory of named processes (and their children) on a thread; keeps
    the peak of each name."""

    def __init__(self, interval_s: float = 0.2) -> None:
        self.interval_s = interval_s
        self.peaks: dict[str, float] = {}
        self._watched: dict[str, psutil.Process] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)

    def watch(self, name: str, pid: int) -> None:
        with self._lock:
            self._watched[name] = psutil.Process(pid)

    def unwatch(self, name: str) -> None:
        self._sample()
        with self._lock:
            self._watched.pop(name, None)

    def peak_mb(self, name: str) -> float | None:
        value = self.peaks.get(name)
        return None if value is None else round(value / MB, 1)

    def _sample(self) -> None:
        with self._lock:
            watched = list(self._watched.items())
        for name, proc in watched:
            try:
                rss = proc.memory_info().rss
                for child in proc.children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        rss += child.memory_info().rss
            except psutil.Error:
                continue
            if rss > self.peaks.get(name, 0):
                self.peaks[name] = rss

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


# -- Redis ---------------------------------------------------------------------------------------
#: Database indexes the benchmark may claim on a shared Redis (the integration tests use 8-15).
BENCH_REDIS_DBS = tuple(range(7, 0, -1))
CLAIM_KEY = "judge-bench:claim"


def _ping(url: str) -> bool:
    """Does the Redis at ``url`` answer (any URL redis-py reads: password, no port, ...)?"""
    import redis

    try:
        with redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=5) as client:
            return bool(client.ping())
    except (redis.RedisError, OSError):
        return False


def _flush(url: str) -> None:
    import redis

    with contextlib.suppress(Exception), redis.Redis.from_url(url, socket_timeout=5) as client:
        client.flushdb()


@contextlib.contextmanager
def provide_redis(url: str | None, db: int | None) -> Iterator[tuple[str | None, str]]:
    """Yield (redis URL or None, how it was found). ``url`` when given (flushed before and
    after); else a database of Redis on 127.0.0.1:6379 when it answers (``db``, or the first
    free one of 7..1), claimed, and flushed when done; else a private ``redis-server`` on a
    free port. None when there is no Redis at all."""
    if url:
        if not _ping(url):
            raise BenchError(f"Redis at {url} does not answer")
        _flush(url)
        try:
            yield url, "given (flushed)"
        finally:
            _flush(url)
        return
    if redis_answers("127.0.0.1", 6379):
        claims = RedisClaims(
            "127.0.0.1", 6379, (db,) if db is not None else BENCH_REDIS_DBS, CLAIM_KEY
        )
        local = claims.acquire()
        if local is not None:
            try:
                yield local, f"127.0.0.1:6379 db {local.rsplit('/', 1)[1]} (claimed, flushed after)"
            finally:
                claims.release(local)
            return
        if db is not None:
            raise BenchError(f"Redis database {db} on 127.0.0.1:6379 is in use by someone else")
    with tempfile.TemporaryDirectory(prefix="judge-bench-redis-") as tmp:
        try:
            server = RedisServer(Path(tmp), free_port()).start(timeout=10)
        except FileNotFoundError:
            yield None, "no Redis answers on 127.0.0.1:6379 and redis-server is not installed"
            return
        except RuntimeError as exc:
            raise BenchError(f"the private redis-server did not start: {exc}") from None
        try:
            yield server.url(), f"private redis-server on port {server.port}"
        finally:
            server.kill()
