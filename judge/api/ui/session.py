"""The viewer's login: an API key entered once, kept for the browser session in an HttpOnly,
SameSite=Strict cookie limited to ``/ui`` (no script can read it, no other site can send it).
Each page is then authenticated with the key in the cookie, exactly as the API authenticates
a bearer key: the same key cache, scopes and failure limit, and the same keyless rule."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response, get, post
from litestar.connection import ASGIConnection
from litestar.enums import RequestEncodingType
from litestar.handlers.base import BaseRouteHandler
from litestar.params import Body
from litestar.response import Redirect, Template
from pydantic import BaseModel, Field

from judge.api.auth import keys_required_for
from judge.domain.principal import ADMIN, ANONYMOUS, Principal

COOKIE = "judge_ui_key"
#: pages a caller without a session may open
PUBLIC = {"ui_public": True}


class LoginRequired(Exception):
    """No valid key in the session: the page answers with the login page."""


class ScopeMissing(Exception):
    """The session's key lacks the page's scope."""

    def __init__(self, scope: str) -> None:
        super().__init__(scope)
        self.scope = scope


async def ui_guard(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> None:
    """Authenticate the page with the session's key (the API's keyless rule without one)."""
    if handler.opt.get("ui_public"):
        return
    state = connection.app.state.api
    token = connection.cookies.get(COOKIE, "")
    if not token:
        if await keys_required_for(connection, state):
            raise LoginRequired
        connection.state.principal = ANONYMOUS
        return
    key = await state.keys.authenticate(token)
    if key is None:  # revoked since the login
        raise LoginRequired
    connection.state.principal = Principal(key_id=key.id, scopes=key.scopes)
    await state.quotas.check_rate(key.id)


def viewer(request: Request[Any, Any, Any], scope: str) -> Principal:
    """The session's principal, if its key has ``scope`` (keyless use has every scope)."""
    who: Principal = request.state.get("principal", ANONYMOUS)
    if who.key_id is not None and scope not in who.scopes and ADMIN not in who.scopes:
        raise ScopeMissing(scope)
    return who


class LoginForm(BaseModel):
    key: str = Field(default="", max_length=200)


@get("/ui/login", opt=PUBLIC, include_in_schema=False)
async def login_page() -> Template:
    return Template("login.html", context={"error": None})


def _client(request: Request[Any, Any, Any]) -> str:
    client = request.scope.get("client")
    return str(client[0]) if client else ""


@post("/ui/login", opt=PUBLIC, include_in_schema=False, status_code=303)
async def login(
    request: Request[Any, Any, Any],
    data: Annotated[LoginForm, Body(media_type=RequestEncodingType.URL_ENCODED)],
) -> Response[Any]:
    """Check the key; keep it in the session cookie and go to the runs, or say why not."""
    state = request.app.state.api
    client = _client(request)
    await state.quotas.check_auth_failures(client)
    key = await state.keys.authenticate(data.key.strip()) if data.key.strip() else None
    if key is None:
        await state.quotas.auth_failed(client)
        return Template(
            "login.html", context={"error": "That key is unknown or revoked."}, status_code=401
        )
    response = Redirect("/ui/runs", status_code=303)
    response.set_cookie(
        COOKIE,
        data.key.strip(),
        path="/ui",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@post("/ui/logout", opt=PUBLIC, include_in_schema=False, status_code=303)
async def logout() -> Redirect:
    response = Redirect("/ui/login", status_code=303)
    response.delete_cookie(COOKIE, path="/ui")
    return response
