"""Run ``python -m judge simulate-llm`` as a child process (context manager).

Used by ``judge demo``, ``judge score`` and the tests. The child binds a free port and writes
it to a file; the parent waits for ``GET /health`` and exposes :attr:`base_url`. Stopping
sends SIGTERM, then SIGKILL if the child has not exited within a few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from judge.simulator.options import SimulatorOptions


class SimulatorStartError(RuntimeError):
    """The simulator child process exited or did not answer in time."""


class SimulatorProcess:
    def __init__(
        self,
        options: SimulatorOptions | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        startup_timeout: float = 60.0,
        python: str | None = None,
        extra_args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        self.options = options or SimulatorOptions()
        self.host = host
        self.port = port
        self.startup_timeout = startup_timeout
        self.python = python or sys.executable
        self.extra_args = extra_args
        self.env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    # -- addresses ------------------------------------------------------------------------
    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``api_base`` for LiteLLM), ending in ``/v1``."""
        return f"{self.root_url}/v1"

    @property
    def pid(self) -> int:
        """The child's process id (for CPU and memory measurements)."""
        if self._proc is None:
            raise SimulatorStartError("the LLM simulator is not running")
        return self._proc.pid

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # -- lifecycle ------------------------------------------------------------------------
    def command(self, port_file: Path) -> list[str]:
        return [
            self.python,
            "-m",
            "judge",
            "simulate-llm",
            f"--host={self.host}",
            f"--port={self.port}",
            f"--port-file={port_file}",
            f"--exit-with-parent={os.getpid()}",
            *self.options.to_args(),
            *self.extra_args,
        ]

    def start(self) -> SimulatorProcess:
        if self._proc is not None:
            return self
        self._tmp = tempfile.TemporaryDirectory(prefix="llm-simulator-")
        tmp = Path(self._tmp.name)
        port_file, log_file = tmp / "port", tmp / "stderr.log"
        env = {**os.environ, **(self.env or {}), "PYTHONUNBUFFERED": "1"}
        with log_file.open("wb") as log:
            self._proc = subprocess.Popen(
                self.command(port_file),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        deadline = time.monotonic() + self.startup_timeout
        try:
            while True:
                if self._proc.poll() is not None:
                    raise SimulatorStartError(
                        f"the LLM simulator exited with code {self._proc.returncode}:\n"
                        + log_file.read_text(encoding="utf-8", errors="replace")[-4000:]
                    )
                if port_file.exists() and self._healthy(int(port_file.read_text() or 0)):
                    return self
                if time.monotonic() > deadline:
                    raise SimulatorStartError(
                        f"the LLM simulator did not answer /health within "
                        f"{self.startup_timeout:g} s:\n"
                        + log_file.read_text(encoding="utf-8", errors="replace")[-4000:]
                    )
                time.sleep(0.05)
        except BaseException:
            self.stop()
            raise

    def _healthy(self, port: int) -> bool:
        if port <= 0:
            return False
        self.port = port
        try:
            with urllib.request.urlopen(f"{self.root_url}/health", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def stop(self, timeout: float = 5.0) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> SimulatorProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- control endpoints ----------------------------------------------------------------
    def _request(self, method: str, path: str, payload: Any = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(
            f"{self.root_url}{path}",
            data=data,
            method=method,
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def stats(self) -> dict[str, Any]:
        """Call counts and token totals per requested model name."""
        result: dict[str, Any] = self._request("GET", "/_simulator/stats")
        return result

    def reset_stats(self) -> None:
        self._request("DELETE", "/_simulator/stats")

    def set_alias(self, name: str, persona: str) -> None:
        """Point model name ``name`` at ``persona`` (e.g. ``lenient`` or ``noisy@2``)."""
        self._request("PUT", f"/_simulator/aliases/{name}", {"persona": persona})
