"""API keys at the edge, on PostgreSQL with ``judge serve`` as a real process: callers without
a valid key are rate limited per address (429 before any lookup, while a key already seen
keeps working; behind a trusted reverse proxy, per forwarded client), and a key revoked
before a database outage stays refused during it while the other keys keep the routes
served from memory."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures import loopback
from tests.fixtures.private_postgres import PrivatePostgres
from tests.fixtures.relay import Relay
from tests.fixtures.stacks import ServiceStack, SimulatorProcess, make_stack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

FAILURES_ALLOWED = 5
KEY_CACHE_S = 1


@pytest.fixture(scope="module")
def keys_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
    pg_server: PrivatePostgres,
) -> Iterator[ServiceStack]:
    stack = make_stack(
        tmp_path_factory.mktemp("keys-stack"),
        database_url=pg_server.url(),
        simulator=service_simulator,
        config=service_config,
        redis_url=None,
    )
    stack.env |= {
        "JUDGE_API__REQUIRE_KEYS": "true",
        "JUDGE_API__AUTH_FAILURE_LIMIT": f"{FAILURES_ALLOWED}/minute",
        "JUDGE_API__KEY_CACHE_S": str(KEY_CACHE_S),
        # a reverse proxy on this host: its X-Forwarded-For names the client
        "JUDGE_API__TRUSTED_PROXIES": '["127.0.0.1"]',
    }
    try:
        stack.create_key("first", "score")
        stack.create_key("second", "score")
        stack.start_api()
        yield stack
    finally:
        stack.stop()


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def test_a_key_revoked_before_an_outage_stays_revoked_during_it(
    keys_stack: ServiceStack, pg_server: PrivatePostgres
) -> None:
    client = keys_stack.client
    first, second = keys_stack.headers("first"), keys_stack.headers("second")
    assert client.get("/v1/rubrics", headers=first).status_code == 200
    assert client.get("/v1/rubrics", headers=second).status_code == 200
    revoked = keys_stack.judge("keys", "revoke", keys_stack.keys["second"][:10])
    assert revoked.returncode == 0, revoked.stderr
    # the API reads which keys are active every api.key_cache_s: wait for a read to have
    # happened since the revocation, without presenting the revoked key
    log_size = len(keys_stack.api.log_text()) if keys_stack.api else 0
    time.sleep(4 * KEY_CACHE_S)
    pg_server.stop()
    try:
        assert client.get("/v1/rubrics", headers=second).status_code == 401
        assert client.get("/v1/rubrics", headers=first).status_code == 200  # from memory
        assert client.get("/v1/scores/" + "0" * 32, headers=first).status_code == 503
    finally:
        pg_server.start()
    assert keys_stack.api is not None
    assert "unhandled error" not in keys_stack.api.log_text()[log_size:]


def test_callers_without_a_valid_key_are_limited_per_address(keys_stack: ServiceStack) -> None:
    client = keys_stack.client
    first = keys_stack.headers("first")
    assert client.get("/v1/rubrics", headers=first).status_code == 200
    statuses = [
        client.get("/v1/rubrics", headers=bearer(f"ej_junk-{n}")).status_code
        for n in range(FAILURES_ALLOWED + 1)
    ]
    # the earlier test's revoked key may have used one failure of this address's budget
    assert statuses[0] == 401, statuses
    assert statuses[-1] == 429, statuses
    assert statuses.count(401) + statuses.count(429) == len(statuses)
    assert statuses.count(401) <= FAILURES_ALLOWED
    for attempt in (bearer("ej_junk-more"), {}):  # junk or no key: refused before any lookup
        refused = client.get("/v1/rubrics", headers=attempt)
        assert refused.status_code == 429, refused.text
        assert int(refused.headers["retry-after"]) >= 1
        assert "failed authentications" in refused.json()["detail"]
    assert client.get("/v1/rubrics", headers=first).status_code == 200  # a key seen valid
    assert client.get("/health").status_code == 200  # public


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit(
    keys_stack: ServiceStack,
) -> None:
    """The relay's own address is trusted, so the limit counts the client it names: one
    client's failures do not lock out the next one behind the same proxy."""
    with Relay(keys_stack.base_url) as relay:

        def via(client: str, secret: str) -> int:
            headers = bearer(secret) | {"X-Test-Client": client}
            return loopback.get(f"{relay.url}/v1/rubrics", headers=headers, timeout=30).status_code

        noisy = [via("198.51.100.1", f"ej_junk-{n}") for n in range(FAILURES_ALLOWED + 1)]
        assert noisy == [401] * FAILURES_ALLOWED + [429]
        assert via("198.51.100.2", "ej_junk-other") == 401  # its own budget
        assert via("198.51.100.1", keys_stack.keys["first"]) == 200  # a key seen valid
