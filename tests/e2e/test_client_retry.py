"""The bundled client never duplicates a submission whose answer was lost: the API is killed
(SIGKILL) after it committed a batch and before its answer reached the client; the client
retries with the same ``Idempotency-Key`` until the restarted API answers, and gets the first
batch back. ``judge serve`` on PostgreSQL (jobs in-process), reached through a loopback TCP
relay that stands in for the network (it forwards bytes, and drops the one answer)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judge.client import JudgeClient
from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import (
    ServiceStack,
    SimulatorProcess,
    create_pg_database,
    drop_pg_database,
    make_stack,
    query,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


class Relay:
    """A loopback TCP relay to ``upstream`` (a port, changeable). The first answer that comes
    back is never delivered: ``on_first_answer`` runs instead (it kills the API) and the
    caller's connection is closed, as if the server had died before replying."""

    def __init__(self, upstream: int, on_first_answer: Any) -> None:
        self.upstream = upstream
        self._on_first_answer = on_first_answer
        self._dropped = threading.Event()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                caller, _ = self._server.accept()
                threading.Thread(target=self._serve, args=(caller,), daemon=True).start()

    def _serve(self, caller: socket.socket) -> None:
        try:
            server = socket.create_connection(("127.0.0.1", self.upstream), timeout=60)
        except OSError:
            caller.close()  # the API is down: the caller sees the connection drop
            return
        threading.Thread(target=self._pipe, args=(caller, server), daemon=True).start()
        self._answers(server, caller)

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def _answers(self, server: socket.socket, caller: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := server.recv(65536):
                if not self._dropped.is_set():
                    self._dropped.set()
                    self._on_first_answer()
                    break
                caller.sendall(chunk)
        for sock in (caller, server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes the other direction's recv
            sock.close()


@pytest.fixture
def pg_stack(
    tmp_path: Path,
    service_simulator: SimulatorProcess,
    service_config: Path,
    postgres_available: None,
) -> Iterator[ServiceStack]:
    name, database_url = create_pg_database()
    try:
        stack = make_stack(
            tmp_path,
            database_url=database_url,
            simulator=service_simulator,
            config=service_config,
            redis_url=None,
        )
        try:
            stack.start_api()
            yield stack
        finally:
            stack.stop()
    finally:
        drop_pg_database(name)


def item(n: int) -> dict[str, Any]:
    return {
        "id": f"retry-{n}",
        "seeker_post": f"{POSTS[n % len(POSTS)]} (retry {n})",
        "response": RESPONSES[n % len(RESPONSES)],
    }


def test_a_batch_whose_answer_was_lost_is_retried_without_a_duplicate(
    pg_stack: ServiceStack,
) -> None:
    stack = pg_stack
    restarted = threading.Event()

    def kill_and_restart() -> None:
        assert stack.api is not None
        stack.api.kill()  # the batch is committed: the API was answering

        def restart() -> None:
            stack.start_api()
            relay.upstream = stack.port
            restarted.set()

        threading.Thread(target=restart, daemon=True).start()

    relay = Relay(stack.port, kill_and_restart)
    try:
        # retries back off 0.5, 1, 2, 4, ... s: time for the API to come back
        with JudgeClient(f"http://127.0.0.1:{relay.port}", retries=10, timeout=60) as client:
            handle = client.submit_batch([item(n) for n in range(40)], "epitome")
        assert restarted.is_set()
        assert handle.view.total == 40
        batches = query(stack.database_url, "SELECT id FROM batches")
        assert batches == [(handle.id,)]
        jobs = query(stack.database_url, "SELECT count(*) FROM score_jobs")
        assert jobs == [(40,)]
    finally:
        relay.close()
