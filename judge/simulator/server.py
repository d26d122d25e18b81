"""Run the simulator app with uvicorn: in the foreground (the CLI) or on a background thread."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import uvicorn

from judge.simulator.app import SimulatorApp


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
