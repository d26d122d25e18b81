"""Work a request no longer needs is cancelled when its client disconnects: a real Litestar
app called over ASGI, whose client goes away while the handler works."""

from __future__ import annotations

from typing import Any

import anyio
from litestar import Litestar, Request, get

from judge.api.disconnect import unless_disconnected
from judge.api.problems import handle_exception
from judge.errors import CalibrationNotFound


def app_with(outcome: dict[str, Any]) -> Litestar:
    @get("/slow")
    async def slow(request: Request[Any, Any, Any]) -> str:
        async def work() -> str:
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                outcome["cancelled"] = True
                raise
            return "never"

        return await unless_disconnected(request, work())

    @get("/quick")
    async def quick(request: Request[Any, Any, Any]) -> str:
        async def work() -> str:
            return "done"

        return await unless_disconnected(request, work())

    @get("/missing")
    async def missing(request: Request[Any, Any, Any]) -> str:
        async def work() -> str:
            raise CalibrationNotFound("0" * 32)

        return await unless_disconnected(request, work())

    return Litestar([slow, quick, missing], exception_handlers={Exception: handle_exception})


async def call(app: Litestar, path: str, disconnect_after: float | None) -> list[dict[str, Any]]:
    """One GET over ASGI; the client disconnects after ``disconnect_after`` seconds (None:
    it stays)."""
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": b"", "more_body": False}
        if disconnect_after is None:
            await anyio.sleep_forever()
        await anyio.sleep(disconnect_after)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"test")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "root_path": "",
        "state": {},
    }
    with anyio.fail_after(30):
        await app(scope, receive, send)  # type: ignore[arg-type]
    return sent


def test_the_work_is_cancelled_when_the_client_goes() -> None:
    outcome: dict[str, Any] = {}
    sent = anyio.run(call, app_with(outcome), "/slow", 0.05)
    assert outcome == {"cancelled": True}
    assert sent[0]["status"] == 499  # delivered to no one


def test_an_error_of_the_work_is_answered_as_itself() -> None:
    sent = anyio.run(call, app_with({}), "/missing", None)
    assert sent[0]["status"] == 404


def test_finished_work_is_answered() -> None:
    sent = anyio.run(call, app_with({}), "/quick", None)
    assert sent[0]["status"] == 200
    assert sent[1]["body"] == b"done"
