"""The bundled simulator lives exactly as long as the command that started it: `judge serve`
stopped with SIGTERM (uvicorn re-raises it after shutting down, so no cleanup code of ours
runs after) or killed with SIGKILL leaves no simulator behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from judge.bench.procs import free_port
from tests.fixtures import loopback
from tests.fixtures.stacks import child_env

pytestmark = pytest.mark.integration


def _simulators_of(parent: psutil.Process) -> list[psutil.Process]:
    return [p for p in parent.children(recursive=True) if "simulate-llm" in " ".join(p.cmdline())]


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_judge_serve_leaves_no_simulator_behind(tmp_path: Path, how: signal.Signals) -> None:
    port = free_port()
    env = child_env({"JUDGE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'serve.db'}"})
    server = subprocess.Popen(
        [sys.executable, "-m", "judge", "serve", "--migrate", f"--port={port}"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, "judge serve exited"
            assert time.monotonic() < deadline, "judge serve did not answer /health"
            try:
                if loopback.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        (simulator,) = _simulators_of(psutil.Process(server.pid))
        server.send_signal(how)
        server.wait(timeout=30)
        gone, alive = psutil.wait_procs([simulator], timeout=10)
        assert not alive, f"the simulator (pid {simulator.pid}) outlived judge serve"
        assert gone
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
