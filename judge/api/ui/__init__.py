"""The results viewer under ``/ui``: server-rendered pages (Jinja through Litestar's template
engine, autoescaped) over the same services, keys and ownership as the API. No page runs a
script; filters are plain GET forms and the CSV is a link, so every page works offline and
under the viewer's Content-Security-Policy (:mod:`judge.api.security_headers`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import Request, Response, get
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Redirect, Template
from litestar.router import Router
from litestar.template.config import TemplateConfig

from judge.api.problems import handle_exception
from judge.api.ui import batch_pages, calibration_pages, runs_pages, session, session_pages

HERE = Path(__file__).parent
TEMPLATES = TemplateConfig(directory=HERE / "templates", engine=JinjaTemplateEngine)
#: the viewer's one asset, read once (a route of its own: no file path comes from a request)
STYLESHEET = (HERE / "static" / "viewer.css").read_text(encoding="utf-8")


@get("/ui/static/viewer.css", opt=session.PUBLIC, include_in_schema=False)
async def stylesheet() -> Response[str]:
    return Response(
        STYLESHEET,
        media_type="text/css; charset=utf-8",
        headers={"Cache-Control": "public, max-age=3600"},
    )


def ui_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """An error as a page: no session -> the login page; otherwise the API's problem (the
    same status and field, never more detail) rendered for a person."""
    if isinstance(exc, session.LoginRequired):
        return Redirect("/ui/login", status_code=303)
    if isinstance(exc, session.ScopeMissing):
        detail = f"this key lacks the {exc.scope!r} scope this page needs"
        problem: dict[str, Any] = {"status": 403, "detail": detail}
    else:
        answer = handle_exception(request, exc)
        problem = dict(answer.content)
    status = int(problem.get("status", 500))
    return Template("error.html", context={"problem": problem}, status_code=status)


def ui_router() -> Router:
    """The viewer's pages: public to the API's bearer guard, authenticated by their own
    session guard (:func:`judge.api.ui.session.ui_guard`)."""
    return Router(
        "/",
        route_handlers=[
            session.login_page,
            session.login,
            session.logout,
            runs_pages.home,
            runs_pages.runs_page,
            runs_pages.drift_page,
            batch_pages.batch_page,
            batch_pages.batch_csv,
            batch_pages.item_page,
            calibration_pages.calibration_page,
            calibration_pages.calibration_report,
            session_pages.session_page,
            stylesheet,
        ],
        guards=[session.ui_guard],
        opt={"public": True},
        exception_handlers={Exception: ui_error},
        include_in_schema=False,
    )
