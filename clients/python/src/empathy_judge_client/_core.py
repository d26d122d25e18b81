"""The client's requests and response parsing, with no IO: shared by the sync and async clients.

A :class:`Call` says what to send; :func:`checked` turns a response into JSON or raises the
typed problem; the ``parse_*`` functions build the wire models of :mod:`empathy_judge_client.wire`.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import httpx
from httpx_retries import Retry, RetryTransport
from pydantic import Field, TypeAdapter

from empathy_judge_client.batch_summary import BatchSummary
from empathy_judge_client.errors import problem_error
from empathy_judge_client.escalations import EscalationsView
from empathy_judge_client.session_view import SessionView
from empathy_judge_client.wire import (
    NDJSON,
    BatchPage,
    BatchView,
    CalibrationView,
    CompletedLine,
    CompletedScore,
    JobStatus,
    JobStatusLine,
    ReliabilityHistory,
    SessionPage,
)

#: answers worth retrying: the server is rate limiting, or a dependency is briefly unavailable
RETRY_STATUSES = (429, 503)
#: transport errors worth retrying (with the request's own ``Idempotency-Key``)
RETRY_EXCEPTIONS = [httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError]
IDEMPOTENCY_HEADER = "Idempotency-Key"
FINAL_JOB_STATES = frozenset({"completed", "failed"})
#: the longest ``?wait=`` sent; a longer wait goes on by polling (servers cap it anyway)
MAX_SERVER_WAIT_S = 120.0

Score = CompletedScore | JobStatus
ResultLine = CompletedLine | JobStatusLine
_SCORE: TypeAdapter[Score] = TypeAdapter(Annotated[Score, Field(discriminator="status")])
_LINE: TypeAdapter[ResultLine] = TypeAdapter(Annotated[ResultLine, Field(discriminator="status")])


@dataclass(frozen=True)
class Call:
    """One HTTP request, as ``httpx.Client.request`` takes it."""

    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def kwargs(self) -> dict[str, Any]:
        out: dict[str, Any] = {"params": self.params, "headers": self.headers}
        if self.content is not None:
            out["content"] = self.content
        elif self.json is not None:
            out["json"] = self.json
        return out


def client_options(
    base_url: str, key: str | None, timeout: float | None, retries: int, *, asynchronous: bool
) -> dict[str, Any]:
    """``httpx.Client``/``AsyncClient`` arguments: base URL, bearer key, and a transport that
    retries 429 and 503 answers and transport errors (a refused connection, a connection lost
    before the answer, a timeout), waiting as the ``Retry-After`` header says, else backing
    off exponentially. A retry re-sends the very request: a POST's ``Idempotency-Key`` is the
    same on every try, so a retry after a lost answer returns what the first try created."""
    retry = Retry(
        total=retries,
        allowed_methods=["GET", "HEAD", "POST", "PUT", "DELETE"],
        status_forcelist=RETRY_STATUSES,
        retry_on_exceptions=RETRY_EXCEPTIONS,
        backoff_factor=0.5,
        max_backoff_wait=60.0,
        respect_retry_after_header=True,
    )
    inner = httpx.AsyncHTTPTransport() if asynchronous else httpx.HTTPTransport()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return {
        "base_url": base_url.rstrip("/"),
        "headers": headers,
        "timeout": timeout,
        "transport": RetryTransport(transport=inner, retry=retry),
    }


def _idempotent(key: str | None = None) -> dict[str, str]:
    """The ``Idempotency-Key`` header: the caller's ``key`` (the same key in a later call
    returns what the first created), else a new one for this call and its retries."""
    return {IDEMPOTENCY_HEADER: key or uuid.uuid4().hex}


def _drop_none(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _wait_param(wait: float | None) -> dict[str, float]:
    return {} if wait is None else {"wait": min(wait, MAX_SERVER_WAIT_S)}


# --- requests ------------------------------------------------------------------------------


def score_call(
    rubric: str,
    item: dict[str, Any],
    panel: str | None,
    wait: float | None,
    version: str | None,
    key: str | None = None,
) -> Call:
    body = _drop_none({"rubric": rubric, "item": item, "panel": panel, "rubric_version": version})
    return Call("POST", "/v1/scores", _wait_param(wait), json=body, headers=_idempotent(key))


def get_score_call(job_id: str) -> Call:
    return Call("GET", f"/v1/scores/{job_id}")


def _mode(mode: str) -> str | None:
    """``mode`` as sent: the default (``interactive``) is left out."""
    return None if mode == "interactive" else mode


def batch_call(
    items: list[Any],
    rubric: str,
    panel: str | None,
    key: str | None = None,
    mode: str = "interactive",
) -> Call:
    body = _drop_none({"rubric": rubric, "panel": panel, "items": items, "mode": _mode(mode)})
    return Call("POST", "/v1/batches", json=body, headers=_idempotent(key))


def jsonl_call(
    path: Path, rubric: str, panel: str | None, key: str | None = None, mode: str = "interactive"
) -> Call:
    """A JSON Lines file uploaded as it is: the server numbers and rejects its lines."""
    return Call(
        "POST",
        "/v1/batches",
        _drop_none({"rubric": rubric, "panel": panel, "mode": _mode(mode)}),
        content=Path(path).read_bytes(),
        headers={"Content-Type": NDJSON} | _idempotent(key),
    )


def session_call(
    session: dict[str, Any], rubric: str, panel: str | None, key: str | None = None
) -> Call:
    body = _drop_none({"rubric": rubric, "panel": panel, "session": session})
    return Call("POST", "/v1/sessions", json=body, headers=_idempotent(key))


def session_status_call(session_id: str) -> Call:
    return Call("GET", f"/v1/sessions/{session_id}")


def parse_session(data: Any) -> SessionView:
    return SessionView.model_validate(data)


def session_done(view: SessionView) -> bool:
    return view.status == "completed"


def batch_status_call(batch_id: str) -> Call:
    return Call("GET", f"/v1/batches/{batch_id}")


def list_batches_call(filters: dict[str, Any]) -> Call:
    return Call("GET", "/v1/batches", _drop_none(filters))


def list_sessions_call(filters: dict[str, Any]) -> Call:
    return Call("GET", "/v1/sessions", _drop_none(filters))


def batch_summary_call(batch_id: str) -> Call:
    return Call("GET", f"/v1/batches/{batch_id}/summary")


def batch_cancel_call(batch_id: str) -> Call:
    return Call("POST", f"/v1/batches/{batch_id}/cancel")


def batch_results_call(batch_id: str) -> Call:
    return Call("GET", f"/v1/batches/{batch_id}/results")


def batch_escalations_call(batch_id: str) -> Call:
    return Call("GET", f"/v1/batches/{batch_id}/escalations")


def calibrate_call(
    rubric: str, items: list[Any], panel: str | None, label: str | None, wait: float | None
) -> Call:
    body = {"rubric": rubric, "items": items} | _drop_none({"panel": panel, "label": label})
    return Call("POST", "/v1/calibrations", _wait_param(wait), json=body)


def calibration_call(run_id: str) -> Call:
    return Call("GET", f"/v1/calibrations/{run_id}")


def reliability_call(rubric: str) -> Call:
    return Call("GET", f"/v1/reliability/{rubric}")


def probe_call(body: dict[str, Any], wait: float | None) -> Call:
    return Call("POST", "/v1/probes", _wait_param(wait), json=body)


def probe_run_call(run_id: str) -> Call:
    return Call("GET", f"/v1/probes/{run_id}")


def plan_call(body: dict[str, Any]) -> Call:
    return Call("POST", "/v1/calibrations/plan", json=body)


def aggregation_call(run_id: str, options: dict[str, Any]) -> Call:
    return Call("GET", f"/v1/calibrations/{run_id}/aggregation", _drop_none(options))


# --- responses -----------------------------------------------------------------------------


def raise_for_problem(status: int, body: bytes) -> None:
    """Raise the typed :class:`~empathy_judge_client.errors.ProblemError` of a 4xx or 5xx answer."""
    if status < 400:
        return
    try:
        problem = json.loads(body)
    except ValueError:
        problem = None
    if not isinstance(problem, dict):
        problem = {"detail": body.decode("utf-8", "replace")[:500]}
    raise problem_error(status, problem)


def checked(response: httpx.Response) -> Any:
    """The response's JSON body, or the typed problem raised."""
    raise_for_problem(response.status_code, response.content)
    return response.json()


def parse_score(data: Any) -> Score:
    return _SCORE.validate_python(data)


def parse_line(text: str) -> ResultLine:
    return _LINE.validate_json(text)


def parse_batch(data: Any) -> BatchView:
    return BatchView.model_validate(data)


def parse_batch_page(data: Any) -> BatchPage:
    return BatchPage.model_validate(data)


def parse_session_page(data: Any) -> SessionPage:
    return SessionPage.model_validate(data)


def parse_summary(data: Any) -> BatchSummary:
    return BatchSummary.model_validate(data)


def parse_escalations(data: Any) -> EscalationsView:
    return EscalationsView.model_validate(data)


def parse_calibration(data: Any) -> CalibrationView:
    # a newer server's report may hold fields this client does not know: they are dropped
    return CalibrationView.model_validate(data, extra="ignore")


def parse_reliability(data: Any) -> ReliabilityHistory:
    return ReliabilityHistory.model_validate(data)


def batch_done(view: BatchView) -> bool:
    return view.status == "completed"


def calibration_done(view: CalibrationView) -> bool:
    return view.status in ("completed", "failed")
