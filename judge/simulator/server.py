"""Run the simulator app with uvicorn: in the foreground (the CLI) or on a background thread."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path
from types import TracebackType

import uvicorn

from judge.simulator.app import SimulatorApp, create_app
from judge.simulator.options import SimulatorOptions


def _config(
    app: SimulatorApp, host: str, port: int, access_log: bool, log_level: str
) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="on",
        access_log=access_log,
        log_level=log_level,
        backlog=4096,
        timeout_keep_alive=30,
        timeout_graceful_shutdown=2,
    )


def _write_port_file(path: Path, port: int) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{port}\n", encoding="utf-8")
    os.replace(tmp, path)


def serve(
    app: SimulatorApp,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    port_file: Path | None = None,
    access_log: bool = False,
    log_level: str = "warning",
) -> None:
    """Serve until interrupted. ``port=0`` picks a free port; ``port_file`` receives the port
    once the socket is bound (before the first request can be answered)."""
    config = _config(app, host, port, access_log, log_level)
    sock = config.bind_socket()
    bound = sock.getsockname()[1]
    sys.stderr.write(
        f"empathy-judge LLM simulator (simulated judges, not real models) listening on "
        f"http://{host}:{bound}/v1\n"
    )
    sys.stderr.flush()
    if port_file is not None:
        _write_port_file(port_file, bound)
    uvicorn.Server(config).run(sockets=[sock])


class SimulatorThread:
    """The simulator on a background thread of this process (context manager).

    Cheaper to start than :class:`~judge.simulator.process.SimulatorProcess` but it shares
    this process's CPU and GIL with the caller."""

    def __init__(self, options: SimulatorOptions | None = None, host: str = "127.0.0.1") -> None:
        self.app = create_app(options)
        self.host = host
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self, timeout: float = 10.0) -> SimulatorThread:
        config = _config(self.app, self.host, 0, False, "warning")
        sock = config.bind_socket()
        self.port = sock.getsockname()[1]
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="llm-simulator", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                sock.close()
                raise RuntimeError("the in-process LLM simulator did not start")
            time.sleep(0.01)
        self._sock = sock
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
            self._thread = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> SimulatorThread:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
