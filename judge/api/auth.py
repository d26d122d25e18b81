"""Fail-closed authentication: every route needs a bearer API key unless it is declared
public (``opt={"public": True}``: /health, /ready, /metrics, the API docs), or keys are not
required: ``api.require_keys`` off, or unset and all of these hold: the server is bound to and
reached on loopback, the client is a loopback address, the request carries no proxy header
(a reverse proxy on the same host makes remote clients look local) and no API key exists
(once one does, keyless use would bypass it through any local relay). Scopes: ``score``,
``batch``, ``calibrate`` and ``admin`` (admin implies the others and reads every key's data).

Key lookups are cached for ``api.key_cache_s`` (a revoked key stops working within that
time), and a known key keeps working for ``api.key_stale_s`` while the database is down, so
routes that need only memory (rubrics) stay up during an outage; revocations read before the
outage hold during it (:class:`~judge.services.keys.KeyCache`). A caller without a key this
process has seen valid is limited per client address (``api.auth_failure_limit`` failures;
429 beyond, before any lookup).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from judge.api.problems import ProblemError
from judge.domain.principal import ADMIN, ANONYMOUS, Principal
from judge.services.keys import KeyInfo
from judge.settings import ApiSettings, is_loopback


def bearer_token(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    header = connection.headers.get("authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else ""


def keys_required(settings: ApiSettings, server_host: str) -> bool:
    """Required when configured so; when unset, unless bound to and reached on loopback
    (``server_host``: the address the request came in on; an app run by another ASGI server
    on a public address is reached on a public one, whatever ``api.host`` says)."""
    if settings.require_keys is not None:
        return settings.require_keys
    return settings.keys_required() or not is_loopback(server_host)


def _server_host(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    server = connection.scope.get("server") or ("127.0.0.1", 0)
    return str(server[0])


#: headers a reverse proxy adds: a request carrying one was relayed (or claims to be)
PROXY_HEADERS = (
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
    "via",
)


def _remote_client(connection: ASGIConnection[Any, Any, Any, Any]) -> bool:
    """The client is an address off this machine (a trusted proxy's X-Forwarded-For, as
    uvicorn resolved it, or the peer itself); a name (a test client's) is not an address."""
    client = connection.scope.get("client")
    if not client:
        return False
    try:
        return not ipaddress.ip_address(str(client[0])).is_loopback
    except ValueError:
        return False


async def keys_required_for(connection: ASGIConnection[Any, Any, Any, Any], state: Any) -> bool:
    """Does this keyless request need a key? (See the module docstring for the rule.)"""
    api: ApiSettings = state.runtime.settings.api
    if api.require_keys is not None:
        return api.require_keys
    if keys_required(api, _server_host(connection)) or _remote_client(connection):
        return True
    if any(name in connection.headers for name in PROXY_HEADERS):
        return True
    return bool(await state.keys.any_active())


async def require_key(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> None:
    """The app's one guard: deny unless public, or a valid key with the route's scope."""
    if handler.opt.get("public"):
        return
    state = connection.app.state.api
    token = bearer_token(connection)
    client = _client_host(connection)
    if not (token and state.keys.known(token)):
        # not a key seen valid: refused before any lookup once its address failed too often
        await state.quotas.check_auth_failures(client)
    try:
        key = await _authenticate(connection, state, token)
    except ProblemError:
        await state.quotas.auth_failed(client)
        raise
    if key is None:
        connection.state.principal = ANONYMOUS
        return
    scope = handler.opt.get("scope")
    if scope is not None and scope not in key.scopes and ADMIN not in key.scopes:
        raise ProblemError(403, f"the API key {key.prefix}… lacks the {scope!r} scope")
    connection.state.principal = Principal(key_id=key.id, scopes=key.scopes)
    await state.quotas.check_rate(key.id)


async def _authenticate(
    connection: ASGIConnection[Any, Any, Any, Any], state: Any, token: str
) -> KeyInfo | None:
    """The caller's key (looked up), or None when keyless use is allowed; a 401 otherwise."""
    if not token and connection.headers.get("authorization"):
        raise ProblemError(401, "send the API key as 'Authorization: Bearer <key>'")
    if not token:
        if await keys_required_for(connection, state):
            raise ProblemError(
                401, "this server requires an API key: send 'Authorization: Bearer <key>'"
            )
        return None
    key: KeyInfo | None = await state.keys.authenticate(token)
    if key is None:
        raise ProblemError(401, "the API key is unknown or revoked")
    return key


def _client_host(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    client = connection.scope.get("client")
    return str(client[0]) if client else ""


def principal(connection: ASGIConnection[Any, Any, Any, Any]) -> Principal:
    """The caller, as the guard identified it."""
    found: Principal = connection.state.get("principal", ANONYMOUS)
    return found
