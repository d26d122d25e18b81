"""Every error becomes an RFC 9457 problem details response that names the offending field.

Domain errors carry no HTTP codes; one table (:data:`PROBLEMS`) maps them at the edge, by
their class or the nearest base class that has a row. A :class:`~judge.errors.JudgeError`
without a row is a bug and answers 500, like any other unexpected error. Every problem carries a
``request_id`` (also the ``X-Request-ID`` response header, and taken from that request header
when it is a plain token), which every log line about the error repeats: callers get a reason
and the id to quote, the log has the rest. No exception text from a driver or provider is
ever put into a response.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from litestar import Request, Response
from litestar.exceptions import (
    ClientException,
    HTTPException,
    SerializationException,
    ValidationException,
)

from judge.api.idempotency import HEADER as IDEMPOTENCY_HEADER
from judge.domain.wire import PROBLEM_JSON
from judge.errors import (
    BaselineNotCompleted,
    CalibrationTooLarge,
    ConfigError,
    Conflict,
    IdempotencyKeyInvalid,
    IdempotencyKeyReused,
    InputFileInvalid,
    ItemInvalid,
    JsonLinesInvalid,
    JudgeError,
    NotFound,
    NotReady,
    PanelNotFound,
    RubricError,
    RubricNotFound,
    TooLarge,
    Unavailable,
)

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-ID"
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
#: a detail longer than this is cut (it may echo a caller's value)
MAX_DETAIL_CHARS = 1_000


def _title(status: int) -> str:
    """The standard reason phrase (RFC 9110) for a status, e.g. 429 "Too Many Requests"."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


class ProblemError(Exception):
    """Raised at the edge itself (authentication, quotas, reading a request) for a precise
    problem response; errors of the use cases are :class:`~judge.errors.JudgeError`."""

    def __init__(self, status: int, detail: str, *, field: str | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.field = field
        self.extra = extra


def request_id(request: Request[Any, Any, Any]) -> str:
    """The request's correlation id: the caller's ``X-Request-ID`` when it is a plain token of
    8 to 64 characters, else a new one (kept for the rest of the request)."""
    state = request.scope.setdefault("state", {})
    if "request_id" not in state:
        given = request.headers.get(REQUEST_ID_HEADER, "")
        state["request_id"] = given if _REQUEST_ID.match(given) else uuid.uuid4().hex[:16]
    value: str = state["request_id"]
    return value


def problem(
    request: Request[Any, Any, Any],
    status: int,
    detail: str,
    *,
    field: str | None = None,
    **extra: Any,
) -> Response[dict[str, Any]]:
    rid = request_id(request)
    if len(detail) > MAX_DETAIL_CHARS:
        detail = detail[: MAX_DETAIL_CHARS - 1] + "…"
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": _title(status),
        "status": status,
        "detail": detail,
        "instance": request.url.path,
    }
    if field is not None:
        body["field"] = field
    retry_after = extra.pop("retry_after", None)
    more_headers: dict[str, str] = extra.pop("headers", None) or {}
    body.update(extra)
    body["request_id"] = rid
    headers = {REQUEST_ID_HEADER: rid, **more_headers}
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    if status >= 500 or status == 413:
        log.warning(
            "%s %s -> %d [request %s]: %s", request.method, request.url.path, status, rid, detail
        )
    return Response(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def _message(exc: JudgeError) -> str:
    return exc.message


def _nothing(exc: JudgeError, field: str | None) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class ProblemRow:
    """How a kind of error is answered: its status, the input it names when the error does
    not say (``field``), its detail, and members beyond RFC 9457's."""

    status: int
    field: str | None = None
    detail: Callable[[Any], str] = _message
    extra: Callable[[Any, str | None], dict[str, Any]] = _nothing
    #: a dependency is down: 503 with ``Retry-After``, the error itself only in the log
    outage: bool = False


def _body_rubric(exc: RubricNotFound, field: str | None) -> dict[str, Any]:
    """A rubric named in the body is echoed (one named in the path is in ``instance``)."""
    return {"rubric": exc.rubric_id} if field == "rubric" else {}


#: the input an ``Idempotency-Key`` problem names
IDEMPOTENCY_FIELD = f"header.{IDEMPOTENCY_HEADER}"

#: every kind of JudgeError -> its problem (looked up by class, then by base class)
PROBLEMS: dict[type[JudgeError], ProblemRow] = {
    NotFound: ProblemRow(404, "id"),
    RubricNotFound: ProblemRow(404, "rubric", extra=_body_rubric),
    NotReady: ProblemRow(409, "id"),
    Conflict: ProblemRow(409, "id"),
    # 422 rather than 409: a value in the request (a header, a body field) is what is wrong
    IdempotencyKeyReused: ProblemRow(422, IDEMPOTENCY_FIELD),
    IdempotencyKeyInvalid: ProblemRow(422, IDEMPOTENCY_FIELD),
    BaselineNotCompleted: ProblemRow(422, "calibration_id"),
    TooLarge: ProblemRow(413),
    CalibrationTooLarge: ProblemRow(413, "items"),
    ItemInvalid: ProblemRow(422, detail=lambda exc: exc.detail),
    PanelNotFound: ProblemRow(422, "panel"),
    JsonLinesInvalid: ProblemRow(422),
    InputFileInvalid: ProblemRow(422),
    # the server's own rubric files and settings: not the caller's to fix
    RubricError: ProblemRow(503),
    ConfigError: ProblemRow(503),
    Unavailable: ProblemRow(503, outage=True),
}


def problem_row(kind: type[BaseException]) -> ProblemRow | None:
    """The row of ``kind`` or of its nearest base class that has one."""
    for cls in kind.__mro__:
        row = PROBLEMS.get(cls)
        if row is not None:
            return row
    return None


def _validation_field(exc: ValidationException) -> tuple[str | None, str]:
    extra = exc.extra if isinstance(exc.extra, list) else []
    if extra and isinstance(extra[0], dict):
        first = extra[0]
        key = first.get("key")
        message = str(first.get("message") or exc.detail)
        source = first.get("source")
        if key == "data" and source == "body":  # no body at all
            return "body", "a JSON object body is required"
        if key and source == "path":
            if "matching regex" in message:  # an id of ours (routes.ID_PATTERN) or a rubric id
                message = "is not an id this service issues (32 lowercase hexadecimal characters)"
            return f"path.{key}", message
        if key:
            return (f"query.{key}" if source == "query" else str(key)), message
        return "body", message  # the body as a whole (e.g. an array instead of an object)
    return None, str(exc.detail)


def _retry_after(request: Request[Any, Any, Any]) -> int:
    """Seconds a caller should wait before retrying while a dependency is down."""
    state = getattr(request.app.state, "api", None)
    return state.runtime.settings.api.retry_after_s if state is not None else 5


def _is_outage(request: Request[Any, Any, Any], exc: Exception) -> bool:
    """The database (as the service runtime classifies its errors) or the queue is down."""
    row = problem_row(type(exc))
    if isinstance(exc, ConnectionError) or (row is not None and row.outage):
        return True
    state = getattr(request.app.state, "api", None)
    return state is not None and state.runtime.is_outage(exc)


def handle_exception(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    if _is_outage(request, exc):
        log.error(
            "a dependency failed on %s %s [request %s]: %r",
            request.method,
            request.url.path,
            request_id(request),
            exc,
        )
        return problem(
            request,
            503,
            "unavailable: the database or the job queue does not answer; retry",
            retry_after=_retry_after(request),
        )
    if isinstance(exc, RecursionError):
        # only reading the body recurses (msgspec, pydantic): every walk of ours is iterative
        return problem(request, 422, "the body is nested too deeply to read", field="body")
    if isinstance(exc, ProblemError):
        return problem(request, exc.status, exc.detail, field=exc.field, **exc.extra)
    row = problem_row(type(exc))
    if row is not None and isinstance(exc, JudgeError):
        named = exc.field if exc.field is not None else row.field
        return problem(request, row.status, row.detail(exc), field=named, **row.extra(exc, named))
    if isinstance(exc, ValidationException):
        field, message = _validation_field(exc)
        if "JSON" in message or "decode" in message.lower() or "Malformed" in str(exc.detail):
            return problem(request, 422, f"the body is not valid JSON: {message}", field="body")
        return problem(request, 422, message, field=field)
    if isinstance(exc, ClientException) and isinstance(exc.__cause__, SerializationException):
        # Litestar could not decode the body as JSON: a 422 naming the body, not a bare 400
        return problem(request, 422, f"the body is not valid JSON: {exc.detail}", field="body")
    if isinstance(exc, HTTPException):
        return problem(request, exc.status_code, str(exc.detail))
    rid = request_id(request)
    log.exception("unhandled error on %s %s [request %s]", request.method, request.url.path, rid)
    return problem(
        request, 500, f"internal_error: an internal error occurred; it has been logged as {rid}"
    )
