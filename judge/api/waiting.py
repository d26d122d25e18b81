"""A ``?wait=`` that ends when its client goes away: the request's wait for its jobs runs
under :func:`~judge.api.disconnect.unless_disconnected`, so a client that hangs up frees its
waiter slot at once instead of holding it for the whole wait (what it submitted stays
submitted)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from litestar import Request

from judge.api.disconnect import unless_disconnected
from judge.services.jobs import CompletionWaiter, Expectation, FinishedJobs


class UntilDisconnect:
    """The process's waiter, for one request: a wait also ends (the request with a 499 that
    no one reads) when the client disconnects."""

    def __init__(self, waiter: CompletionWaiter, request: Request[Any, Any, Any]) -> None:
        self._waiter = waiter
        self._request = request

    def notify(self, job_id: str, job: Any = None) -> None:
        self._waiter.notify(job_id, job)

    async def wait(self, job_ids: Sequence[str], timeout: float) -> FinishedJobs:
        return await unless_disconnected(self._request, self._waiter.wait(job_ids, timeout))

    def expect(self, job_ids: Sequence[str]) -> Expectation:
        return _ExpectedUntilDisconnect(self._waiter.expect(job_ids), self._request)


class _ExpectedUntilDisconnect:
    def __init__(self, inner: Expectation, request: Request[Any, Any, Any]) -> None:
        self._inner = inner
        self._request = request

    async def wait(self, timeout: float) -> FinishedJobs:
        try:
            return await unless_disconnected(self._request, self._inner.wait(timeout))
        finally:
            self._inner.close()

    def close(self) -> None:
        self._inner.close()
