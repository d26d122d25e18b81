""":class:`JudgeClient`, the blocking client, and its :class:`BatchHandle`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
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


class JudgeClient:
    """A running empathy-judge server (``judge serve``).

    Args:
        base_url: e.g. ``http://127.0.0.1:8000``.
        key: an API key (sent as ``Authorization: Bearer``), when the server requires one.
        timeout: seconds per HTTP request (``None``: no limit).
        retries: how often a 429 or 503 answer or a transport error is retried (after
            ``Retry-After``), with the same ``Idempotency-Key``.
        poll_interval: seconds between status checks while waiting.
    """

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
        self._http = httpx.Client(
            **_core.client_options(base_url, key, timeout, retries, asynchronous=False)
        )

    def __enter__(self) -> JudgeClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def request(self, call: _core.Call) -> Any:
        """Send ``call``; its JSON answer, or the typed problem raised."""
        try:
            response = self._http.request(call.method, call.path, **call.kwargs())
        except httpx.HTTPError as exc:
            raise ServerUnreachable(f"cannot reach the server: {exc}") from exc
        return _core.checked(response)

    def _poll(self, deadline: float | None) -> bool:
        """Sleep one interval unless that passes ``deadline``; False when time is up.

        Polling is the API's protocol for progress (there is no push channel), so the
        waiting loops here are the client's job."""
        if deadline is not None and time.monotonic() + self.poll_interval > deadline:
            return False
        time.sleep(self.poll_interval)
        return True

    # --- scores ---------------------------------------------------------------------------
    def score(
        self,
        rubric: str,
        item: dict[str, Any],
        *,
        wait: float | None = 60.0,
        panel: str | None = None,
        rubric_version: str | None = None,
        idempotency_key: str | None = None,
    ) -> _core.Score:
        """Score one item; with ``wait``, up to that many seconds for the result. Returns a
        :class:`~empathy_judge_client.wire.CompletedScore`, or the job's
        :class:`~empathy_judge_client.wire.JobStatus` when it failed or is not done in time.
        ``idempotency_key``: calling again with the same key (after this call raised, say)
        returns the same job instead of scoring the item twice."""
        deadline = None if wait is None else time.monotonic() + wait
        call = _core.score_call(rubric, item, panel, wait, rubric_version, idempotency_key)
        result = _core.parse_score(self.request(call))
        while result.status not in _core.FINAL_JOB_STATES and deadline and self._poll(deadline):
            result = _core.parse_score(self.request(_core.get_score_call(result.id)))
        return result

    def get_score(self, job_id: str) -> _core.Score:
        return _core.parse_score(self.request(_core.get_score_call(job_id)))

    # --- batches --------------------------------------------------------------------------
    def submit_batch(
        self,
        items: list[Any],
        rubric: str,
        panel: str | None = None,
        *,
        idempotency_key: str | None = None,
        mode: Literal["interactive", "economy"] = "interactive",
    ) -> BatchHandle:
        """Queue ``items`` (item objects) as one batch. Transport errors and 429/503 are
        retried with this call's ``Idempotency-Key``; pass ``idempotency_key`` to make calling
        again safe too (the same key returns the first batch, never a second one).
        ``mode="economy"``: the calls go through the providers' batch APIs at about half the
        price (OpenAI-compatible judges only); results take up to the provider's window."""
        call = _core.batch_call(items, rubric, panel, idempotency_key, mode)
        return BatchHandle(self, _core.parse_batch(self.request(call)))

    def submit_jsonl(
        self,
        path: Path | str,
        rubric: str,
        panel: str | None = None,
        *,
        idempotency_key: str | None = None,
        mode: Literal["interactive", "economy"] = "interactive",
    ) -> BatchHandle:
        """Upload a JSON Lines file (one item per line); bad lines come back as rejections.
        ``idempotency_key`` and ``mode`` as in :meth:`submit_batch`."""
        call = _core.jsonl_call(Path(path), rubric, panel, idempotency_key, mode)
        return BatchHandle(self, _core.parse_batch(self.request(call)))

    def batch(self, batch_id: str) -> BatchHandle:
        """A handle on an existing batch."""
        return BatchHandle(self, _core.parse_batch(self.request(_core.batch_status_call(batch_id))))

    def list_batches(
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
        return _core.parse_batch_page(self.request(call))

    def list_sessions(
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
        return _core.parse_session_page(self.request(call))

    def summary(self, batch_id: str) -> BatchSummary:
        """Per dimension: score distribution, flag shares and top reasons."""
        return _core.parse_summary(self.request(_core.batch_summary_call(batch_id)))

    def cancel(self, batch_id: str) -> BatchView:
        """Cancel the batch's queued items (running ones finish)."""
        return _core.parse_batch(self.request(_core.batch_cancel_call(batch_id)))

    # --- sessions -------------------------------------------------------------------------
    def submit_session(
        self,
        session: dict[str, Any],
        rubric: str,
        panel: str | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> SessionView:
        """Queue a whole session (every client turn is a checkpoint unless it names its
        ``checkpoints``); ``idempotency_key`` as in :meth:`submit_batch`."""
        call = _core.session_call(session, rubric, panel, idempotency_key)
        return _core.parse_session(self.request(call))

    def session(self, session_id: str) -> SessionView:
        """A session's checkpoints, trajectory and the supporter's measures so far."""
        return _core.parse_session(self.request(_core.session_status_call(session_id)))

    def wait_session(self, session_id: str, timeout: float | None = None) -> SessionView:
        """Poll until every checkpoint is judged (or failed).

        Raises:
            WaitTimeout: not done within ``timeout`` seconds.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            view = self.session(session_id)
            if _core.session_done(view):
                return view
            if not self._poll(deadline):
                raise WaitTimeout(f"session {session_id} is still {view.status} after {timeout}s")

    # --- calibration and reliability ------------------------------------------------------
    def calibrate(
        self,
        rubric: str,
        items: list[Any],
        *,
        panel: str | None = None,
        label: str | None = None,
        wait: float | None = 600.0,
    ) -> CalibrationView:
        """Start a calibration run on expert-labelled items; with ``wait``, until it is done.

        Raises:
            WaitTimeout: the run did not finish within ``wait`` seconds.
        """
        deadline = None if wait is None else time.monotonic() + wait
        view = _core.parse_calibration(
            self.request(_core.calibrate_call(rubric, items, panel, label, wait))
        )
        while wait is not None and not _core.calibration_done(view):
            if not self._poll(deadline):
                raise WaitTimeout(f"calibration {view.id} is still {view.status} after {wait}s")
            view = self.calibration(view.id)
        return view

    def calibration(self, run_id: str) -> CalibrationView:
        return _core.parse_calibration(self.request(_core.calibration_call(run_id)))

    def reliability(self, rubric: str) -> ReliabilityHistory:
        """A rubric's calibrations and canary runs (with drift)."""
        return _core.parse_reliability(self.request(_core.reliability_call(rubric)))

    # --- bias probes ------------------------------------------------------------------------
    def probe(self, body: dict[str, Any], *, wait: float | None = 600.0) -> dict[str, Any]:
        """Start a bias probe (``POST /v1/probes``); with ``wait``, until its report is ready.

        Raises:
            WaitTimeout: the probe did not finish within ``wait`` seconds.
        """
        deadline = None if wait is None else time.monotonic() + wait
        view: dict[str, Any] = self.request(_core.probe_call(body, wait))
        while wait is not None and view["status"] not in ("completed", "failed"):
            if not self._poll(deadline):
                raise WaitTimeout(f"probe {view['id']} is still {view['status']} after {wait}s")
            view = self.probe_run(view["id"])
        return view

    def probe_run(self, run_id: str) -> dict[str, Any]:
        data: dict[str, Any] = self.request(_core.probe_run_call(run_id))
        return data

    def plan_calibration(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/calibrations/plan`` (see the route's OpenAPI description)."""
        data: dict[str, Any] = self.request(_core.plan_call(body))
        return data

    def compare_aggregation(self, run_id: str, **options: Any) -> dict[str, Any]:
        """Equal vs reliability-weighted aggregation on a completed run's items."""
        data: dict[str, Any] = self.request(_core.aggregation_call(run_id, options))
        return data


class BatchHandle:
    """A submitted batch: :attr:`view` is its state when last fetched."""

    def __init__(self, client: JudgeClient, view: BatchView) -> None:
        self._client = client
        self.view = view

    @property
    def id(self) -> str:
        return self.view.id

    def status(self) -> BatchView:
        self.view = _core.parse_batch(self._client.request(_core.batch_status_call(self.id)))
        return self.view

    def wait(self, progress: Progress | None = None, timeout: float | None = None) -> BatchView:
        """Until every item is completed or failed; ``progress`` gets each fetched state.

        Raises:
            WaitTimeout: not done within ``timeout`` seconds.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        view = self.view
        while True:
            if progress is not None:
                progress(view)
            if _core.batch_done(view):
                return view
            if not self._client._poll(deadline):
                raise WaitTimeout(f"batch {self.id} is still {view.status} after {timeout}s")
            view = self.status()

    def lines(self) -> Iterator[str]:
        """The results as JSON Lines text, one line per item in submission order, streamed."""
        http = self._client._http
        call = _core.batch_results_call(self.id)
        try:
            with http.stream(call.method, call.path) as response:
                if response.status_code >= 400:
                    _core.raise_for_problem(response.status_code, response.read())
                for line in response.iter_lines():
                    if line.strip():
                        yield line
        except httpx.HTTPError as exc:
            raise ServerUnreachable(f"cannot reach the server: {exc}") from exc

    def escalations(self) -> EscalationsView:
        """The completed items a person must see (``escalate: human``), with the conversation."""
        return _core.parse_escalations(self._client.request(_core.batch_escalations_call(self.id)))

    def results(self) -> Iterator[_core.ResultLine]:
        """The results, parsed (:class:`~empathy_judge_client.wire.CompletedLine` or, for an
        item not
        done or failed, :class:`~empathy_judge_client.wire.JobStatusLine`), streamed."""
        for line in self.lines():
            yield _core.parse_line(line)

    def to_pandas(self) -> pandas.DataFrame:
        """The results as a DataFrame, one row per item and dimension (columns
        :data:`empathy_judge_client.export.COLUMNS`); needs the ``pandas`` extra."""
        return export.to_pandas(self.results())
