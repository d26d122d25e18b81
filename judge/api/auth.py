"""Bearer API keys with scopes: ``score``, ``batch`` and ``admin`` (admin implies the others)."""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from judge.api.problems import ProblemError
from judge.api.state import ApiState


async def require_scope(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> None:
    scope = handler.opt.get("scope")
    if scope is None:
        return
    state: ApiState = connection.app.state.api
    header = connection.headers.get("authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else ""
    if not token:
        if await state.auth_required():
            raise ProblemError(
                401, "this server requires an API key: send 'Authorization: Bearer <key>'"
            )
        return
    key = await state.runtime.keys.authenticate(token)
    if key is None:
        raise ProblemError(401, "the API key is unknown or revoked")
    if scope not in key.scopes and "admin" not in key.scopes:
        raise ProblemError(403, f"the API key {key.prefix}… lacks the {scope!r} scope")
    connection.state.api_key_id = key.id  # runs record their owner (probe_runs.owner)
