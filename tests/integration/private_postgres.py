"""A PostgreSQL server of a test's own (``initdb`` + ``pg_ctl`` on a free port), which the
test may stop and start: the shared server on 5432 serves other tests and is never stopped.
As root, the server runs as the ``postgres`` user (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from judge.bench.procs import free_port
from tests.integration.conftest import skip_or_fail


def _as_server_user() -> list[str]:
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


class PrivatePostgres:
    def __init__(self) -> None:
        binary = shutil.which("pg_ctl") or shutil.which("pg_ctl", path="/usr/lib/postgresql/15/bin")
        if binary is None or shutil.which("initdb") is None:
            skip_or_fail("pg_ctl/initdb are not installed")
        self.port = free_port()
        # outside pytest's root-only temporary directory: the server user must reach it
        self.root = Path(tempfile.mkdtemp(prefix="judge-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            [*_as_server_user(), *args], capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, f"{args[0]} failed:\n{done.stdout}\n{done.stderr}"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> PrivatePostgres:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")
        return self

    def stop(self) -> None:
        """A fast shutdown: sessions are cut, as when the database restarts under a load."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def destroy(self) -> None:
        with contextlib.suppress(AssertionError, subprocess.SubprocessError, OSError):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
