"""HTTP metrics (per route template, never the raw path) and the ``/metrics`` endpoint."""

from __future__ import annotations

import time
from typing import Any

from litestar import Response, get
from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from judge import metrics


class HttpMetricsMiddleware(ASGIMiddleware):
    scopes = (ScopeType.HTTP,)
    exclude_path_pattern = ("^/metrics$",)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        started = time.perf_counter()
        status = 500

        async def capture(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await next_app(scope, receive, capture)
        finally:
            route = str(scope.get("path_template") or "unmatched")
            method = str(scope.get("method", "GET"))
            metrics.observe_http(method, route, status, time.perf_counter() - started)


@get(
    "/metrics",
    summary="Prometheus metrics",
    include_in_schema=False,
    sync_to_thread=True,
    opt={"public": True},
)
def metrics_endpoint() -> Response[Any]:
    """In a thread: the run gauges may read the database (:mod:`judge.runtime.run_gauges`)."""
    body, content_type = metrics.render_latest()
    return Response(body, media_type=content_type)
