"""Work a request no longer needs is stopped: :func:`unless_disconnected` runs a coroutine
while watching the connection, and cancels it when the client goes away."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

import anyio
from litestar import Request

from judge.api.problems import ProblemError

T = TypeVar("T")


#: nginx's "client closed request": logged nowhere, delivered to no one
CLIENT_CLOSED = 499


async def unless_disconnected(request: Request[Any, Any, Any], work: Awaitable[T]) -> T:
    """``await work``, cancelled (and a 499 problem raised) if the client disconnects
    first. For requests whose body is already read (or that have none): the server's
    ``receive`` then waits for nothing but the disconnect."""
    result: list[T] = []
    failure: list[Exception] = []

    async def run(scope: anyio.CancelScope) -> None:
        try:
            result.append(await work)
        except Exception as exc:  # raised below as itself, not in a task group's group
            failure.append(exc)
        scope.cancel()

    async def watch(scope: anyio.CancelScope) -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        scope.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(run, group.cancel_scope)
        group.start_soon(watch, group.cancel_scope)
    if failure:
        raise failure[0]
    if not result:
        raise ProblemError(CLIENT_CLOSED, "the client closed the connection")
    return result[0]
