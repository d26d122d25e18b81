"""Every error becomes an RFC 9457 problem details response that names the offending field.

Domain errors carry no HTTP codes; this table maps them at the edge.
"""

from __future__ import annotations

import logging
from typing import Any

from litestar import Request, Response
from litestar.exceptions import (
    ClientException,
    HTTPException,
    SerializationException,
    ValidationException,
)

from judge.errors import ConfigError, ItemInvalid, JudgeError, PanelNotFound, RubricNotFound

log = logging.getLogger(__name__)
PROBLEM_JSON = "application/problem+json"
_TITLES = {
    400: "Bad request",
    401: "Authentication required",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request body too large",
    415: "Unsupported media type",
    422: "Invalid request",
    429: "Too many requests",
    500: "Internal server error",
    503: "Service unavailable",
}


class ProblemError(Exception):
    """Raised by handlers for a precise problem response."""

    def __init__(self, status: int, detail: str, *, field: str | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.field = field
        self.extra = extra


def problem(
    request: Request[Any, Any, Any],
    status: int,
    detail: str,
    *,
    field: str | None = None,
    **extra: Any,
) -> Response[dict[str, Any]]:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "instance": request.url.path,
    }
    if field is not None:
        body["field"] = field
    body.update(extra)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return Response(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def _validation_field(exc: ValidationException) -> tuple[str | None, str]:
    extra = exc.extra if isinstance(exc.extra, list) else []
    if extra and isinstance(extra[0], dict):
        first = extra[0]
        key = first.get("key")
        message = str(first.get("message") or exc.detail)
        source = first.get("source")
        if key == "data" and source == "body":  # no body at all
            return "body", "a JSON object body is required"
        if key:
            return (f"query.{key}" if source == "query" else str(key)), message
        return "body", message  # the body as a whole (e.g. an array instead of an object)
    return None, str(exc.detail)


def handle_exception(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    if isinstance(exc, ProblemError):
        return problem(request, exc.status, exc.detail, field=exc.field, **exc.extra)
    if isinstance(exc, ItemInvalid):
        return problem(request, 422, exc.detail, field=exc.field)
    if isinstance(exc, RubricNotFound):
        return problem(request, 404, exc.message, field="rubric", rubric=exc.rubric_id)
    if isinstance(exc, PanelNotFound):
        return problem(request, 422, exc.message, field="panel")
    if isinstance(exc, ConfigError):
        return problem(request, 503, exc.message)
    if isinstance(exc, JudgeError):
        return problem(request, 422, exc.message)
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
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return problem(request, 500, "an internal error occurred; it has been logged")
