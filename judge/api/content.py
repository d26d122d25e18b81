"""What a request body may be sent as: unencoded. A ``Content-Encoding`` (gzip, br, ...) is
answered 415 before the body is read, rather than ignored (a gzip batch read as JSON Lines
would be all rejections) or inflated without a bound (a small body can expand a thousandfold).
"""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from judge.api.problems import ProblemError

#: the only body encoding accepted (RFC 9110 section 8.4: "identity" is no encoding)
IDENTITY = "identity"


async def refuse_encoded_bodies(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> None:
    """A guard (after authentication): 415 for a body with a ``Content-Encoding``."""
    codings = [
        c.strip().lower()
        for value in connection.headers.getall("content-encoding", [])
        for c in value.split(",")
    ]
    if any(c and c != IDENTITY for c in codings):
        raise ProblemError(
            415,
            "compressed request bodies are not accepted: send the body without a Content-Encoding",
            field="header.Content-Encoding",
            headers={"Accept-Encoding": IDENTITY},
        )
