""":class:`AsyncJudgeClient`, the asyncio client, and its :class:`AsyncBatchHandle`: the same
methods as :mod:`empathy_judge_client.sync`, awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import httpx

from empathy_judge_client import _core, export
from empathy_judge_client.batch_summary import BatchSummary
from empathy_judge_client.errors import ServerUnreachable, WaitTimeout
from empathy_judge_client.escalations import EscalationsView
from empathy_judge_client.session_view import SessionView
from empathy_judge_client.wire import (
    BatchPage,
    BatchView,
    CalibrationView,
    ReliabilityHistory,
    SessionPage,
)

if TYPE_CHECKING:
    import pandas

Progress = Callable[[BatchView], None]


class AsyncJudgeClient:
    """A running empathy-judge server; arguments as :class:`empathy_judge_client.JudgeClient`."""

    def __init__(
        self,
        base_url: str,
        key: str | None = None,
        *,
        timeout: float | None = 300.0,
        retries: int = 5,
        poll_interval: float = 0.5,
    ) -> None:
        self.poll_interval = poll_interval
        self._http = httpx.AsyncClient(
            **_core.client_options(base_url, key, timeout, retries, asynchronous=True)
        )

    async def __aenter__(self) -> AsyncJudgeClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(self, call: _core.Call) -> Any:
        try:
            response = await self._http.request(call.method, call.path, **call.kwargs())
        except httpx.HTTPError as exc:
            raise ServerUnreachable(f"cannot reach the server: {exc}") from exc
        return _core.checked(response)

    async def _poll(self, deadline: float | None) -> bool:
        """As :meth:`empathy_judge_client.JudgeClient._poll` (polling is the API's protocol)."""
        if deadline is not None and time.monotonic() + self.poll_interval > deadline:
            return False
        await asyncio.sleep(self.poll_interval)
        return True

    async def score(
        self,
        rubric: str,
        item: dict[str, Any],
        *,
        wait: float | None = 60.0,
        panel: str | None = None,
        rubric_version: str | None = None,
        idempotency_key: str | None = None,
    ) -> _core.Score:
        """As :meth:`empathy_judge_client.JudgeClient.score`."""
        deadline = None if wait is None else time.monotonic() + wait
        call = _core.score_call(rubric, item, panel, wait, rubric_version, idempotency_key)
        result = _core.parse_score(await self.request(call))
        while (
            result.status not in _core.FINAL_JOB_STATES and deadline and await self._poll(deadline)
        ):
            result = _core.parse_score(await self.request(_core.get_score_call(result.id)))
        return result

    async def get_score(self, job_id: str) -> _core.Score:
        return _core.parse_score(await self.request(_core.get_score_call(job_id)))

    async def submit_batch(
        self,
        items: list[Any],
        rubric: str,
        panel: str | None = None,
        *,
        idempotency_key: str | None = None,
        mode: Literal["interactive", "economy"] = "interactive",
    ) -> AsyncBatchHandle:
        """As :meth:`empathy_judge_client.JudgeClient.submit_batch`."""
        call = _core.batch_call(items, rubric, panel, idempotency_key, mode)
        return AsyncBatchHandle(self, _core.parse_batch(await self.request(call)))

    async def submit_jsonl(
        self,
        path: Path | str,
        rubric: str,
        panel: str | None = None,
        *,
        idempotency_key: str | None = None,
        mode: Literal["interactive", "economy"] = "interactive",
    ) -> AsyncBatchHandle:
        """As :meth:`empathy_judge_client.JudgeClient.submit_jsonl`."""
        call = _core.jsonl_call(Path(path), rubric, panel, idempotency_key, mode)
        return AsyncBatchHandle(self, _core.parse_batch(await self.request(call)))

    async def submit_session(
        self,
        session: dict[str, Any],
        rubric: str,
        panel: str | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> SessionView:
        """As :meth:`empathy_judge_client.JudgeClient.submit_session`."""
        call = _core.session_call(session, rubric, panel, idempotency_key)
        return _core.parse_session(await self.request(call))

    async def session(self, session_id: str) -> SessionView:
        return _core.parse_session(await self.request(_core.session_status_call(session_id)))

    async def wait_session(self, session_id: str, timeout: float | None = None) -> SessionView:
        """As :meth:`empathy_judge_client.JudgeClient.wait_session`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            view = await self.session(session_id)
            if _core.session_done(view):
                return view
            if not await self._poll(deadline):
                raise WaitTimeout(f"session {session_id} is still {view.status} after {timeout}s")

    async def batch(self, batch_id: str) -> AsyncBatchHandle:
        data = await self.request(_core.batch_status_call(batch_id))
        return AsyncBatchHandle(self, _core.parse_batch(data))

    async def list_batches(
        self,
        *,
        rubric: str | None = None,
        panel: str | None = None,
        status: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> BatchPage:
        """The caller's batches, newest first, one page (``next_offset`` for the next)."""
        filters = {"rubric": rubric, "panel": panel, "status": status}
        call = _core.list_batches_call(filters | {"offset": offset, "limit": limit})
        return _core.parse_batch_page(await self.request(call))

    async def list_sessions(
        self,
        *,
        rubric: str | None = None,
        panel: str | None = None,
        status: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> SessionPage:
        """The caller's sessions, newest first, one page (``next_offset`` for the next)."""
        filters = {"rubric": rubric, "panel": panel, "status": status}
        call = _core.list_sessions_call(filters | {"offset": offset, "limit": limit})
        return _core.parse_session_page(await self.request(call))

    async def summary(self, batch_id: str) -> BatchSummary:
        """Per dimension: score distribution, flag shares and top reasons."""
        return _core.parse_summary(await self.request(_core.batch_summary_call(batch_id)))

    async def cancel(self, batch_id: str) -> BatchView:
        """Cancel the batch's queued items (running ones finish)."""
        return _core.parse_batch(await self.request(_core.batch_cancel_call(batch_id)))

    async def calibrate(
        self,
        rubric: str,
        items: list[Any],
        *,
        panel: str | None = None,
        label: str | None = None,
        wait: float | None = 600.0,
    ) -> CalibrationView:
        """As :meth:`empathy_judge_client.JudgeClient.calibrate`."""
        deadline = None if wait is None else time.monotonic() + wait
        call = _core.calibrate_call(rubric, items, panel, label, wait)
        view = _core.parse_calibration(await self.request(call))
        while wait is not None and not _core.calibration_done(view):
            if not await self._poll(deadline):
                raise WaitTimeout(f"calibration {view.id} is still {view.status} after {wait}s")
            view = await self.calibration(view.id)
        return view

    async def calibration(self, run_id: str) -> CalibrationView:
        return _core.parse_calibration(await self.request(_core.calibration_call(run_id)))

    async def reliability(self, rubric: str) -> ReliabilityHistory:
        return _core.parse_reliability(await self.request(_core.reliability_call(rubric)))


class AsyncBatchHandle:
    """As :class:`empathy_judge_client.BatchHandle`, awaited."""

    def __init__(self, client: AsyncJudgeClient, view: BatchView) -> None:
        self._client = client
        self.view = view

    @property
    def id(self) -> str:
        return self.view.id

    async def status(self) -> BatchView:
        data = await self._client.request(_core.batch_status_call(self.id))
        self.view = _core.parse_batch(data)
        return self.view

    async def wait(
        self, progress: Progress | None = None, timeout: float | None = None
    ) -> BatchView:
        deadline = None if timeout is None else time.monotonic() + timeout
        view = self.view
        while True:
            if progress is not None:
                progress(view)
            if _core.batch_done(view):
                return view
            if not await self._client._poll(deadline):
                raise WaitTimeout(f"batch {self.id} is still {view.status} after {timeout}s")
            view = await self.status()

    async def lines(self) -> AsyncIterator[str]:
        call = _core.batch_results_call(self.id)
        try:
            async with self._client._http.stream(call.method, call.path) as response:
                if response.status_code >= 400:
                    _core.raise_for_problem(response.status_code, await response.aread())
                async for line in response.aiter_lines():
                    if line.strip():
                        yield line
        except httpx.HTTPError as exc:
            raise ServerUnreachable(f"cannot reach the server: {exc}") from exc

    async def escalations(self) -> EscalationsView:
        data = await self._client.request(_core.batch_escalations_call(self.id))
        return _core.parse_escalations(data)

    async def results(self) -> AsyncIterator[_core.ResultLine]:
        async for line in self.lines():
            yield _core.parse_line(line)

    async def to_pandas(self) -> pandas.DataFrame:
        """As :meth:`empathy_judge_client.BatchHandle.to_pandas`."""
        return export.to_pandas([result async for result in self.results()])
