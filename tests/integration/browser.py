"""Headless Chromium (Debian's ``chromium``) driven by Playwright, for tests that look at the
HTML the service serves the way a person would.

Every request to a host other than loopback is aborted and recorded, so a page that needs the
internet (a CDN script, a web font) fails its test instead of silently working on a connected
workstation. Console errors and uncaught page errors are recorded too. Screenshots are kept
under ``build/test-artifacts/`` (ignored by git) for a person to look at.

Playwright's async API runs inside :func:`asyncio.run`, so no event loop outlives a visit
(its sync API would leave one running and break later ``asyncio.run`` calls in the session).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import ConsoleMessage, Page, Request, Route, async_playwright

from tests.conftest import REPO
from tests.integration.conftest import skip_or_fail

ARTIFACTS = REPO / "build" / "test-artifacts"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: what a test does on the page; its return value comes back from :func:`visit`
Steps = Callable[[Page], Awaitable[Any]]


@dataclass
class Visit:
    """What a page did besides rendering, what the steps returned, and the screenshot."""

    result: Any = None
    screenshot: Path | None = None
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return (
            [f"console: {m}" for m in self.console_errors]
            + [f"page error: {m}" for m in self.page_errors]
            + [f"needs the internet: {u}" for u in self.external_requests]
        )


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        skip_or_fail("Debian's chromium is not installed (apt-get install chromium)")
    assert found is not None
    return found


def _is_local(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("data", "blob", "about") or (parts.hostname or "") in LOOPBACK


async def _visit(
    url: str, name: str, steps: Steps, width: int, height: int, headers: dict[str, str]
) -> Visit:
    visit = Visit()

    async def route(route: Route, request: Request) -> None:
        if _is_local(request.url):
            await route.continue_()
        else:
            visit.external_requests.append(request.url)
            await route.abort("internetdisconnected")

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            visit.console_errors.append(message.text)

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS
        )
        try:
            context = await browser.new_context(
                viewport={"width": width, "height": height}, extra_http_headers=headers
            )
            await context.route("**/*", route)
            page = await context.new_page()
            page.on("console", console)
            page.on("pageerror", lambda exc: visit.page_errors.append(str(exc)))
            await page.goto(url, wait_until="networkidle")
            visit.result = await steps(page)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            visit.screenshot = ARTIFACTS / f"{name}.png"
            await page.screenshot(path=str(visit.screenshot), full_page=True)
        finally:
            await browser.close()
    return visit


def visit(
    url: str,
    name: str,
    steps: Steps,
    *,
    width: int = 1366,
    height: int = 900,
    headers: dict[str, str] | None = None,
) -> Visit:
    """Open ``url`` in a laptop-sized viewport (offline but for loopback; ``headers`` such as
    an API key sent with every request), run ``steps`` on the page, and keep a full-page
    screenshot as ``build/test-artifacts/<name>.png``."""
    return asyncio.run(_visit(url, name, steps, width, height, headers or {}))
