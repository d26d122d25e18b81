"""A ``?wait=`` that ends when its client goes away: the request's wait for its jobs runs
under :func:`~judge.api.disconnect.unless_disconnected`, so a client that hangs up frees its
waiter slot at once instead of holding it for the whole wait (what it submitted stays
submitted)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from litestar import Request

from judge.api.disconnect import unless_disconnected
from judge.services.jobs import CompletionWaiter


class UntilDisconnect:
    """The process's waiter, for one request: a wait also ends (the request with a 499 that
    no one reads) when the client disconnects."""

    def __init__(self, waiter: CompletionWaiter, request: Request[Any, Any, Any]) -> None:
        self._waiter = waiter
        self._request = request

    def notify(self, job_id: str) -> None:
        self._waiter.notify(job_id)

    async def wait(self, job_ids: Sequence[str], timeout: float) -> None:
        await unless_disconnected(self._request, self._waiter.wait(job_ids, timeout))
