"""The edge holds against abusive clients, with no API key needed to try: oversized or too
many headers get 431, clients that send their request too slowly get 408 (or, idle, a close),
connections beyond the cap get 503, and a keep-alive connection is closed after its quota of
requests; through all of it the server keeps answering ``/health``. Real processes:
``judge serve`` on PostgreSQL, raw sockets as the clients. No timing is asserted."""

from __future__ import annotations

import contextlib
import http.client
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures import loopback
from tests.fixtures.relay import Relay
from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import (
    ServiceStack,
    SimulatorProcess,
    create_pg_database,
    drop_pg_database,
    make_stack,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

MAX_CONNECTIONS = 20
PER_CLIENT = 10
KEEPALIVE_MAX_REQUESTS = 3
#: generous enough for a loaded machine to send a normal request in time
TIMEOUT_S = 3


@pytest.fixture(scope="module")
def edge_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
    postgres_available: None,
) -> Iterator[ServiceStack]:
    """``judge serve`` on PostgreSQL (jobs in-process) with short read timeouts, a small
    connection cap and a small keep-alive quota, so each limit is reached by a few sockets."""
    name, database_url = create_pg_database()
    stack = make_stack(
        tmp_path_factory.mktemp("edge-stack"),
        database_url=database_url,
        simulator=service_simulator,
        config=service_config,
        redis_url=None,
    )
    stack.env |= {
        "JUDGE_API__HEADER_TIMEOUT_S": str(TIMEOUT_S),
        "JUDGE_API__BODY_TIMEOUT_S": str(TIMEOUT_S),
        "JUDGE_API__MAX_CONNECTIONS": str(MAX_CONNECTIONS),
        "JUDGE_API__MAX_CONNECTIONS_PER_CLIENT": str(PER_CLIENT),
        "JUDGE_API__KEEPALIVE_MAX_REQUESTS": str(KEEPALIVE_MAX_REQUESTS),
    }
    try:
        stack.start_api()
        yield stack
    finally:
        stack.stop()
        drop_pg_database(name)


def send_raw(stack: ServiceStack, *chunks: bytes, source: str = "127.0.0.1") -> socket.socket:
    """A connection from ``source`` (any 127.x.y.z is this machine) that sent ``chunks`` (the
    server may close it while they are sent)."""
    sock = socket.create_connection(
        ("127.0.0.1", stack.port), timeout=60, source_address=(source, 0)
    )
    for chunk in chunks:
        try:
            sock.sendall(chunk)
        except OSError:  # refused mid-send: the answer is still there to read
            break
    return sock


def answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    with contextlib.closing(sock):
        while True:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            received += data
    return received


def status_of(response: bytes) -> int | None:
    """The status code of a raw HTTP response; None when the server sent nothing."""
    if not response:
        return None
    return int(response.split(b" ", 2)[1])


def assert_healthy(stack: ServiceStack) -> None:
    """``/health`` answers 200 (retried while refused connections are being closed)."""
    deadline = time.monotonic() + 60
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if loopback.get(f"{stack.base_url}/health", timeout=10).status_code == 200:
                return
        assert time.monotonic() < deadline, "the server stopped answering /health"
        time.sleep(0.2)


REQUEST_LINE = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def test_a_few_megabytes_of_header_get_431(edge_stack: ServiceStack) -> None:
    """One 3 MB header (sent in one go and in pieces) and 8 MB of headers in 64 KiB lines
    are refused with 431 as soon as the limit is passed, before they are buffered whole."""
    huge = b"X-Big: " + b"a" * (3 * 1024 * 1024) + b"\r\n\r\n"
    one_go = answer(send_raw(edge_stack, REQUEST_LINE + huge))
    pieces = [huge[i : i + 1000] for i in range(0, len(huge), 1000)]
    in_pieces = answer(send_raw(edge_stack, REQUEST_LINE, *pieces))
    lines = b"".join(b"X-%d: %s\r\n" % (n, b"b" * 65536) for n in range(128))
    many_big = answer(send_raw(edge_stack, REQUEST_LINE + lines + b"\r\n"))
    for response in (one_go, in_pieces, many_big):
        assert status_of(response) == 431, response[:200]
        assert b"request headers larger than" in response
    assert_healthy(edge_stack)


def test_too_many_headers_get_431(edge_stack: ServiceStack) -> None:
    headers = b"".join(b"X-%d: 1\r\n" % n for n in range(150))
    response = answer(send_raw(edge_stack, REQUEST_LINE + headers + b"\r\n"))
    assert status_of(response) == 431
    assert b"more than 100 request headers" in response
    assert_healthy(edge_stack)


def test_a_request_at_the_limits_is_served(edge_stack: ServiceStack) -> None:
    """Ninety headers of 300 bytes (27 KB, under the 32 KiB default) are an ordinary
    request."""
    headers = {f"X-Fill-{n}": "c" * 300 for n in range(90)}
    assert loopback.get(f"{edge_stack.base_url}/health", headers=headers).status_code == 200


def test_slow_and_idle_clients_are_cut_off(edge_stack: ServiceStack) -> None:
    """Headers never finished and a body never finished get 408; a connection that sends
    nothing is closed without an answer."""
    slow_headers = send_raw(edge_stack, REQUEST_LINE + b"X-Slow: 1\r\n")
    slow_body = send_raw(
        edge_stack,
        b"POST /v1/scores HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Content-Length: 1000\r\n\r\n{"rubric": ',
    )
    idle = send_raw(edge_stack)
    assert status_of(answer(slow_headers)) == 408
    assert status_of(answer(slow_body)) == 408
    assert status_of(answer(idle)) is None
    assert_healthy(edge_stack)
    assert edge_stack.api is not None
    assert "unhandled error" not in edge_stack.api.log_text()


def test_connections_beyond_the_cap_get_503_until_the_slow_ones_are_cut(
    edge_stack: ServiceStack,
) -> None:
    """Thirty half-sent requests from three addresses against a cap of twenty: the
    connections beyond the cap are refused at once (503 with Retry-After), the rest time out
    (408), and then the server serves again."""
    sources = [f"127.0.0.{1 + n % 3}" for n in range(MAX_CONNECTIONS + 10)]
    socks = [send_raw(edge_stack, REQUEST_LINE, source=source) for source in sources]
    responses = [answer(sock) for sock in socks]
    statuses = [status_of(r) for r in responses]
    assert set(statuses) <= {408, 503}, statuses
    refused = [r for r in responses if status_of(r) == 503]
    assert len(refused) >= 10, statuses  # the cap held (fewer were admitted than sent)
    assert all(b"retry-after: " in r.lower() for r in refused)
    assert any(b"too many connections: retry" in r for r in refused)  # the global cap
    assert statuses.count(408) >= 1
    assert_healthy(edge_stack)


def test_one_client_cannot_take_every_connection(edge_stack: ServiceStack) -> None:
    """Fifteen half-sent requests from one address against its cap of ten: five are refused
    at once, and while the other ten are held, another address (a liveness probe) is
    served."""
    socks = [send_raw(edge_stack, REQUEST_LINE) for _ in range(PER_CLIENT + 5)]
    probe = send_raw(
        edge_stack,
        b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        source="127.0.0.9",
    )
    assert status_of(answer(probe)) == 200
    statuses = [status_of(answer(sock)) for sock in socks]
    # (a keep-alive connection of an earlier test may still hold one of the address's slots)
    assert statuses.count(503) >= 5, statuses
    assert statuses.count(408) >= PER_CLIENT - 1, statuses  # held until their headers timed out
    assert statuses.count(503) + statuses.count(408) == len(statuses), statuses


def test_a_keep_alive_connection_is_closed_after_its_requests(edge_stack: ServiceStack) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", edge_stack.port, timeout=30)
    try:
        closes = []
        for _ in range(KEEPALIVE_MAX_REQUESTS):
            connection.request("GET", "/health")
            response = connection.getresponse()
            response.read()
            assert response.status == 200
            closes.append(response.getheader("connection"))
    finally:
        connection.close()
    assert closes[-1] == "close"
    assert "close" not in closes[:-1]


def labelled(n: int) -> dict[str, Any]:
    levels = (0, 1, 2)
    dims = ("emotional_reactions", "interpretations", "explorations")
    return {
        "id": f"c{n}",
        "item": {"seeker_post": f"{POSTS[n % len(POSTS)]} ({n})", "response": RESPONSES[n % 3]},
        "labels": {e: dict.fromkeys(dims, levels[(n + s) % 3]) for e, s in (("e1", 0), ("e2", 1))},
    }


def test_aggregation_comparisons_are_bounded_and_stop_with_their_client(
    edge_stack: ServiceStack,
) -> None:
    """The CPU-bound comparison: more than the bounded work is 422; clients that ask for the
    most and leave at once do not keep the server from answering the next one."""
    client = edge_stack.client
    body = {"rubric": "epitome", "items": [labelled(n) for n in range(30)]}
    run = client.post("/v1/calibrations", params={"wait": 120}, json=body)
    assert run.status_code == 200, run.text
    path = f"/v1/calibrations/{run.json()['id']}/aggregation"
    too_much = client.get(path, params={"repeats": 200, "resamples": 20_000})
    assert too_much.status_code == 422
    assert too_much.json()["field"] == "query.resamples"
    request = f"GET {path}?repeats=20&resamples=10000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    for _ in range(3):
        send_raw(edge_stack, request.encode()).close()  # asks, then goes away
    deadline = time.monotonic() + 120
    while (answer := client.get(path)).status_code == 429:  # the slots are freed
        assert time.monotonic() < deadline, "abandoned comparisons still hold their slots"
        time.sleep(0.2)
    assert answer.status_code == 200, answer.text
    assert set(answer.json()["dimensions"]) == {
        "emotional_reactions",
        "interpretations",
        "explorations",
    }
    assert_healthy(edge_stack)
    assert edge_stack.api is not None
    log = edge_stack.api.log_text()
    assert "unhandled error" not in log
    assert "Traceback" not in log, log[-3000:]


def test_a_local_reverse_proxy_does_not_open_a_keyless_loopback_server(
    edge_stack: ServiceStack,
) -> None:
    """Loopback bind, ``require_keys`` unset: a relayed request (proxy headers) needs a key
    even before any exists; once a key exists, so does every request, relayed or not."""
    direct = httpx.Client(base_url=edge_stack.base_url, timeout=30)
    with Relay(edge_stack.base_url) as relay, direct:
        assert direct.get("/v1/rubrics").status_code == 200  # one local user, no key yet
        relayed = loopback.get(f"{relay.url}/v1/rubrics", timeout=30)
        assert relayed.status_code == 401
        assert "requires an API key" in relayed.json()["detail"]
        assert loopback.get(f"{relay.url}/health", timeout=30).status_code == 200  # public

        secret = edge_stack.create_key("behind-proxy", "score")
        deadline = time.monotonic() + 15  # the key cache notices the new key within 5 s
        while direct.get("/v1/rubrics").status_code != 401:
            assert time.monotonic() < deadline, "keyless requests served although a key exists"
            time.sleep(0.25)
        keyed = {"Authorization": f"Bearer {secret}"}
        assert loopback.get(f"{relay.url}/v1/rubrics", headers=keyed, timeout=30).status_code == 200
        assert direct.get("/v1/rubrics", headers=keyed).status_code == 200
