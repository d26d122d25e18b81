"""A ``?wait=`` that ends when its client goes away: the request's wait for its jobs is
raced against the ASGI ``http.disconnect`` message, so a client that hangs up frees its
waiter slot at once instead of holding it for the whole wait."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from litestar import Request

from judge.services.jobs import CompletionWaiter


async def disconnected(request: Request[Any, Any, Any]) -> None:
    """Return once the client has gone away (the request's body has already been read, so
    the next ASGI message is the disconnect)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


class UntilDisconnect:
    """The process's waiter, for one request: a wait also ends when the client disconnects."""

    def __init__(self, waiter: CompletionWaiter, request: Request[Any, Any, Any]) -> None:
        self._waiter = waiter
        self._request = request

    def notify(self, job_id: str) -> None:
        self._waiter.notify(job_id)

    async def wait(self, job_ids: Sequence[str], timeout: float) -> None:
        waiting = asyncio.ensure_future(self._waiter.wait(job_ids, timeout))
        gone = asyncio.ensure_future(disconnected(self._request))
        try:
            await asyncio.wait((waiting, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (waiting, gone):
                task.cancel()
            # awaited after cancelling: no task is left pending when the request ends
            for task in (waiting, gone):
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if waiting.done() and not waiting.cancelled():
            waiting.result()  # a failure of the wait itself is the request's
