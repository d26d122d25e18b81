"""Headers that keep a browser from misusing what the API serves: every response says
``X-Content-Type-Options: nosniff`` (a JSON body is never run as a script or page), and HTML
pages (a calibration report, the API docs) get a Content-Security-Policy, no framing and no
referrer. The report is plain HTML and inline SVG with one style block: it may load nothing
and run nothing. The Swagger UI page runs the bundled scripts and its inline initialiser. The
results viewer (/ui) runs no script either; its forms post to itself."""

from __future__ import annotations

from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

#: an HTML page of ours that needs nothing beyond its own inline styles
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
#: the API docs: Swagger UI's bundled assets, its inline start-up script, the OpenAPI JSON
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

#: the results viewer (/ui): its own stylesheet and images, forms posting to itself, no script
VIEWER_CSP = (
    "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


def page_csp(path: str) -> str:
    """The policy of an HTML page served at ``path``."""
    if path.startswith("/schema"):
        return DOCS_CSP
    return VIEWER_CSP if path == "/ui" or path.startswith("/ui/") else REPORT_CSP


class SecurityHeadersMiddleware(ASGIMiddleware):
    scopes = (ScopeType.HTTP,)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        csp = page_csp(str(scope.get("path", "")))

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableScopeHeaders.from_message(message)
                headers["X-Content-Type-Options"] = "nosniff"
                if headers.get("content-type", "").lower().startswith("text/html"):
                    headers["Content-Security-Policy"] = csp
                    headers["X-Frame-Options"] = "DENY"
                    headers["Referrer-Policy"] = "no-referrer"
            await send(message)

        await next_app(scope, receive, with_headers)
