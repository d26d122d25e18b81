"""What the client raises: a problem-details response as a typed exception, or no answer."""

from __future__ import annotations

import re
from typing import Any

_REASON = re.compile(r"^([a-z][a-z0-9_]{1,40}): ")


class JudgeClientError(Exception):
    """Anything :mod:`empathy_judge_client` raises."""


class ServerUnreachable(JudgeClientError):
    """No HTTP answer: connection refused, timed out, or the connection broke."""


class WaitTimeout(JudgeClientError):
    """A ``wait`` ran out before the job, batch or calibration finished."""


class ProblemError(JudgeClientError):
    """An RFC 9457 problem-details response (any 4xx or 5xx).

    Attributes:
        status: the HTTP status code.
        field: the offending input (``items.3.item.turns``, ``query.rubric``...), when named.
        reason: a reason code: the body's ``reason``, or the code a detail starts with
            (``unavailable: ...``); ``None`` when neither is there.
        detail, title, request_id: as in the body (``request_id`` is in the server's log).
        body: the whole problem object.
    """

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        self.title = str(body.get("title") or "")
        self.detail = str(body.get("detail") or self.title or f"HTTP {status}")
        self.field: str | None = body.get("field")
        self.request_id: str | None = body.get("request_id")
        match = _REASON.match(self.detail)
        self.reason: str | None = body.get("reason") or (match.group(1) if match else None)
        where = f" (field: {self.field})" if self.field else ""
        super().__init__(f"HTTP {status}: {self.detail}{where}")


class BadRequest(ProblemError):
    """400: the request could not be read."""


class Unauthorized(ProblemError):
    """401: no valid API key."""


class Forbidden(ProblemError):
    """403: the key lacks the route's scope."""


class NotFound(ProblemError):
    """404: no such rubric, job, batch or run."""


class Conflict(ProblemError):
    """409: the resource is not ready for this."""


class PayloadTooLarge(ProblemError):
    """413: the body or the batch is too large."""


class InvalidInput(ProblemError):
    """422: invalid input; :attr:`field` names it."""


class RateLimited(ProblemError):
    """429 after the client's retries."""


class ServiceUnavailable(ProblemError):
    """503 after the client's retries: a dependency or the configuration is not usable."""


_BY_STATUS: dict[int, type[ProblemError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: InvalidInput,
    429: RateLimited,
    503: ServiceUnavailable,
}


def problem_error(status: int, body: dict[str, Any]) -> ProblemError:
    """The exception class for ``status`` (:class:`ProblemError` for the others)."""
    return _BY_STATUS.get(status, ProblemError)(status, body)
