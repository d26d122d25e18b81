"""Redis for the benchmark and the test suite alike: a claim on one database of a shared
server (never touching others' data), and a private ``redis-server`` on a free port."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

HOST = "127.0.0.1"


def _client(host: str, port: int, db: int = 0) -> Any:
    import redis

    return redis.Redis(host=host, port=port, db=db, socket_connect_timeout=1, socket_timeout=5)


def redis_answers(host: str, port: int) -> bool:
    import redis

    try:
        with _client(host, port) as client:
            return bool(client.ping())
    except (redis.RedisError, OSError):
        return False


class RedisClaims:
    """Hands out database indexes of one server, each empty or left by a process of this
    machine that is gone: claimed with a key naming this process, flushed on release."""

    def __init__(self, host: str, port: int, dbs: Sequence[int], claim_key: str) -> None:
        self.host, self.port, self.dbs, self.claim_key = host, port, tuple(dbs), claim_key
        self.token = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"

    def _stale(self, owner: bytes) -> bool:
        host, _, rest = owner.decode(errors="replace").partition(":")
        pid = rest.partition(":")[0]
        return host == socket.gethostname() and pid.isdigit() and not psutil.pid_exists(int(pid))

    def claim(self, db: int) -> str | None:
        """The URL of database ``db``, now this process's; None when someone else holds it."""
        with _client(self.host, self.port, db) as client:
            owner = client.get(self.claim_key)
            free = owner is None and client.dbsize() == 0
            if not free and not (owner is not None and self._stale(owner)):
                return None
            if owner is None and not client.set(self.claim_key, self.token, nx=True):
                return None
            client.flushdb()
            client.set(self.claim_key, self.token)
        return f"redis://{self.host}:{self.port}/{db}"

    def acquire(self) -> str | None:
        """The first database that could be claimed, or None."""
        for db in self.dbs:
            url = self.claim(db)
            if url is not None:
                return url
        return None

    def release(self, url: str) -> None:
        import redis

        db = int(url.rsplit("/", 1)[1])
        with contextlib.suppress(redis.RedisError, OSError), _client(self.host, self.port, db) as r:
            if r.get(self.claim_key) == self.token.encode():
                r.flushdb()


class RedisServer:
    """A private ``redis-server`` on ``port``, without persistence; restartable."""

    def __init__(self, workdir: Path, port: int) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not installed")
        self.binary, self.workdir, self.port = binary, workdir, port
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://{HOST}:{self.port}/{db}"

    @property
    def log_file(self) -> Path:
        return self.workdir / "redis.log"

    def start(self, timeout: float = 15) -> RedisServer:
        command = [
            self.binary,
            *("--port", str(self.port), "--bind", HOST, "--save", "", "--appendonly", "no"),
            *("--dir", str(self.workdir), "--logfile", str(self.log_file)),
        ]
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while not redis_answers(HOST, self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                exists = self.log_file.exists()
                log = self.log_file.read_text(errors="replace")[-3000:] if exists else ""
                raise RuntimeError(f"redis-server on port {self.port} did not start:\n{log}")
            time.sleep(0.05)
        return self

    def shutdown(self) -> None:
        """``SHUTDOWN NOSAVE``: the data set is gone, as after a crash without persistence."""
        import redis

        if self.proc is None:
            return
        with contextlib.suppress(redis.RedisError, OSError), _client(HOST, self.port) as r:
            r.shutdown(nosave=True)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.shutdown()
        self.start()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
